//! The one status table: every binding reports a failure as one of these codes, under the
//! same name, for the same cause (C `shardline_status`, Python exception classes, Node
//! `err.code`, Java `Status`).

use shardline_core::ErrorKind;

/// Why a call failed. Values are never renumbered; new ones are only appended.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Ok = 0,
    InvalidArgument = 1,
    NullPointer = 2,
    InvalidState = 3,
    NoCandidates = 4,
    CallbackFailed = 5,
    ReentrantCall = 6,
    Panic = 7,
    Internal = 8,
}

impl Status {
    /// Every status, in code order.
    pub const ALL: [Status; 9] = [
        Status::Ok,
        Status::InvalidArgument,
        Status::NullPointer,
        Status::InvalidState,
        Status::NoCandidates,
        Status::CallbackFailed,
        Status::ReentrantCall,
        Status::Panic,
        Status::Internal,
    ];

    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<Status> {
        Self::ALL.into_iter().find(|s| s.code() == code)
    }

    /// The name every language uses ("INVALID_ARGUMENT"); C prefixes it with
    /// `SHARDLINE_STATUS_`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::InvalidArgument => "INVALID_ARGUMENT",
            Status::NullPointer => "NULL_POINTER",
            Status::InvalidState => "INVALID_STATE",
            Status::NoCandidates => "NO_CANDIDATES",
            Status::CallbackFailed => "CALLBACK_FAILED",
            Status::ReentrantCall => "REENTRANT_CALL",
            Status::Panic => "PANIC",
            Status::Internal => "INTERNAL",
        }
    }
}

impl From<ErrorKind> for Status {
    fn from(kind: ErrorKind) -> Status {
        match kind {
            ErrorKind::InvalidArgument => Status::InvalidArgument,
            ErrorKind::InvalidState => Status::InvalidState,
            ErrorKind::NoCandidates => Status::NoCandidates,
        }
    }
}

/// A failed call: the status it reports and the message naming what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: Status,
    pub message: String,
}

impl Failure {
    pub fn new(status: Status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }
    pub fn invalid_argument(message: impl Into<String>) -> Failure {
        Self::new(Status::InvalidArgument, message)
    }
    pub fn invalid_state(message: impl Into<String>) -> Failure {
        Self::new(Status::InvalidState, message)
    }
    pub fn callback_failed(message: impl Into<String>) -> Failure {
        Self::new(Status::CallbackFailed, message)
    }
    pub fn reentrant(message: impl Into<String>) -> Failure {
        Self::new(Status::ReentrantCall, message)
    }
    pub fn internal(message: impl Into<String>) -> Failure {
        Self::new(Status::Internal, message)
    }

    /// A panic caught at a boundary (a bug): PANIC with what it said, worded the same in
    /// every language.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Failure {
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        Self::new(Status::Panic, format!("shardline panicked (a bug): {what}"))
    }

    /// What the core sees of a failure it cannot carry itself (its errors have no
    /// callback or re-entry kinds); the binding reports the full failure to its caller.
    pub fn to_core(&self) -> shardline_core::Error {
        match self.status {
            Status::InvalidArgument => shardline_core::Error::invalid_argument(&*self.message),
            Status::NoCandidates => shardline_core::Error::no_candidates(&*self.message),
            _ => shardline_core::Error::invalid_state(&*self.message),
        }
    }
}

impl From<shardline_core::Error> for Failure {
    fn from(e: shardline_core::Error) -> Failure {
        Failure::new(e.kind().into(), e.message())
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_keeps_what_it_said() {
        let p = std::panic::catch_unwind(|| panic!("bad {}", 7)).unwrap_err();
        let f = Failure::from_panic(&*p);
        assert_eq!(f.status, Status::Panic);
        assert!(f.message.ends_with("bad 7"), "{}", f.message);
    }

    #[test]
    fn codes_round_trip_and_names_are_distinct() {
        for (i, s) in Status::ALL.into_iter().enumerate() {
            assert_eq!(s.code() as usize, i);
            assert_eq!(Status::from_code(s.code()), Some(s));
        }
        assert_eq!(Status::from_code(9), None);
        let names: std::collections::HashSet<_> = Status::ALL.map(Status::name).into();
        assert_eq!(names.len(), Status::ALL.len());
    }

    #[test]
    fn core_errors_keep_their_kind() {
        let f = Failure::from(shardline_core::Error::no_candidates("none"));
        assert_eq!(f.status, Status::NoCandidates);
        assert_eq!(f.to_core().kind(), ErrorKind::NoCandidates);
        assert_eq!(
            Failure::callback_failed("x").to_core().kind(),
            ErrorKind::InvalidState
        );
    }
}
