//! The boundary every native method runs inside: status codes, `ShardlineException`, panics,
//! and the per-thread slot that carries a Java callback's exception out of the native call
//! that triggered it.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use jni::objects::{GlobalRef, JObject, JThrowable, JValue};
use jni::JNIEnv;

/// The shared status table; Java's `Status` enum mirrors its codes.
pub use shardline_bind::Status;

/// Why a native call failed.
#[derive(Debug)]
pub enum Failure {
    /// Becomes a `ShardlineException` with this status.
    Status(Status, String),
    /// A JNI call raised a Java exception that is still pending; it propagates as is.
    Java,
}

impl Failure {
    pub fn new(status: Status, message: impl Into<String>) -> Failure {
        Failure::Status(status, message.into())
    }
    pub fn invalid_argument(message: impl Into<String>) -> Failure {
        Self::new(Status::InvalidArgument, message)
    }
    pub fn invalid_state(message: impl Into<String>) -> Failure {
        Self::new(Status::InvalidState, message)
    }
    pub fn null(what: &str) -> Failure {
        Self::new(Status::NullPointer, format!("{what} is null"))
    }
}

impl From<shardline_core::Error> for Failure {
    fn from(e: shardline_core::Error) -> Failure {
        shardline_bind::Failure::from(e).into()
    }
}

impl From<shardline_bind::Failure> for Failure {
    fn from(f: shardline_bind::Failure) -> Failure {
        Failure::Status(f.status, f.message)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Failure {
        match e {
            jni::errors::Error::JavaException => Failure::Java,
            other => Failure::new(Status::Internal, format!("JNI: {other}")),
        }
    }
}

pub type Result<T, E = Failure> = std::result::Result<T, E>;

thread_local! {
    /// The first exception a Java callback threw during the current native call (or the
    /// `ShardlineException` made for a callback that answered nonsense). Rust code in between
    /// only sees a core error; the boundary re-throws this object itself.
    static CALLBACK_EXCEPTION: RefCell<Option<GlobalRef>> = const { RefCell::new(None) };
}

/// Runs a native method's body. `default` is what the method returns to the JVM when it
/// throws (the JVM ignores it).
///
/// A native call made from inside a callback gets its own slot: the outer call's pending
/// exception is set aside and restored, so each exception surfaces from the call that
/// triggered it.
pub fn entry<'local, T>(
    env: &mut JNIEnv<'local>,
    default: T,
    body: impl FnOnce(&mut JNIEnv<'local>) -> Result<T>,
) -> T {
    let (result, thrown) = CALLBACK_EXCEPTION.with(|slot| {
        let outer = slot.take();
        let result = catch_unwind(AssertUnwindSafe(|| body(env)));
        (result, slot.replace(outer))
    });
    if let Some(original) = thrown {
        // The callback's own exception wins over whatever the core made of its failure.
        let _ = env.exception_clear();
        let _ = env.throw(JThrowable::from(
            env.new_local_ref(original.as_obj()).unwrap_or_default(),
        ));
        return default;
    }
    match result {
        Ok(Ok(value)) => value,
        Ok(Err(Failure::Java)) => {
            if !env.exception_check().unwrap_or(true) {
                throw(
                    env,
                    Status::Internal,
                    "a JNI call failed without an exception",
                );
            }
            default
        }
        Ok(Err(Failure::Status(status, message))) => {
            let _ = env.exception_clear();
            throw(env, status, &message);
            default
        }
        Err(payload) => {
            let _ = env.exception_clear();
            let f = shardline_bind::Failure::from_panic(&*payload);
            throw(env, f.status, &f.message);
            default
        }
    }
}

/// Makes (without throwing) `new ShardlineException(code, message)`.
pub fn new_exception<'local>(
    env: &mut JNIEnv<'local>,
    status: Status,
    message: &str,
) -> jni::errors::Result<JObject<'local>> {
    let message = env.new_string(message)?;
    env.new_object(
        "org/shardline/ShardlineException",
        "(ILjava/lang/String;)V",
        &[JValue::Int(status.code() as i32), JValue::Object(&message)],
    )
}

fn throw(env: &mut JNIEnv, status: Status, message: &str) {
    match new_exception(env, status, message) {
        Ok(e) => {
            let _ = env.throw(JThrowable::from(e));
        }
        // The class is missing or allocation failed: some exception is pending already.
        Err(_) => {
            if !env.exception_check().unwrap_or(true) {
                let _ = env.throw_new("java/lang/IllegalStateException", message);
            }
        }
    }
}

/// Keeps `throwable` for the boundary to re-throw, unless an earlier one is already kept.
fn keep(throwable: GlobalRef) {
    CALLBACK_EXCEPTION.with(|slot| {
        slot.borrow_mut().get_or_insert(throwable);
    });
}

/// Moves the pending Java exception (if any) into the callback slot and clears it, so Rust
/// can go on calling JNI. Returns whether there was one.
pub fn take_pending_exception(env: &mut JNIEnv) -> bool {
    if !env.exception_check().unwrap_or(false) {
        return false;
    }
    let Ok(t) = env.exception_occurred() else {
        return true;
    };
    let _ = env.exception_clear();
    if let Ok(global) = env.new_global_ref(&t) {
        keep(global);
    }
    let _ = env.delete_local_ref(t);
    true
}

/// Records that a callback failed without a Java exception of its own (it answered something
/// unusable): the call that triggered it throws `ShardlineException(status, message)`.
pub fn keep_failure(env: &mut JNIEnv, status: Status, message: &str) {
    let made = env
        .with_local_frame(4, |env| -> jni::errors::Result<Option<GlobalRef>> {
            let e = new_exception(env, status, message)?;
            Ok(Some(env.new_global_ref(e)?))
        })
        .ok()
        .flatten();
    match made {
        Some(global) => keep(global),
        None => {
            take_pending_exception(env);
        }
    }
}
