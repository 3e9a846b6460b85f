//! shardline-core: the placement brain for sharded actor systems.
//!
//! Everything here is sans-IO: no threads, no sleeping, no clock reads. Hosts feed inputs
//! (messages, membership, time) and carry out the outputs.

#[path = "model/address.rs"]
pub mod address;
#[path = "model/allocation.rs"]
pub mod allocation;
#[path = "model/cluster.rs"]
pub mod cluster;
#[path = "decide.rs"]
pub mod conformance;
pub mod coordinator;
#[path = "host/driver.rs"]
pub mod driver;
pub mod error;
pub mod hashing;
#[path = "jvm/sort.rs"]
pub mod javasort;
#[path = "jvm/string.rs"]
pub mod jvm;
#[path = "model/key.rs"]
mod key;
#[path = "host/lease.rs"]
pub mod lease;
#[path = "model/load.rs"]
pub mod load;
#[path = "protocol/mod.rs"]
pub mod protocol;
pub mod region;
pub mod replay;
pub mod sim;
#[path = "workerid/snowflake.rs"]
pub mod snowflake;
#[path = "protocol/json.rs"]
pub mod step_json;
#[path = "host/store.rs"]
pub mod store;
pub mod strategy;
#[path = "model/timers.rs"]
mod timers;
#[path = "model/version.rs"]
pub mod version;
pub mod workerid;

pub use error::{Error, ErrorKind, Result};

/// Crate version, as `shardline/<semver>`.
pub const VERSION: &str = concat!("shardline/", env!("CARGO_PKG_VERSION"));
