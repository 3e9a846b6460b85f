//! `shardline_status`: the result code of every fallible call.

use std::ffi::{c_char, CStr};

use shardline_core::ErrorKind;

use crate::boundary::infallible;

/// Result of a fallible call. Values are never renumbered; new ones are only appended.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum shardline_status {
    /// Success; out-parameters were written.
    Ok = 0,
    /// A parameter, identifier or document is malformed or out of range (includes invalid
    /// UTF-8 and invalid JSON).
    InvalidArgument = 1,
    /// A required pointer (handle, string or out-parameter) was NULL.
    NullPointer = 2,
    /// The call is not valid in the object's current state (unknown region, shard already
    /// allocated, a callback's answer that does not fit the state, ...).
    InvalidState = 3,
    /// A strategy was asked to allocate while no candidate region exists.
    NoCandidates = 4,
    /// A callback of a custom strategy returned a status other than SHARDLINE_STATUS_OK.
    CallbackFailed = 5,
    /// A callback called back into the strategy running it, or tried to change the state
    /// being decided on, or a handle was used while one of its own calls was under way.
    ReentrantCall = 6,
    /// shardline panicked (a bug); the message says where. Free the handles involved.
    Panic = 7,
    /// An internal limit or invariant failed (a bug); the message says which.
    Internal = 8,
}

/// What C code hands back to Rust as a status (callback results, `shardline_status_str`):
/// any `uint32_t`, which is why it is not the Rust enum. The header calls it `shardline_status`.
pub type shardline_status_code = u32;

impl shardline_status {
    const ALL: [shardline_status; 9] = [
        shardline_status::Ok,
        shardline_status::InvalidArgument,
        shardline_status::NullPointer,
        shardline_status::InvalidState,
        shardline_status::NoCandidates,
        shardline_status::CallbackFailed,
        shardline_status::ReentrantCall,
        shardline_status::Panic,
        shardline_status::Internal,
    ];

    pub fn from_code(code: shardline_status_code) -> Option<shardline_status> {
        Self::ALL.into_iter().find(|s| *s as u32 == code)
    }

    pub fn name(self) -> &'static CStr {
        match self {
            shardline_status::Ok => c"SHARDLINE_STATUS_OK",
            shardline_status::InvalidArgument => c"SHARDLINE_STATUS_INVALID_ARGUMENT",
            shardline_status::NullPointer => c"SHARDLINE_STATUS_NULL_POINTER",
            shardline_status::InvalidState => c"SHARDLINE_STATUS_INVALID_STATE",
            shardline_status::NoCandidates => c"SHARDLINE_STATUS_NO_CANDIDATES",
            shardline_status::CallbackFailed => c"SHARDLINE_STATUS_CALLBACK_FAILED",
            shardline_status::ReentrantCall => c"SHARDLINE_STATUS_REENTRANT_CALL",
            shardline_status::Panic => c"SHARDLINE_STATUS_PANIC",
            shardline_status::Internal => c"SHARDLINE_STATUS_INTERNAL",
        }
    }
}

/// Name of a code as a string, for messages from C code that received an arbitrary value.
pub fn code_name(code: shardline_status_code) -> String {
    match shardline_status::from_code(code) {
        Some(s) => s.name().to_string_lossy().into_owned(),
        None => format!("unknown status {code}"),
    }
}

impl From<ErrorKind> for shardline_status {
    fn from(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::InvalidArgument => shardline_status::InvalidArgument,
            ErrorKind::InvalidState => shardline_status::InvalidState,
            ErrorKind::NoCandidates => shardline_status::NoCandidates,
        }
    }
}

/// The name of a status code, e.g. "SHARDLINE_STATUS_NULL_POINTER".
///
/// @param status any value; codes this library does not know give "SHARDLINE_STATUS_UNKNOWN".
/// @return a static NUL-terminated string (never NULL).
///
/// Ownership: static; never freed.
/// Thread safety: callable from any thread. Leaves the last error untouched.
#[no_mangle]
pub extern "C" fn shardline_status_str(status: shardline_status_code) -> *const c_char {
    infallible(c"SHARDLINE_STATUS_UNKNOWN".as_ptr(), || {
        shardline_status::from_code(status)
            .map_or(c"SHARDLINE_STATUS_UNKNOWN", shardline_status::name)
            .as_ptr()
    })
}
