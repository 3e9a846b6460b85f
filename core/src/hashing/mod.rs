//! Bit-exact hash functions of the systems shardline interoperates with.
//!
//! Placement must agree with a running Pekko/Akka or actor-ts cluster, so each function
//! reproduces its original's integer arithmetic exactly, quirks included.

mod entity;
mod murmur;
mod ring;

pub use entity::{actor_ts_shard_id, pekko_shard_id, pekko_shard_number};
pub use murmur::{string_hash, vnode_hash};
pub use ring::Ring;
