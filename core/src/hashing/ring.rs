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
    /// `buckets[b]`: the first entry whose position lies in bucket `b` or later, the buckets
    /// splitting the hash space evenly by its top bits. A lookup searches one bucket (about
    /// one entry) rather than the whole ring: rounds look up every shard, and a binary search
    /// over 10 000 positions per shard was most of a ring round after a join.
    buckets: Vec<u32>,
    /// Right shift from a biased position to its bucket.
    shift: u32,
}

/// Positions with the sign bit flipped, so unsigned order is Pekko's signed order.
fn biased(position: i32) -> u32 {
    (position as u32) ^ 0x8000_0000
}

/// Sort key of a ring entry: position (biased, so unsigned order is signed order), then the
/// complemented node index, so the latest-inserted node comes first among equal positions and
/// survives a `dedup`. Equal positions of one node (different replicas) are the same owner.
fn key(position: i32, node: u32) -> u64 {
    u64::from(biased(position)) << 32 | u64::from(!node)
}

/// The keys of node `index`'s virtual nodes.
fn node_keys(index: u32, node: &str, virtual_nodes: u32) -> impl Iterator<Item = u64> {
    let node_hash = string_hash(node);
    (1..=virtual_nodes).map(move |replica| key(vnode_hash(node_hash, replica), index))
}

impl Ring {
    /// Builds the ring: node `i` gets positions `vnode_hash(string_hash(nodes[i]), r)` for
    /// `r` in `1..=virtual_nodes`. Pekko rejects `virtual_nodes == 0`; here it gives an empty ring.
    ///
    /// # Panics
    /// If there are more than `u32::MAX` nodes.
    pub fn new<S: AsRef<str>>(nodes: &[S], virtual_nodes: u32) -> Ring {
        let n = u32::try_from(nodes.len()).expect("at most u32::MAX ring nodes");
        let mut keys: Vec<u64> =
            Vec::with_capacity(nodes.len().saturating_mul(virtual_nodes as usize));
        for (index, node) in (0..n).zip(nodes) {
            keys.extend(node_keys(index, node.as_ref(), virtual_nodes));
        }
        keys.sort_unstable();
        keys.dedup_by_key(|k| *k >> 32);
        Ring::from_keys(keys)
    }

    /// The ring of `nodes` when this is the ring of `before` (same virtual nodes) and `nodes`
    /// is `before` with one node inserted, as a join makes it: the new node's positions are
    /// merged in, O(positions) rather than hashing and sorting every node's again. `None` for
    /// any other change.
    pub fn with_one_more<S: AsRef<str>, T: AsRef<str>>(
        &self,
        before: &[S],
        nodes: &[T],
        virtual_nodes: u32,
    ) -> Option<Ring> {
        if nodes.len() != before.len() + 1 {
            return None;
        }
        let at = before
            .iter()
            .zip(nodes)
            .position(|(b, n)| b.as_ref() != n.as_ref())
            .unwrap_or(before.len());
        if before[at..]
            .iter()
            .zip(&nodes[at + 1..])
            .any(|(b, n)| b.as_ref() != n.as_ref())
        {
            return None;
        }
        let at = u32::try_from(at).ok()?;
        let mut joined: Vec<u64> =
            node_keys(at, nodes[at as usize].as_ref(), virtual_nodes).collect();
        joined.sort_unstable();
        joined.dedup_by_key(|k| *k >> 32);
        // The nodes after the new one move up an index; keys stay in position order.
        let old = self.entries.iter().map(|&(position, node)| {
            let node = if node >= at { node + 1 } else { node };
            key(position, node)
        });
        let mut keys = Vec::with_capacity(self.entries.len() + joined.len());
        let mut joined = joined.into_iter().peekable();
        for k in old {
            while let Some(&j) = joined.peek().filter(|&&j| j < k) {
                keys.push(j);
                joined.next();
            }
            keys.push(k);
        }
        keys.extend(joined);
        // Equal positions: the smaller key holds the larger index, the node Pekko added last.
        keys.dedup_by_key(|k| *k >> 32);
        Some(Ring::from_keys(keys))
    }

