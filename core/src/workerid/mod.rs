//! Worker-id reservation (workerid-lease.md §1, §4, §6): each live instance holds one id in
//! `0 .. 2^bits`, exclusively, for as long as its registry session lives and its local
//! deadline has not passed, and fences the Snowflake timestamps it may use so that the next
//! holder of the same id can never repeat one.
//!
//! * [`Registry`]: what a backend provides (exclusive create, compare-and-set, delete, list,
//!   keep-alive), one value per session; [`InMemoryRegistry`] is the embedded default, and
//!   `shardline-etcd` has the etcd one.
//! * [`Reserver`]: sans-IO reservation (lowest free id whose fence is behind the clock, conflict handling, jittered backoff,
//!   ambiguity resolution, exhaustion).
//! * [`Tenure`]: sans-IO holding (keep-alive, local deadline, timestamp budget, release).
//! * [`WorkerIdHolder`]: the two driven against a registry and a [`snowflake::Clock`].

mod holder;
mod memory;
mod policy;
mod record;
mod registry;
mod reserver;
pub mod snowflake;
mod tenure;

pub use holder::{reserve, HoldError, WorkerIdHolder};
pub use memory::{InMemoryRegistry, InMemorySession};
pub use policy::{Backoff, Policy};
pub use record::{decode, encode, Claim, Fence, Identity, Listing, Slot, Version};
pub use registry::{Created, Failure, Registry, RegistryError, RegistryResult};
pub use reserver::{
    Reply, Request, Reservation, ReserveConfig, ReserveError, ReserveStats, Reserver, Step,
};
pub use tenure::{LossReason, Tenure, TenureConfig, TenureRequest, TenureStep};
