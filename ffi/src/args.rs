//! Turning what C passes in (pointers, strings, arrays) into Rust values, failing with a status
//! instead of crashing, and writing out-parameters.

use std::ffi::{c_char, CStr};
use std::ptr::NonNull;

use crate::boundary::{Failure, Result};

/// Strings up to this many bytes (shard, region and entity ids) are measured and checked in
/// one pass; longer ones, and any with a non-ASCII byte, take `strlen` and the full UTF-8 check.
const SHORT: usize = 64;

/// A NUL-terminated UTF-8 string parameter.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
#[inline]
pub unsafe fn str<'a>(p: *const c_char, param: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Failure::null(param));
    }
    // One pass finds the NUL of a short string and ORs its bytes together: all below 0x80
    // means ASCII, which is valid UTF-8. This is most calls, and it saves a `strlen` call, a
    // second pass and a result passed back through memory.
    let bytes = p.cast::<u8>();
    let mut seen = 0u8;
    for n in 0..SHORT {
        // SAFETY: bytes 0..n are not NUL, so byte n is still inside the string.
        let b = unsafe { *bytes.add(n) };
        if b == 0 {
            if seen.is_ascii() {
                // SAFETY: `n` readable bytes before the NUL, all ASCII; they outlive `'a` per
                // the caller's contract.
                return Ok(unsafe {
                    std::str::from_utf8_unchecked(std::slice::from_raw_parts(bytes, n))
                });
            }
            break;
        }
        seen |= b;
    }
    // SAFETY: non-NULL and NUL-terminated per the caller's contract.
    utf8(unsafe { CStr::from_ptr(p) }, param)
}

/// Like [`str`], for parameters documented as nullable.
///
/// # Safety
/// As for [`str`].
#[inline]
pub unsafe fn opt_str<'a>(p: *const c_char, param: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { str(p, param) }.map(Some)
    }
}

fn utf8<'a>(s: &'a CStr, param: &str) -> Result<&'a str> {
    s.to_str().map_err(|e| {
        Failure::invalid_argument(format!(
            "{param} is not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// An array of `n` strings; NULL is accepted for an empty array.
///
/// # Safety
/// `p` is NULL or points to `n` pointers, each NULL or a NUL-terminated string outliving `'a`.
pub unsafe fn str_array<'a>(
    p: *const *const c_char,
    n: usize,
    param: &str,
) -> Result<Vec<&'a str>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(Failure::null(param));
    }
    // SAFETY: `n` readable pointers per the caller's contract.
    let ptrs = unsafe { std::slice::from_raw_parts(p, n) };
    ptrs.iter()
        .enumerate()
        // SAFETY: each element is NULL or a NUL-terminated string.
        .map(|(i, &s)| unsafe { str(s, &format!("{param}[{i}]")) })
        .collect()
}

/// A handle parameter, borrowed for the call.
///
/// # Safety
/// `p` is NULL or a live handle made by this library that outlives `'a`.
pub unsafe fn handle<'a, T>(p: *const T, param: &str) -> Result<&'a T> {
    // SAFETY: a live handle per the caller's contract.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(param))
}

/// Gives a new handle to C; it comes back through [`free`].
pub fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Takes back a handle made by [`into_handle`], unless NULL.
///
/// # Safety
/// `p` is NULL or a handle from [`into_handle`] that is not used afterwards.
pub unsafe fn free<T>(p: *mut T) -> Option<Box<T>> {
    // SAFETY: ownership returns from C exactly once per the caller's contract.
    (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
}

/// An out-parameter checked for NULL before any work is done, written only at the end so that
/// a failed call leaves it untouched. Writes never read the old value, which may be garbage.
pub struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    pub fn new(p: *mut T, param: &str) -> Result<Out<T>> {
        NonNull::new(p).map(Out).ok_or_else(|| Failure::null(param))
    }

    pub fn nullable(p: *mut T) -> Option<Out<T>> {
        NonNull::new(p).map(Out)
    }

    /// # Safety
    /// The pointer given to [`Out::new`] is valid for a write of `T`.
    pub unsafe fn write(self, value: T) {
        // SAFETY: caller's contract; `write` does not drop the old contents.
        unsafe { self.0.as_ptr().write(value) }
    }
}
