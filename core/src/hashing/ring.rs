//! Pekko's `ConsistentHash` ring, as used by `ConsistentHashingShardAllocationStrategy`.

use super::murmur::{string_hash, vnode_hash};

/// A consistent-hash ring over caller-indexed nodes.
///
/// Node order matters: Pekko inserts nodes one after another into a sorted map, so when two
/// virtual nodes share a position the later node keeps it. Callers pass nodes in Pekko's order
/// (the strategy sorts them by address first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ring {
    /// Ascending by position, one entry per distinct position.
    entries: Vec<(i32, u32)>,
}

impl Ring {
    /// Builds the ring: node `i` gets positions `vnode_hash(string_hash(nodes[i]), r)` for
    /// `r` in `1..=virtual_nodes`. Pekko rejects `virtual_nodes == 0`; here it gives an empty ring.
    ///
    /// # Panics
    /// If there are more than `u32::MAX` nodes.
    pub fn new<S: AsRef<str>>(nodes: &[S], virtual_nodes: u32) -> Ring {
        let n = u32::try_from(nodes.len()).expect("at most u32::MAX ring nodes");
        // Sort key: position (sign bit flipped so unsigned order is signed order), then the
        // complemented node index so the latest-inserted node comes first among equal positions
        // and survives `dedup`. Equal positions of one node (different replicas) are the same owner.
        let mut keys: Vec<u64> =
            Vec::with_capacity(nodes.len().saturating_mul(virtual_nodes as usize));
        for (index, node) in (0..n).zip(nodes) {
            let node_hash = string_hash(node.as_ref());
            for replica in 1..=virtual_nodes {
                let biased = (vnode_hash(node_hash, replica) as u32) ^ 0x8000_0000;
                keys.push(u64::from(biased) << 32 | u64::from(!index));
            }
        }
        keys.sort_unstable();
        keys.dedup_by_key(|k| *k >> 32);
        let entries = keys
            .into_iter()
            .map(|k| (((k >> 32) as u32 ^ 0x8000_0000) as i32, !(k as u32)))
            .collect();
        Ring { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Index into the constructor's `nodes` of the node owning `key`; `None` for an empty ring.
    pub fn node_for(&self, key: &str) -> Option<usize> {
        self.node_for_hash(string_hash(key))
    }

    /// Owner of the first position `>= hash` (signed), wrapping to the smallest position.
    pub fn node_for_hash(&self, hash: i32) -> Option<usize> {
        let at = self
            .entries
            .partition_point(|&(position, _)| position < hash);
        let (_, node) = self.entries.get(at).or_else(|| self.entries.first())?;
        Some(*node as usize)
    }

    /// Node indices of every position clockwise from `hash`'s owner, once around the ring
    /// (a node appears once per virtual node).
    pub fn clockwise(&self, hash: i32) -> impl Iterator<Item = usize> + '_ {
        let at = self
            .entries
            .partition_point(|&(position, _)| position < hash);
        let (wrapped, from_owner) = self.entries.split_at(at);
        from_owner
            .iter()
            .chain(wrapped)
            .map(|&(_, node)| node as usize)
    }

    /// `(position, node index)` pairs in ascending position order.
    pub fn positions(&self) -> impl Iterator<Item = (i32, usize)> + '_ {
        self.entries
            .iter()
            .map(|&(position, node)| (position, node as usize))
    }
}
