//! Calling Java from inside the core (custom strategies, drivers' host objects).
//!
//! The core's traits have no `JNIEnv` parameter, so a callback fetches the env of the current
//! thread: callbacks only ever run during a native call, on the thread that made it, which is
//! attached. Each callback runs in its own local-reference frame so that loops in the core
//! (one `send` per output, one `deliver` per buffered message) never fill the thread's local
//! reference table.

use jni::objects::{GlobalRef, JObject};
use jni::JNIEnv;

use crate::boundary::{keep_failure, take_pending_exception, Status};
use crate::vm;

/// Local references a callback may create before its frame is popped; JNI grows the frame
/// past this when needed, it is only a hint.
const FRAME: i32 = 32;

/// The class holding the static bridge methods between the core and user objects.
pub const BRIDGE: &str = "org/shardline/Callbacks";

/// What a callback gives back to Rust when it cannot answer.
pub enum Refusal {
    /// The Java code threw (the exception is kept for the boundary).
    Threw,
    /// It answered something unusable; the message says what.
    Invalid(String),
}

impl From<crate::boundary::Failure> for Refusal {
    fn from(f: crate::boundary::Failure) -> Refusal {
        match f {
            crate::boundary::Failure::Java => Refusal::Threw,
            crate::boundary::Failure::Status(_, m) => Refusal::Invalid(m),
        }
    }
}

impl From<jni::errors::Error> for Refusal {
    fn from(e: jni::errors::Error) -> Refusal {
        match e {
            jni::errors::Error::JavaException => Refusal::Threw,
            other => Refusal::Invalid(format!("JNI: {other}")),
        }
    }
}

/// Runs `f` with this thread's env inside a fresh local frame. On failure the Java exception
/// (or a `ShardlineException(CALLBACK_FAILED)` naming `what`) is kept for the boundary and a
/// core error is returned, so the core unwinds its decision as for any failed callback.
pub fn call<R>(
    what: &str,
    f: impl FnOnce(&mut JNIEnv) -> Result<R, Refusal>,
) -> shardline_core::Result<R> {
    let failed = |why: &str| shardline_core::Error::invalid_state(format!("{what}: {why}"));
    let mut env = vm()
        .get_env()
        .map_err(|e| failed(&format!("no JNI env on this thread ({e})")))?;
    let result = env.with_local_frame(
        FRAME,
        |env| -> Result<Result<R, Refusal>, jni::errors::Error> { Ok(f(env)) },
    );
    let refusal = match result {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(r)) => r,
        Err(e) => Refusal::from(e),
    };
    match refusal {
        Refusal::Threw => {
            if !take_pending_exception(&mut env) {
                keep_failure(&mut env, Status::CallbackFailed, &format!("{what} failed"));
            }
            Err(failed("the Java callback threw"))
        }
        Refusal::Invalid(message) => {
            take_pending_exception(&mut env);
            let message = format!("{what}: {message}");
            keep_failure(&mut env, Status::CallbackFailed, &message);
            Err(shardline_core::Error::invalid_state(message))
        }
    }
}

/// A user object the core calls back, kept alive by a global reference.
pub struct JavaObject {
    pub obj: GlobalRef,
}

impl JavaObject {
    pub fn new(env: &mut JNIEnv, obj: &JObject, what: &str) -> crate::boundary::Result<JavaObject> {
        if obj.is_null() {
            return Err(crate::boundary::Failure::null(what));
        }
        Ok(JavaObject {
            obj: env.new_global_ref(obj)?,
        })
    }
}
