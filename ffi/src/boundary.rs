//! The panic boundary every export runs inside, and the per-thread last error it maintains.

use std::cell::RefCell;
use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::args::Out;
use crate::status::shardline_status;

/// Why a call failed: the status it returns and the message `shardline_last_error_message`
/// then reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: shardline_status,
    pub message: String,
}

impl Failure {
    pub fn new(status: shardline_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }
    pub fn invalid_argument(message: impl Into<String>) -> Failure {
        Self::new(shardline_status::InvalidArgument, message)
    }
    pub fn invalid_state(message: impl Into<String>) -> Failure {
        Self::new(shardline_status::InvalidState, message)
    }
    pub fn reentrant(message: impl Into<String>) -> Failure {
        Self::new(shardline_status::ReentrantCall, message)
    }
    pub fn internal(message: impl Into<String>) -> Failure {
        Self::new(shardline_status::Internal, message)
    }
    pub fn null(param: &str) -> Failure {
        Self::new(shardline_status::NullPointer, format!("{param} is NULL"))
    }
}

impl From<shardline_core::Error> for Failure {
    fn from(e: shardline_core::Error) -> Self {
        shardline_bind::Failure::from(e).into()
    }
}

impl From<shardline_bind::Failure> for Failure {
    fn from(f: shardline_bind::Failure) -> Self {
        Failure::new(f.status.into(), f.message)
    }
}

impl From<Failure> for shardline_bind::Failure {
    fn from(f: Failure) -> Self {
        shardline_bind::Failure::new(f.status.into(), f.message)
    }
}

pub type Result<T, E = Failure> = std::result::Result<T, E>;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_last_error(message: &str) {
    LAST_ERROR.with(|m| {
        let mut m = m.borrow_mut();
        m.clear();
        m.push_str(message);
    });
}

/// Runs the body of a fallible export: clears the last error, catches panics, and turns a
/// [`Failure`] into its status plus last-error message.
///
/// The last error is cleared again on success because a callback may have made failing calls
/// of its own during this one; after any call the message belongs to that call.
pub fn guard(body: impl FnOnce() -> Result<()>) -> shardline_status {
    set_last_error("");
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            set_last_error("");
            shardline_status::Ok
        }
        Ok(Err(f)) => {
            set_last_error(&f.message);
            f.status
        }
        Err(payload) => {
            set_last_error(&shardline_bind::Failure::from_panic(&*payload).message);
            shardline_status::Panic
        }
    }
}

/// Runs the body of an export that cannot fail (frees, accessors returning a plain value):
/// a panic yields `fallback`, and the last error is left as the previous call set it.
pub fn infallible<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// Copies the calling thread's last error message into a caller buffer.
///
/// @param buf destination; may be NULL only when `len` is 0 (to ask for the length).
/// @param len size of `buf` in bytes. At most `len - 1` bytes of the message are copied, cut
///        at a UTF-8 character boundary, followed by a NUL.
/// @param out_n nullable; receives the full length of the message in bytes, without the NUL
///        (so the copy was truncated when `*out_n >= len`). 0 means the last call succeeded.
/// @return SHARDLINE_STATUS_OK, or SHARDLINE_STATUS_NULL_POINTER when `buf` is NULL and `len`
///         is not 0.
///
/// Ownership: nothing is allocated; `buf` stays the caller's.
/// Thread safety: callable from any thread; reads that thread's message. Reading does not clear
/// the message, and this function never changes it.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes; `out_n`, when not NULL, must be valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn shardline_last_error_message(
    buf: *mut c_char,
    len: usize,
    out_n: *mut usize,
) -> shardline_status {
    infallible(shardline_status::Panic, || {
        if buf.is_null() && len > 0 {
            return shardline_status::NullPointer;
        }
        LAST_ERROR.with(|m| {
            let m = m.borrow();
            if len > 0 {
                let mut n = m.len().min(len - 1);
                while !m.is_char_boundary(n) {
                    n -= 1;
                }
                // SAFETY: the caller gives `len` writable bytes at `buf`; n + 1 <= len.
                unsafe {
                    std::ptr::copy_nonoverlapping(m.as_ptr(), buf.cast::<u8>(), n);
                    *buf.add(n) = 0;
                }
            }
            if let Some(out) = Out::nullable(out_n) {
                // SAFETY: the caller gives a writable `size_t`.
                unsafe { out.write(m.len()) };
            }
        });
        shardline_status::Ok
    })
}
