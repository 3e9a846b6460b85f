//! shardline-core: the placement brain for sharded actor systems.
//!
//! Everything here is sans-IO: no threads, no sleeping, no clock reads. Hosts feed inputs
//! (messages, membership, time) and carry out the outputs.

pub mod address;
pub mod allocation;
pub mod cluster;
pub mod conformance;
pub mod coordinator;
pub mod driver;
pub mod error;
pub mod hashing;
pub mod javasort;
pub mod jvm;
mod key;
pub mod lease;
pub mod load;
pub mod protocol;
pub mod region;
pub mod replay;
#[cfg(feature = "schema")]
pub mod schema;
pub mod sim;
pub mod snowflake;
pub mod step_json;
pub mod store;
pub mod strategy;
mod timers;
pub mod version;
pub mod workerid;

pub use error::{Error, ErrorKind, Result};

/// Crate version, as `shardline/<semver>`.
pub const VERSION: &str = concat!("shardline/", env!("CARGO_PKG_VERSION"));
