//! shardline-core: the placement brain for sharded actor systems.
//!
//! Everything here is sans-IO: no threads, no sleeping, no clock reads. Hosts feed inputs
//! (messages, membership, time) and carry out the outputs.
//!
//! The modules, lowest layer first (a module uses only modules in layers below its own;
//! `tests/architecture.rs` enforces it):
//! * [`jvm`]: the JVM's `String` hash and order and its sort, which placement reproduces;
//! * [`hashing`]: the entity, shard and ring hashes of Pekko and actor-ts;
//! * [`model`]: what placement reasons about: addresses, members, versions, loads, and the
//!   allocation state a strategy reads;
//! * [`strategy`]: the allocation strategies; [`protocol`]: the messages between regions and
//!   the coordinator, with the JSON forms hosts read and write; [`workerid`]: worker-id
//!   reservation and the Snowflake ids it fences;
//! * [`coordinator`] and [`region`]: the sans-IO state machines; [`decide`]: a conformance
//!   vector's decision;
//! * [`replay`]: recorded steps and running them again;
//! * [`host`]: what a host provides (transport, clock, lease, store, entities), in-memory
//!   backends, and the drivers that run a machine through those contracts;
//! * `sim` (feature `sim`): the deterministic cluster simulator.

pub mod coordinator;
pub mod decide;
mod error;
pub mod hashing;
pub mod host;
pub mod jvm;
pub mod metrics;
pub mod model;
pub mod protocol;
pub mod region;
pub mod replay;
#[cfg(feature = "schema")]
pub mod schema;
#[cfg(feature = "sim")]
pub mod sim;
pub mod strategy;
pub mod workerid;

pub use error::{Error, ErrorKind, Result};

/// Crate version, as `shardline/<semver>`.
pub const VERSION: &str = concat!("shardline/", env!("CARGO_PKG_VERSION"));
