//! Entity id -> shard id, and the hash functions placement must agree on bit for bit.

use pyo3::prelude::*;
use shardline_core::hashing::{self, Ring};
use shardline_core::jvm;

use crate::errors::OrRaise;

/// Pekko `HashCodeMessageExtractor`: `abs(entityId.hashCode % n)` as a decimal string.
#[pyfunction]
pub fn pekko_shard_id(entity_id: &str, number_of_shards: i32) -> PyResult<String> {
    hashing::pekko_shard_id(entity_id, number_of_shards).or_raise()
}

/// actor-ts `hashShardId`: `abs(fnv1a32(entityId)) % n` over UTF-16 units.
#[pyfunction]
pub fn actor_ts_shard_id(entity_id: &str, num_shards: u32) -> PyResult<u32> {
    hashing::actor_ts_shard_id(entity_id, num_shards).or_raise()
}

/// Pekko `MurmurHash.stringHash` (signed 32-bit).
#[pyfunction]
pub fn murmur_string_hash(s: &str) -> i32 {
    hashing::string_hash(s)
}

/// Position of virtual node `replica` (1-based) of a node whose `murmur_string_hash` is
/// `node_hash` on Pekko's ring.
#[pyfunction]
pub fn murmur_vnode_hash(node_hash: i32, replica: u32) -> i32 {
    hashing::vnode_hash(node_hash, replica)
}

/// Java `String.hashCode` (signed 32-bit, over UTF-16 units).
#[pyfunction]
pub fn java_string_hash(s: &str) -> i32 {
    jvm::string_hash_code(s)
}

/// Pekko's `ConsistentHash` ring. Node order matters where virtual nodes collide (the later
/// node keeps the position); the consistent-hashing strategy passes nodes sorted by address.
#[pyclass(name = "ConsistentHashRing", module = "shardline._native", frozen)]
pub struct ConsistentHashRing {
    nodes: Vec<String>,
    ring: Ring,
}

#[pymethods]
impl ConsistentHashRing {
    #[new]
    #[pyo3(signature = (nodes, virtual_nodes_factor = 10))]
    fn new(nodes: Vec<String>, virtual_nodes_factor: u32) -> Self {
        let ring = Ring::new(&nodes, virtual_nodes_factor);
        ConsistentHashRing { nodes, ring }
    }

    /// The node owning `key`, or None for an empty ring.
    fn node_for(&self, key: &str) -> Option<&str> {
        self.ring.node_for(key).map(|i| self.nodes[i].as_str())
    }

    /// `(position, node)` pairs in ascending position order.
    fn positions(&self) -> Vec<(i32, &str)> {
        self.ring
            .positions()
            .map(|(p, i)| (p, self.nodes[i].as_str()))
            .collect()
    }

    #[getter]
    fn nodes(&self) -> Vec<String> {
        self.nodes.clone()
    }

    fn __len__(&self) -> usize {
        self.ring.positions().count()
    }
}
