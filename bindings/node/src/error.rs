//! Errors and the boundary every exported call runs inside.
//!
//! Errors thrown to JavaScript are `Error` objects whose `code` is the C ABI's status name
//! (`INVALID_ARGUMENT`, ...). A value thrown by a JavaScript callback is caught, kept, and
//! thrown again, unchanged, when the native call that ran the callback returns: the core keeps
//! going after a failed callback (its state must match what was already done), so the
//! exception surfaces only once the call is complete.
//!
//! Callbacks find their JavaScript objects through a stack of frames, one per native call in
//! progress on this thread: the native object under way pushes the object holding its
//! callbacks, and the adapters the core calls read the top frame. No JavaScript value is
//! referenced from Rust between calls, so a closed or forgotten object keeps nothing alive.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::{sys, Env, Status};
use shardline_bind::call_frames::CallFrames;
use shardline_bind::Failure;

use crate::js::{CallError, Js, V};

/// The shared status table; `err.code` is its name.
pub type Code = shardline_bind::Status;

pub enum Fail {
    Code(Failure),
    /// A value thrown by a JavaScript callback, referenced until it is thrown again.
    Threw(sys::napi_ref),
}

pub type R<T> = Result<T, Fail>;

impl Fail {
    pub fn new(code: Code, message: impl Into<String>) -> Fail {
        Fail::Code(Failure::new(code, message))
    }
    pub fn invalid(message: impl Into<String>) -> Fail {
        Fail::new(Code::InvalidArgument, message)
    }
    pub fn state(message: impl Into<String>) -> Fail {
        Fail::new(Code::InvalidState, message)
    }
    pub fn closed(what: &str) -> Fail {
        Fail::state(format!("{what} is closed"))
    }

    /// A callback's answer that could not be used: the callback failed, whatever the reason.
    pub fn into_callback_failure(self) -> Fail {
        match self {
            Fail::Code(f) => Fail::new(Code::CallbackFailed, f.message),
            t => t,
        }
    }
}

impl From<shardline_core::Error> for Fail {
    fn from(e: shardline_core::Error) -> Fail {
        Fail::Code(e.into())
    }
}

impl From<napi::Error> for Fail {
    fn from(e: napi::Error) -> Fail {
        Fail::new(Code::Internal, e.reason)
    }
}

impl From<Failure> for Fail {
    fn from(f: Failure) -> Fail {
        Fail::Code(f)
    }
}

impl From<CallError> for Fail {
    fn from(e: CallError) -> Fail {
        match e {
            CallError::Threw(r) => Fail::Threw(r),
            CallError::Fail(f) => f,
        }
    }
}

thread_local! {
    /// The native calls in progress on this thread: each one's environment and the object
    /// holding its callbacks, and the first failure a callback had.
    static FRAMES: CallFrames<(sys::napi_env, Option<V>), Fail> = const { CallFrames::new() };
}

/// Runs one exported call: opens its frame, catches panics, and throws whichever failure
/// comes first (a callback's, then the call's own).
pub fn boundary<T>(env: &Env, holder: Option<V>, body: impl FnOnce(Js) -> R<T>) -> napi::Result<T> {
    let js = Js::new(env.raw());
    let depth = FRAMES.with(|f| f.open((js.env, holder)));
    let result = match catch_unwind(AssertUnwindSafe(|| body(js))) {
        Ok(r) => r,
        Err(p) => Err(Failure::from_panic(&*p).into()),
    };
    let fail = match (FRAMES.with(|f| f.close(depth)), result) {
        (Some(f), Err(e)) => {
            discard(js, e);
            f
        }
        (Some(f), Ok(_)) => f,
        (None, Err(e)) => e,
        (None, Ok(v)) => return Ok(v),
    };
    Err(raise(js, fail))
}

fn discard(js: Js, f: Fail) {
    if let Fail::Threw(r) = f {
        js.delete_ref(r);
    }
}

/// Throws `fail` into JavaScript; napi-rs sees the pending exception and leaves it as it is.
pub fn raise(js: Js, fail: Fail) -> napi::Error {
    match fail {
        Fail::Threw(r) => {
            if let Ok(v) = js.deref(r) {
                js.throw(v);
            }
            js.delete_ref(r);
        }
        Fail::Code(f) => {
            if let Ok(e) = js.error(f.status, &f.message) {
                js.throw(e);
            }
        }
    }
    napi::Error::new(Status::PendingException, String::new())
}

/// Records a callback failure in the frame of the call under way.
pub fn record(fail: Fail) {
    if let Some(((env, _), Fail::Threw(r))) = FRAMES.with(|f| f.record(fail)) {
        Js::new(env).delete_ref(r);
    }
}

/// Keeps `failure` for the call under way to throw (a failure kept earlier wins) and returns
/// what the core sees of it.
pub fn keep(failure: Failure) -> shardline_core::Error {
    let core = failure.to_core();
    record(failure.into());
    core
}

/// The environment and callback holder of the call under way, for the core's adapters.
pub fn current() -> Option<(Js, Option<V>)> {
    FRAMES.with(|f| f.current().map(|(env, holder)| (Js::new(env), holder)))
}

/// Runs `f` on the callback holder's `key` for the call under way, in its own handle scope.
pub fn with_callback<T>(key: &str, f: impl FnOnce(Js, V) -> R<T>) -> R<T> {
    let Some((js, holder)) = current() else {
        return Err(Fail::new(
            Code::Internal,
            "a callback outside a native call",
        ));
    };
    let Some(holder) = holder else {
        let message = format!("no {key} callback is registered");
        return Err(Fail::new(Code::Internal, message));
    };
    js.scoped(|| f(js, js.get(holder, key)?))
}

/// [`with_callback`], with any failure recorded for the call to rethrow; `None` when it
/// failed.
pub fn callback<T>(role: &str, f: impl FnOnce(Js, V) -> R<T>) -> Option<T> {
    with_callback(role, f).map_err(record).ok()
}
