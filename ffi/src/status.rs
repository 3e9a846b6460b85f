//! `shardline_status`: the result code of every fallible call, the C spelling of the
//! shared status table (`shardline_bind::Status`).

use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

use shardline_bind::Status;
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
    /// A callback of a custom strategy returned a status other than SHARDLINE_STATUS_OK, or
    /// returned OK without deciding.
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
    pub fn from_code(code: shardline_status_code) -> Option<shardline_status> {
        Status::from_code(code).map(shardline_status::from)
    }
}

impl From<Status> for shardline_status {
    fn from(s: Status) -> shardline_status {
        match s {
            Status::Ok => shardline_status::Ok,
            Status::InvalidArgument => shardline_status::InvalidArgument,
            Status::NullPointer => shardline_status::NullPointer,
            Status::InvalidState => shardline_status::InvalidState,
            Status::NoCandidates => shardline_status::NoCandidates,
            Status::CallbackFailed => shardline_status::CallbackFailed,
            Status::ReentrantCall => shardline_status::ReentrantCall,
            Status::Panic => shardline_status::Panic,
            Status::Internal => shardline_status::Internal,
        }
    }
}

impl From<shardline_status> for Status {
    fn from(s: shardline_status) -> Status {
        // Same values by construction (the test below checks every one).
        Status::from_code(s as u32).unwrap_or(Status::Internal)
    }
}

/// The C names ("SHARDLINE_STATUS_NULL_POINTER"), made once from the shared table.
fn c_names() -> &'static [CString] {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    NAMES.get_or_init(|| {
        Status::ALL
            .iter()
            .map(|s| CString::new(format!("SHARDLINE_STATUS_{}", s.name())).unwrap_or_default())
            .collect()
    })
}

fn c_name(code: shardline_status_code) -> Option<&'static CStr> {
    Status::from_code(code).map(|s| c_names()[s.code() as usize].as_c_str())
}

/// Name of a code as a string, for messages from C code that received an arbitrary value.
pub fn code_name(code: shardline_status_code) -> String {
    match Status::from_code(code) {
        Some(s) => format!("SHARDLINE_STATUS_{}", s.name()),
        None => format!("unknown status {code}"),
    }
}

impl From<ErrorKind> for shardline_status {
    fn from(kind: ErrorKind) -> Self {
        Status::from(kind).into()
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
        c_name(status)
            .unwrap_or(c"SHARDLINE_STATUS_UNKNOWN")
            .as_ptr()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_enum_is_the_shared_table() {
        for s in Status::ALL {
            assert_eq!(shardline_status::from(s) as u32, s.code());
            assert_eq!(Status::from(shardline_status::from(s)), s);
        }
    }
}
