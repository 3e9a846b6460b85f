//! Native objects owned by Java handles (`long` fields of `NativeHandle` subclasses).
//!
//! Each object sits behind a mutex taken with `try_lock`: a callback that calls back into the
//! object running it, or a second thread using it at the same time, gets REENTRANT_CALL
//! instead of a deadlock or a data race. The Java side never frees a handle while a call on
//! it is under way (NativeHandle counts calls in flight), and never passes 0.

use std::sync::{Mutex, TryLockError};

use jni::sys::jlong;

use crate::boundary::{Failure, Result, Status};

pub struct Handle<T> {
    what: &'static str,
    /// `None` once the value has been moved into another object (a strategy into a
    /// coordinator, a coordinator into a driver).
    inner: Mutex<Option<T>>,
}

impl<T> Handle<T> {
    pub fn into_raw(what: &'static str, value: T) -> jlong {
        Box::into_raw(Box::new(Handle {
            what,
            inner: Mutex::new(Some(value)),
        })) as jlong
    }

    /// # Safety
    /// `raw` is 0 or came from [`Handle::into_raw`] for the same `T` and is not freed.
    pub unsafe fn get<'a>(raw: jlong) -> Result<&'a Handle<T>> {
        let p = raw as *const Handle<T>;
        // SAFETY: per the contract, a non-null value is a live handle of this type.
        unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid_state("the handle is closed"))
    }

    /// # Safety
    /// As for [`Handle::get`]; no other call uses the handle now or later.
    pub unsafe fn free(raw: jlong) {
        if raw != 0 {
            // SAFETY: per the contract, this is the only owner left.
            drop(unsafe { Box::from_raw(raw as *mut Handle<T>) });
        }
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> Result<R>) -> Result<R> {
        let mut guard = match self.inner.try_lock() {
            Ok(g) => g,
            Err(TryLockError::WouldBlock) => {
                return Err(Failure::reentrant(format!(
                    "the {} is in use by a call in progress (a callback calling back into the \
                     object running it, or another thread using it at the same time)",
                    self.what
                )))
            }
            Err(TryLockError::Poisoned(_)) => {
                return Err(Failure::new(
                    Status::Panic,
                    format!("an earlier call on this {} panicked; close it", self.what),
                ))
            }
        };
        let value = guard.as_mut().ok_or_else(|| self.moved())?;
        f(value)
    }

    /// Moves the value out; the handle stays valid but every later call fails.
    pub fn take(&self) -> Result<T> {
        self.with(|_| Ok(()))?;
        let mut guard = self
            .inner
            .try_lock()
            .map_err(|_| Failure::reentrant(format!("the {} is in use", self.what)))?;
        guard.take().ok_or_else(|| self.moved())
    }

    fn moved(&self) -> Failure {
        Failure::invalid_state(format!(
            "this {} was handed to another object and can no longer be used",
            self.what
        ))
    }
}

/// Native methods that take a handle: look it up, run `f` on the value.
///
/// # Safety
/// As for [`Handle::get`].
pub unsafe fn with<T, R>(raw: jlong, f: impl FnOnce(&mut T) -> Result<R>) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { Handle::<T>::get(raw) }?.with(f)
}
