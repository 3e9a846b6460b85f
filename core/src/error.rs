//! One error type for the whole core. Every binding maps [`ErrorKind`] one-to-one onto its
//! native error model (C status codes, Python exception classes, `err.code` in Node, Java codes).

use std::fmt;

/// Broad class of an error; stable, and mirrored by `shardline_status` in the C ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A parameter, identifier or document is malformed or out of range.
    InvalidArgument,
    /// The call is not valid in the object's current state (e.g. unknown region, shard already allocated).
    InvalidState,
    /// An allocation was asked for while no candidate region exists.
    NoCandidates,
}

/// An error with a message that names what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }
    pub fn invalid_state(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidState, message)
    }
    pub fn no_candidates(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::NoCandidates, message)
    }
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Prefix the message with where the problem was found (a field path, a vector id).
    pub fn context(mut self, at: impl fmt::Display) -> Self {
        self.message = format!("{at}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
