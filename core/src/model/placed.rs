//! A region's shards in allocation order, as one flat array.
//!
//! Sequences only grow, so placing a shard appends and the array stays sorted by sequence:
//! a lookup is a binary search, and a removal only marks its entry, so neither moves the
//! others. Dead entries are dropped once they are half the array, which keeps a removal O(1)
//! amortised and a walk within twice the live count. One array instead of an ordered map
//! plus a separate ring-position list: each shard costs one entry, walks read contiguous
//! memory, and a removal touches one cache line or two instead of a tree's path.

use super::allocation::ShardId;
use super::load::LoadVec;
use crate::hashing::string_hash;

#[derive(Debug, Clone)]
struct Entry {
    seq: u64,
    /// Its position on Pekko's consistent-hash ring, worked out once when placed.
    ring: i32,
    /// `None` once removed.
    id: Option<ShardId>,
    load: LoadVec,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct PlacedShards {
    entries: Vec<Entry>,
    dead: usize,
}

impl PlacedShards {
    pub(crate) fn len(&self) -> usize {
        self.entries.len() - self.dead
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Places `id` with a sequence above every one placed before.
    pub(crate) fn push(&mut self, seq: u64, id: ShardId, load: LoadVec) {
        debug_assert!(self.entries.last().is_none_or(|e| e.seq < seq));
        let ring = string_hash(&id);
        self.entries.push(Entry {
            seq,
            ring,
            id: Some(id),
            load,
        });
    }

    fn find(&self, seq: u64) -> Option<usize> {
        let i = self.entries.binary_search_by_key(&seq, |e| e.seq).ok()?;
        self.entries[i].id.is_some().then_some(i)
    }

    pub(crate) fn get(&self, seq: u64) -> Option<&ShardId> {
        self.find(seq).and_then(|i| self.entries[i].id.as_ref())
    }

    pub(crate) fn load_mut(&mut self, seq: u64) -> Option<&mut LoadVec> {
        let i = self.find(seq)?;
        Some(&mut self.entries[i].load)
    }

    /// Takes the shard with sequence `seq` out, returning its load.
    pub(crate) fn remove(&mut self, seq: u64) -> Option<LoadVec> {
        let i = self.find(seq)?;
        let e = &mut self.entries[i];
        e.id = None;
        let load = std::mem::take(&mut e.load);
        self.dead += 1;
        if self.dead * 2 > self.entries.len() {
            self.entries.retain(|e| e.id.is_some());
            self.dead = 0;
        }
        Some(load)
    }

    fn live(&self) -> impl DoubleEndedIterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.id.is_some())
    }

    /// `(sequence, id, load)`, oldest first.
    pub(crate) fn iter(&self) -> Iter<'_> {
        Iter {
            inner: self.entries.iter(),
            left: self.len(),
        }
    }

    /// `(index, id, load)`, oldest first, where the index stays good for [`Self::at`] until
    /// the next change: a compact handle where a walk keeps many shards aside.
    pub(crate) fn indexed(&self) -> impl Iterator<Item = (u32, &ShardId, &LoadVec)> {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((i as u32, e.id.as_ref()?, &e.load)))
    }

    /// The live shard at `index` (from [`Self::indexed`]).
    pub(crate) fn at(&self, index: u32) -> Option<(&ShardId, &LoadVec)> {
        let e = self.entries.get(index as usize)?;
        Some((e.id.as_ref()?, &e.load))
    }

    /// `(sequence, ring position)`, oldest first.
    pub(crate) fn ring_positions(&self) -> impl Iterator<Item = (u64, i32)> + '_ {
        self.live().map(|e| (e.seq, e.ring))
    }

    pub(crate) fn into_ids(self) -> Vec<ShardId> {
        self.entries.into_iter().filter_map(|e| e.id).collect()
    }
}

/// [`PlacedShards::iter`]: skips removed entries and knows how many are left.
pub(crate) struct Iter<'a> {
    inner: std::slice::Iter<'a, Entry>,
    left: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (u64, &'a ShardId, &'a LoadVec);

    fn next(&mut self) -> Option<Self::Item> {
        let e = self.inner.by_ref().find(|e| e.id.is_some())?;
        self.left -= 1;
        Some((e.seq, e.id.as_ref()?, &e.load))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let e = self.inner.by_ref().rfind(|e| e.id.is_some())?;
        self.left -= 1;
        Some((e.seq, e.id.as_ref()?, &e.load))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn ids(p: &PlacedShards) -> Vec<(u64, String)> {
        p.iter().map(|(s, id, _)| (s, id.to_string())).collect()
    }

    #[test]
    fn removals_keep_order_lookups_and_counts_and_compact_without_losing_a_shard() {
        let mut p = PlacedShards::default();
        for s in 0..10u64 {
            p.push(s * 3, Arc::from(format!("s{s}")), LoadVec::UNIT);
        }
        assert_eq!(p.remove(9).map(|l| l.get(0)), Some(1.0));
        assert_eq!(p.remove(9), None, "removed twice");
        assert_eq!(p.remove(10), None, "never placed");
        assert_eq!(p.get(9), None);
        assert_eq!(p.get(12).map(|s| &**s), Some("s4"));
        assert_eq!(p.len(), 9);
        let it = p.iter();
        assert_eq!(it.len(), 9);
        assert_eq!(p.iter().next_back().map(|x| x.0), Some(27));
        // past half dead the array compacts; what is left is unchanged
        for s in [0, 3, 6, 12, 15] {
            assert!(p.remove(s).is_some());
        }
        assert_eq!(p.entries.len(), 4, "compacted");
        assert_eq!(
            ids(&p),
            vec![
                (18, "s6".into()),
                (21, "s7".into()),
                (24, "s8".into()),
                (27, "s9".into())
            ]
        );
        assert_eq!(p.get(21).map(|s| &**s), Some("s7"));
        let (i, id, _) = p.indexed().nth(1).expect("two live");
        assert_eq!((&**id, p.at(i).map(|x| &**x.0)), ("s7", Some("s7")));
        p.push(30, Arc::from("s10"), LoadVec::UNIT);
        let ring: Vec<(u64, i32)> = p.ring_positions().collect();
        assert_eq!(ring.len(), 5);
        assert_eq!(ring[4], (30, string_hash("s10")));
        assert_eq!(p.into_ids().len(), 5);
    }
}
