//! Native objects owned by Java handles (`long` fields of `NativeHandle` subclasses).
//!
//! Each object sits in the shared handle cell (`shardline_bind::handle`): a callback that calls
//! back into the object running it gets REENTRANT_CALL, and a second thread waits for the call
//! in progress (a thread already inside a call never waits, so there is no deadlock). The Java
//! side never frees a handle while a call on it is under way (NativeHandle counts calls in
//! flight), and never passes 0.

use jni::sys::jlong;
use shardline_bind::HandleCell;

use crate::boundary::{Failure, Result};

/// `None` once the value has been moved into another object (a strategy into a coordinator, a
/// coordinator into a driver).
pub struct Handle<T>(HandleCell<Option<T>>);

impl<T> Handle<T> {
    pub fn into_raw(what: &'static str, value: T) -> jlong {
        Box::into_raw(Box::new(Handle(HandleCell::new(what, Some(value))))) as jlong
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
        let mut held = self.0.hold()?;
        f(held.as_mut().ok_or_else(|| self.moved())?)
    }

    /// Moves the value out; the handle stays valid but every later call fails.
    pub fn take(&self) -> Result<T> {
        self.0.hold()?.take().ok_or_else(|| self.moved())
    }

    fn moved(&self) -> Failure {
        Failure::invalid_state(format!(
            "this {} was handed to another object and can no longer be used",
            self.0.what()
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

/// [`with`] for an `f` that cannot fail.
///
/// # Safety
/// As for [`Handle::get`].
pub unsafe fn run<T>(raw: jlong, f: impl FnOnce(&mut T)) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        with::<T, _>(raw, |t| {
            f(t);
            Ok(())
        })
    }
}

/// Runs `f` on the machine behind a step-API handle (`T`) or, when `driver` is set, on the one
/// a driver handle (`D`) runs, reached through `inner`: the queries both Java classes share.
///
/// # Safety
/// `raw` is a live handle of the kind `driver` names (see [`Handle::get`]).
pub unsafe fn query<T, D, R>(
    raw: jlong,
    driver: jni::sys::jboolean,
    inner: fn(&D) -> &T,
    f: impl FnOnce(&T) -> Result<R>,
) -> Result<R> {
    if driver != jni::sys::JNI_FALSE {
        // SAFETY: forwarded contract.
        unsafe { with::<D, _>(raw, |d| f(inner(d))) }
    } else {
        // SAFETY: forwarded contract.
        unsafe { with::<T, _>(raw, |t| f(t)) }
    }
}

/// Exports a Java class's `static native void nFree(long h)` for handles of `$t`.
macro_rules! free_native {
    ($name:ident, $t:ty) => {
        #[no_mangle]
        pub extern "system" fn $name<'l>(
            mut env: jni::JNIEnv<'l>,
            _: jni::objects::JClass<'l>,
            h: jni::sys::jlong,
        ) {
            $crate::boundary::entry(&mut env, (), |_| {
                // SAFETY: Java frees a handle once, after its last call.
                unsafe { $crate::handle::Handle::<$t>::free(h) };
                Ok(())
            })
        }
    };
}
pub(crate) use free_native;
