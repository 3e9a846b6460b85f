//! Errors: one Python exception class per C status code (defined in `shardline/errors.py`, so
//! they carry docs and `code` attributes), the panic boundary, and the slot that carries an
//! exception raised by a Python callback past the core back to the caller, unchanged.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use pyo3::prelude::*;
use shardline_bind::first_error::FirstError;
use shardline_bind::{Failure, Status};

pyo3::import_exception!(shardline.errors, InvalidArgumentError);
pyo3::import_exception!(shardline.errors, NullPointerError);
pyo3::import_exception!(shardline.errors, InvalidStateError);
pyo3::import_exception!(shardline.errors, NoCandidatesError);
pyo3::import_exception!(shardline.errors, CallbackFailedError);
pyo3::import_exception!(shardline.errors, ReentrantCallError);
pyo3::import_exception!(shardline.errors, PanicError);
pyo3::import_exception!(shardline.errors, InternalError);

pub fn core_err(e: shardline_core::Error) -> PyErr {
    failure_err(e.into())
}

/// The exception class of each shared status.
pub fn failure_err(f: Failure) -> PyErr {
    let msg = f.message;
    match f.status {
        Status::InvalidArgument => InvalidArgumentError::new_err(msg),
        Status::NullPointer => NullPointerError::new_err(msg),
        Status::InvalidState => InvalidStateError::new_err(msg),
        Status::NoCandidates => NoCandidatesError::new_err(msg),
        Status::CallbackFailed => CallbackFailedError::new_err(msg),
        Status::ReentrantCall => ReentrantCallError::new_err(msg),
        Status::Panic => PanicError::new_err(msg),
        Status::Ok | Status::Internal => InternalError::new_err(msg),
    }
}

pub fn invalid_argument(msg: impl Into<String>) -> PyErr {
    InvalidArgumentError::new_err(msg.into())
}

pub trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for shardline_core::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(core_err)
    }
}

/// Runs a method body so that a Rust panic becomes `PanicError` rather than pyo3's
/// `PanicException` (a `BaseException` that `except Exception` would not catch).
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(PanicError::new_err(Failure::from_panic(&*payload).message)))
}

/// The first exception a Python callback raised during the current call on one object
/// (`shardline_bind::first_error`), raised unchanged once the core call returns.
#[derive(Clone, Default)]
pub struct Raised(Arc<FirstError<PyErr>>);

impl Raised {
    /// Keeps the exception a callback raised (if it is the first) and returns the failure
    /// the shared adapters see instead.
    pub fn threw(&self, err: PyErr) -> Failure {
        let summary = Python::attach(|py| err.value(py).to_string());
        self.0.keep(|| err);
        Failure::callback_failed(format!("raised: {summary}"))
    }

    /// Keeps `failure` as the exception of its status (unless a callback's exception is kept
    /// already) and returns what the core should see.
    pub fn keep_failure(&self, failure: Failure) -> shardline_core::Error {
        let core = failure.to_core();
        self.0.keep(|| failure_err(failure));
        core
    }

    pub fn take(&self) -> Option<PyErr> {
        self.0.take()
    }

    /// The caller's view of a core result: a kept callback exception wins over whatever the
    /// core made of it.
    pub fn finish<T, E: Into<Failure>>(&self, r: Result<T, E>) -> PyResult<T> {
        match self.take() {
            Some(e) => Err(e),
            None => r.map_err(|e| failure_err(e.into())),
        }
    }
}

/// Wraps a bad return value of a callback (wrong type, unknown shard, ...).
pub fn callback_failed(msg: impl Into<String>) -> PyErr {
    CallbackFailedError::new_err(msg.into())
}
