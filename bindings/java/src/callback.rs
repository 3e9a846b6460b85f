//! Calling Java from inside the core (custom strategies, drivers' host objects).
//!
//! The core's traits have no `JNIEnv` parameter, so a callback fetches the env of the current
//! thread: callbacks only ever run during a native call, on the thread that made it, which is
//! attached. Each callback runs in its own local-reference frame so that loops in the core
//! (one `send` per output, one `deliver` per buffered message) never fill the thread's local
//! reference table.

use jni::objects::{GlobalRef, JObject};
use jni::JNIEnv;

use shardline_bind::Failure as BindFailure;

use crate::boundary::{keep_failure, take_pending_exception};
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

/// Runs `f` with this thread's env inside a fresh local frame. A Java exception it throws is
/// kept for the boundary (`boundary::entry` re-throws it) and the failure only says so.
pub fn attempt<R>(f: impl FnOnce(&mut JNIEnv) -> Result<R, Refusal>) -> Result<R, BindFailure> {
    let mut env = vm()
        .get_env()
        .map_err(|e| BindFailure::internal(format!("has no JNI env on this thread ({e})")))?;
    let result = env.with_local_frame(
        FRAME,
        |env| -> Result<Result<R, Refusal>, jni::errors::Error> { Ok(f(env)) },
    );
    let refusal = match result {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(r)) => r,
        Err(e) => Refusal::from(e),
    };
    take_pending_exception(&mut env);
    Err(BindFailure::callback_failed(match refusal {
        Refusal::Threw => "threw".to_owned(),
        Refusal::Invalid(message) => message,
    }))
}

/// Keeps `failure` for the boundary as a `ShardlineException` (unless a callback's exception
/// is kept already) and returns what the core sees.
pub fn keep(failure: BindFailure) -> shardline_core::Error {
    if let Ok(mut env) = vm().get_env() {
        keep_failure(&mut env, failure.status, &failure.message);
    }
    failure.to_core()
}

/// [`attempt`] for a callback the core cannot name itself: the failure is kept under `what`.
pub fn call<R>(
    what: &str,
    f: impl FnOnce(&mut JNIEnv) -> Result<R, Refusal>,
) -> shardline_core::Result<R> {
    attempt(f).map_err(|e| keep(BindFailure::new(e.status, format!("{what}: {}", e.message))))
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
