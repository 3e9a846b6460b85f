//! What a host provides to run the state machines, and the drivers that run them through it.
//!
//! The contracts: [`Transport`], [`Clock`], [`Lease`], [`Store`] and [`EntityHost`], each
//! with the in-memory backend tests and embedded hosts use. The drivers
//! ([`CoordinatorDriver`], [`RegionDriver`]) sit above the sans-IO machines: the machines
//! never call a host, so they stay replayable, and every IO contract lives here.

mod driver;
mod lease;
mod pipeline;
mod store;

pub use driver::{
    Clock, CoordinatorDriver, CoordinatorObserver, EntityHost, ManualClock, RegionDriver,
    RegionObserver, Transport,
};
pub use lease::{InMemoryLease, Lease};
pub use pipeline::{Completion, CoordinatorPipeline, Operation, Pending, Ticket};
pub use store::{InMemoryStore, Store, WriteOutcome};