    /// The ring of sorted, position-unique keys.
    fn from_keys(keys: Vec<u64>) -> Ring {
        let entries: Vec<(i32, u32)> = keys
            .into_iter()
            .map(|k| (((k >> 32) as u32 ^ 0x8000_0000) as i32, !(k as u32)))
            .collect();
        // One to two buckets per position (at most 2^20 of them).
        let bits = entries
            .len()
            .next_power_of_two()
            .trailing_zeros()
            .clamp(1, 20);
        let shift = 32 - bits;
        let mut buckets = vec![entries.len() as u32; (1 << bits) + 1];
        let mut next = 0;
        for (i, &(position, _)) in entries.iter().enumerate() {
            let b = (biased(position) >> shift) as usize;
            if next <= b {
                buckets[next..=b].fill(i as u32);
                next = b + 1;
            }
        }
        Ring {
            entries,
            buckets,
            shift,
        }
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
        let at = self.first_at_or_after(hash);
        let (_, node) = self.entries.get(at).or_else(|| self.entries.first())?;
        Some(*node as usize)
    }

    /// Node indices of every position clockwise from `hash`'s owner, once around the ring
    /// (a node appears once per virtual node).
    pub fn clockwise(&self, hash: i32) -> impl Iterator<Item = usize> + '_ {
        let at = self.first_at_or_after(hash);
        let (wrapped, from_owner) = self.entries.split_at(at);
        from_owner
            .iter()
            .chain(wrapped)
            .map(|&(_, node)| node as usize)
    }

    /// Index of the first entry at or after `hash` (`entries.len()` when there is none).
    fn first_at_or_after(&self, hash: i32) -> usize {
        let b = (biased(hash) >> self.shift) as usize;
        match self.buckets.get(b..=b + 1) {
            Some(&[from, to]) => {
                let (from, to) = (from as usize, to as usize);
                from + self.entries[from..to].partition_point(|&(position, _)| position < hash)
            }
            // The empty default ring.
            _ => self.entries.len(),
        }
    }

    /// `(position, node index)` pairs in ascending position order.
    pub fn positions(&self) -> impl Iterator<Item = (i32, usize)> + '_ {
        self.entries
            .iter()
            .map(|&(position, node)| (position, node as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pekko's lookup: the first position at or after the hash over the whole ring, wrapping.
    fn by_search(ring: &Ring, hash: i32) -> Option<usize> {
        let at = ring.entries.partition_point(|&(p, _)| p < hash);
        ring.entries
            .get(at)
            .or_else(|| ring.entries.first())
            .map(|&(_, n)| n as usize)
    }

    proptest! {
        #[test]
        fn the_bucketed_lookup_finds_what_a_search_of_the_whole_ring_finds(
            nodes in 0usize..300,
            vnodes in 1u32..20,
            hashes in proptest::collection::vec(any::<i32>(), 64),
        ) {
            let names: Vec<String> = (0..nodes).map(|i| format!("pekko://s@10.0.0.{i}:2552")).collect();
            let ring = Ring::new(&names, vnodes);
            let edges = [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX - 1, i32::MAX];
            let at_positions = ring.entries.iter().flat_map(|&(p, _)| [p.wrapping_sub(1), p, p.wrapping_add(1)]);
            for h in hashes.into_iter().chain(edges).chain(at_positions) {
                prop_assert_eq!(ring.node_for_hash(h), by_search(&ring, h), "hash {}", h);
                prop_assert_eq!(ring.clockwise(h).next(), by_search(&ring, h));
            }
        }
    }

    proptest! {
        #[test]
        fn a_ring_grown_by_one_node_is_the_ring_built_afresh(
            nodes in proptest::collection::btree_set(0u32..5000, 0..200),
            joiner in 0u32..5000,
            vnodes in 1u32..50,
        ) {
            let name = |i: &u32| format!("pekko://s@10.0.{}.{}:2552", i / 250, i % 250);
            let before: Vec<String> = nodes.iter().map(name).collect();
            let mut after = nodes.clone();
            let joined = after.insert(joiner);
            let after: Vec<String> = after.iter().map(name).collect();
            let grown = Ring::new(&before, vnodes).with_one_more(&before, &after, vnodes);
            if joined {
                prop_assert_eq!(grown, Some(Ring::new(&after, vnodes)));
            } else {
                prop_assert_eq!(grown, None, "no node joined");
            }
            // Anything but one node inserted is not a join.
            if before.len() >= 2 {
                let mut swapped = before.clone();
                swapped.swap(0, 1);
                swapped.push(name(&9999));
                prop_assert_eq!(Ring::new(&before, vnodes).with_one_more(&before, &swapped, vnodes), None);
            }
        }
    }

    #[test]
    fn the_empty_ring_owns_nothing() {
        assert_eq!(Ring::default().node_for_hash(0), None);
        assert_eq!(Ring::new::<&str>(&[], 10).node_for_hash(i32::MAX), None);
    }
}
