//! The registry a host provides for worker-id reservation. One value is one session: claims
//! it creates live exactly as long as the session does (a ZooKeeper session, an etcd lease),
//! and end with it server-side.
//!
//! Exclusivity must come from the backend's own compare (etcd `create_revision == 0`,
//! ZooKeeper `create` failing with `NodeExists`), never from reading and then writing.

use std::fmt;

use super::record::{Claim, Fence, Listing, Slot, Version};

/// Outcome of an exclusive create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// The claim is ours and the fence was written at this version.
    Won(Version),
    /// Certainly not created; the slot as it is now.
    Lost(Slot),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The request may or may not have been applied (timeout, lost response).
    Ambiguous,
    /// The request was certainly not applied (could not connect, refused before sending).
    Unavailable,
    /// The backend holds something this library cannot read.
    Corrupt,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    pub failure: Failure,
    pub message: String,
}

impl RegistryError {
    pub fn ambiguous(message: impl Into<String>) -> RegistryError {
        RegistryError {
            failure: Failure::Ambiguous,
            message: message.into(),
        }
    }
    pub fn unavailable(message: impl Into<String>) -> RegistryError {
        RegistryError {
            failure: Failure::Unavailable,
            message: message.into(),
        }
    }
    pub fn corrupt(message: impl Into<String>) -> RegistryError {
        RegistryError {
            failure: Failure::Corrupt,
            message: message.into(),
        }
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RegistryError {}

pub type RegistryResult<T> = Result<T, RegistryError>;

pub trait Registry: Send {
    /// Every live claim and every fence, read at one point in time.
    fn list(&mut self) -> RegistryResult<Listing>;

    fn read(&mut self, id: u32) -> RegistryResult<Slot>;

    /// Atomically: if `id` has no live claim and its fence is still at `expect`, bind `claim`
    /// to this session and write `fence`.
    fn create_exclusive(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Created>;

    /// Atomically: if `claim` is still the live claim on `id` and the fence is still at
    /// `expect`, write `fence`. `Ok(None)`: refused (the claim is gone or the fence moved).
    fn compare_and_set(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Option<Version>>;

    /// Deletes `claim` from `id` if it is still there. `Ok(false)`: it was not.
    fn delete(&mut self, id: u32, claim: &Claim) -> RegistryResult<bool>;

    /// Extends the session. `Ok(Some(ttl_ms))`: extended by `ttl_ms` from when the server
    /// applied it; `Ok(None)`: the session has ended and its claims are gone.
    fn keep_alive(&mut self) -> RegistryResult<Option<u64>>;
}

impl<R: Registry + ?Sized> Registry for Box<R> {
    fn list(&mut self) -> RegistryResult<Listing> {
        (**self).list()
    }
    fn read(&mut self, id: u32) -> RegistryResult<Slot> {
        (**self).read(id)
    }
    fn create_exclusive(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Created> {
        (**self).create_exclusive(id, claim, fence, expect)
    }
    fn compare_and_set(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Option<Version>> {
        (**self).compare_and_set(id, claim, fence, expect)
    }
    fn delete(&mut self, id: u32, claim: &Claim) -> RegistryResult<bool> {
        (**self).delete(id, claim)
    }
    fn keep_alive(&mut self) -> RegistryResult<Option<u64>> {
        (**self).keep_alive()
    }
}
