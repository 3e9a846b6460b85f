//! Strings shardline hands to the caller (`char **` outputs) and their release.

use std::ffi::{c_char, CString};

use crate::boundary::{infallible, Failure, Result};

/// Copies `s` into a string the caller releases with `shardline_string_free`.
pub fn to_c(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| nul_byte(s))
}

/// `s`, refused as [`to_c`] refuses it, for a copy into a caller's buffer.
pub fn c_text(s: &str) -> Result<&str> {
    match s.as_bytes().contains(&0) {
        true => Err(nul_byte(s)),
        false => Ok(s),
    }
}

fn nul_byte(s: &str) -> Failure {
    Failure::internal(format!(
        "cannot return {s:?} as a C string: it contains a NUL byte"
    ))
}

/// Releases a string returned by shardline through a `char **` out-parameter.
///
/// @param s the string, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `s` must not be used afterwards. Only strings from
/// shardline may be passed, each once; never pass them to free().
/// Thread safety: callable from any thread. Leaves the last error untouched.
///
/// # Safety
/// `s` is NULL or a string returned by shardline that was not released yet.
#[no_mangle]
pub unsafe extern "C" fn shardline_string_free(s: *mut c_char) {
    infallible((), || {
        if !s.is_null() {
            // SAFETY: `s` came from CString::into_raw in this library, per the contract.
            drop(unsafe { CString::from_raw(s) });
        }
    })
}
