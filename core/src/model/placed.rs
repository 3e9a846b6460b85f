//! A region's shards in allocation order, in flat arrays.
//!
//! Sequences only grow, so placing a shard appends and the array stays sorted by sequence:
//! a lookup is a binary search, and a removal only marks its entry, so neither moves the
//! others. Dead entries are dropped once they are half the array, which keeps a removal O(1)
//! amortised and a walk within twice the live count. Flat arrays instead of an ordered map
//! plus a separate ring-position list: walks read contiguous memory, and a removal touches a
//! few cache lines instead of a tree's path.

use std::sync::OnceLock;

use super::allocation::ShardId;
use super::load::LoadVec;
use crate::hashing::string_hash;

/// Struct of arrays, one index per shard placed since the last compaction: a ring walk reads
/// only `seqs` and `rings`, a lookup binary-searches `seqs` alone.
#[derive(Debug, Clone, Default)]
pub(crate) struct PlacedShards {
    /// Allocation sequences, ascending, with [`DEAD`] set on removed entries (masked off when
    /// searching, so the order holds).
    seqs: Vec<u64>,
    /// Positions on Pekko's consistent-hash ring, worked out for every shard by the first
    /// ring walk and kept up from then on: only the hashing strategies walk the ring, so a
    /// state no such strategy reads neither hashes an id nor holds the column.
    rings: OnceLock<Vec<i32>>,
    /// `None` once removed.
    ids: Vec<Option<ShardId>>,
    /// Loads by index, up to the last one that is not [`LoadVec::UNIT`]; the rest weigh the
    /// unit load. Most shards never get another load (nothing is reported, or least-shard
    /// decides), so they cost nothing here.
    loads: Vec<LoadVec>,
    dead: usize,
}

const DEAD: u64 = 1 << 63;

/// What an index past the stored loads weighs.
static UNIT: LoadVec = LoadVec::UNIT;

impl PlacedShards {
    pub(crate) fn len(&self) -> usize {
        self.seqs.len() - self.dead
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Places `id` with a sequence above every one placed before.
    pub(crate) fn push(&mut self, seq: u64, id: ShardId, load: LoadVec) {
        debug_assert!(seq < DEAD && self.seqs.last().is_none_or(|&s| s & !DEAD < seq));
        if load != LoadVec::UNIT {
            // where loads are reported the column is usually full, and a resize to its own
            // length still costs a call
            if self.loads.len() < self.seqs.len() {
                self.loads.resize(self.seqs.len(), LoadVec::UNIT);
            }
            self.loads.push(load);
        }
        if let Some(rings) = self.rings.get_mut() {
            rings.push(string_hash(&id));
        }
        self.seqs.push(seq);
        self.ids.push(Some(id));
    }

    /// The index the next shard placed gets.
    pub(crate) fn next_index(&self) -> usize {
        self.seqs.len()
    }

    /// The index of the live shard with sequence `seq`, looked for at `hint` first.
    pub(crate) fn index_of(&self, seq: u64, hint: usize) -> Option<usize> {
        match self.seqs.get(hint) {
            Some(&s) if s == seq => Some(hint),
            _ => self.find(seq),
        }
    }

    fn find(&self, seq: u64) -> Option<usize> {
        let i = self.seqs.binary_search_by_key(&seq, |&s| s & !DEAD).ok()?;
        (self.seqs[i] & DEAD == 0).then_some(i)
    }

    fn load(&self, i: usize) -> &LoadVec {
        self.loads.get(i).unwrap_or(&UNIT)
    }

    pub(crate) fn get(&self, seq: u64) -> Option<&ShardId> {
        self.find(seq).and_then(|i| self.ids[i].as_ref())
    }

    pub(crate) fn load_mut(&mut self, seq: u64) -> Option<&mut LoadVec> {
        let i = self.find(seq)?;
        if self.loads.len() <= i {
            self.loads.resize(i + 1, LoadVec::UNIT);
        }
        Some(&mut self.loads[i])
    }

    /// Takes the shard with sequence `seq` out, returning its id and load; `hint` is where
    /// it probably is (its index when placed, unless the arrays compacted since).
    pub(crate) fn remove(&mut self, seq: u64, hint: usize) -> Option<(ShardId, LoadVec)> {
        let i = self.index_of(seq, hint)?;
        // the id first: a live entry always has one, and nothing is marked if it had not
        let id = self.ids[i].take()?;
        self.seqs[i] |= DEAD;
        let load = match self.loads.get_mut(i) {
            Some(load) => std::mem::take(load),
            None => LoadVec::UNIT,
        };
        self.dead += 1;
        if self.dead * 2 > self.seqs.len() {
            self.compact();
        }
        Some((id, load))
    }

    fn compact(&mut self) {
        let stored = self.loads.len();
        let mut rings = self.rings.get_mut();
        let (mut w, mut kept_loads) = (0, 0);
        for r in 0..self.seqs.len() {
            if self.seqs[r] & DEAD == 0 {
                self.seqs.swap(w, r);
                self.ids.swap(w, r);
                if let Some(rings) = rings.as_deref_mut() {
                    rings.swap(w, r);
                }
                // live entries below `stored` land in a prefix; the rest weigh the unit
                if r < stored {
                    self.loads.swap(w, r);
                    kept_loads = w + 1;
                }
                w += 1;
            }
        }
        self.seqs.truncate(w);
        self.ids.truncate(w);
        if let Some(rings) = rings {
            rings.truncate(w);
        }
        self.loads.truncate(kept_loads);
        self.dead = 0;
    }

    /// `(sequence, id, load)`, oldest first.
    pub(crate) fn iter(&self) -> Iter<'_> {
        Iter {
            placed: self,
            front: 0,
            back: self.seqs.len(),
            left: self.len(),
        }
    }

    /// `(index, id, load)`, oldest first, where the index stays good for [`Self::at`] until
    /// the next change: a compact handle where a walk keeps many shards aside.
    pub(crate) fn indexed(&self) -> impl Iterator<Item = (u32, &ShardId, &LoadVec)> {
        self.ids
            .iter()
            .enumerate()
            .filter_map(|(i, id)| Some((i as u32, id.as_ref()?, self.load(i))))
    }

    /// [`Self::indexed`] without the ids, for walks that only weigh shards: the ids are
    /// another cache line per few shards, and with no removed entries not even the sequences
    /// are read.
    pub(crate) fn loads_indexed(&self) -> impl Iterator<Item = (u32, &LoadVec)> {
        let all = self.dead == 0;
        (0..self.seqs.len())
            .filter(move |&i| all || self.seqs[i] & DEAD == 0)
            .map(|i| (i as u32, self.load(i)))
    }

    /// The live shard at `index` (from [`Self::indexed`]).
    pub(crate) fn at(&self, index: u32) -> Option<(&ShardId, &LoadVec)> {
        let i = index as usize;
        Some((self.ids.get(i)?.as_ref()?, self.load(i)))
    }

    /// `(sequence, ring position)`, oldest first.
    pub(crate) fn ring_positions(&self) -> impl Iterator<Item = (u64, i32)> + '_ {
        let rings = self.rings.get_or_init(|| {
            // a removed entry's position is never read
            self.ids
                .iter()
                .map(|id| id.as_deref().map_or(0, string_hash))
                .collect()
        });
        self.seqs
            .iter()
            .zip(rings)
            .filter(|(&s, _)| s & DEAD == 0)
            .map(|(&s, &r)| (s, r))
    }

    pub(crate) fn into_ids(self) -> Vec<ShardId> {
        self.ids.into_iter().flatten().collect()
    }
}

/// [`PlacedShards::iter`]: skips removed entries and knows how many are left.
pub(crate) struct Iter<'a> {
    placed: &'a PlacedShards,
    /// The indexes not yet walked from either end: `front..back`.
    front: usize,
    back: usize,
    left: usize,
}

impl<'a> Iter<'a> {
    fn item(&self, i: usize) -> Option<(u64, &'a ShardId, &'a LoadVec)> {
        let p = self.placed;
        Some((p.seqs[i], p.ids[i].as_ref()?, p.load(i)))
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = (u64, &'a ShardId, &'a LoadVec);

    fn next(&mut self) -> Option<Self::Item> {
        while self.front < self.back {
            let i = self.front;
            self.front += 1;
            if let Some(item) = self.item(i) {
                self.left -= 1;
                return Some(item);
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        while self.front < self.back {
            self.back -= 1;
            if let Some(item) = self.item(self.back) {
                self.left -= 1;
                return Some(item);
            }
        }
        None
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A one-dimension load of `v`.
    fn heavy(v: f64) -> LoadVec {
        LoadVec::resolve(&crate::model::Amount::Uniform(v), &mut Default::default())
    }

    fn ids(p: &PlacedShards) -> Vec<(u64, String)> {
        p.iter().map(|(s, id, _)| (s, id.to_string())).collect()
    }

    #[test]
    fn removals_keep_order_lookups_and_counts_and_compact_without_losing_a_shard() {
        let mut p = PlacedShards::default();
        for s in 0..10u64 {
            p.push(s * 3, Arc::from(format!("s{s}")), LoadVec::UNIT);
        }
        let removed = |r: Option<(ShardId, LoadVec)>| r.map(|(id, l)| (id.to_string(), l.get(0)));
        assert_eq!(removed(p.remove(9, 3)), Some(("s3".into(), 1.0)));
        assert!(p.remove(9, 3).is_none(), "removed twice");
        assert!(p.remove(10, 0).is_none(), "never placed");
        assert!(p.remove(10, 99).is_none(), "a hint past the end");
        assert_eq!(p.get(9), None);
        assert_eq!(p.get(12).map(|s| &**s), Some("s4"));
        assert_eq!(p.len(), 9);
        let it = p.iter();
        assert_eq!(it.len(), 9);
        assert_eq!(p.iter().next_back().map(|x| x.0), Some(27));
        // past half dead the array compacts; what is left is unchanged (a wrong hint: the
        // lookup finds them all the same)
        for s in [0, 3, 6, 12, 15] {
            assert!(p.remove(s, 0).is_some());
        }
        assert_eq!(p.seqs.len(), 4, "compacted");
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

    #[test]
    fn loads_indexed_walks_what_indexed_walks_without_the_ids() {
        let mut p = PlacedShards::default();
        for s in 0..6u64 {
            let load = if s % 2 == 0 {
                heavy(s as f64 + 0.5)
            } else {
                LoadVec::UNIT
            };
            p.push(s, Arc::from(format!("s{s}")), load);
        }
        p.push(6, Arc::from("s6"), LoadVec::UNIT);
        let both = |p: &PlacedShards| {
            let by_id: Vec<(u32, f64)> = p.indexed().map(|(i, _, l)| (i, l.get(0))).collect();
            let by_load: Vec<(u32, f64)> = p.loads_indexed().map(|(i, l)| (i, l.get(0))).collect();
            (by_id, by_load)
        };
        // nothing removed: every index, the unit past the stored loads
        let (by_id, by_load) = both(&p);
        assert_eq!(by_load, by_id);
        assert_eq!(by_load.len(), 7);
        assert_eq!(by_load[4], (4, 4.5));
        assert_eq!(by_load[6], (6, 1.0));
        // removed entries are skipped before and after a compaction
        p.remove(2, 2).expect("placed");
        let (by_id, by_load) = both(&p);
        assert_eq!(by_load, by_id);
        assert!(by_load.iter().all(|&(i, _)| i != 2));
        for s in [0, 3, 5] {
            p.remove(s, s as usize).expect("placed");
        }
        assert_eq!(p.seqs.len(), 3, "compacted");
        let (by_id, by_load) = both(&p);
        assert_eq!(by_load, by_id);
        assert_eq!(by_load, vec![(0, 1.0), (1, 4.5), (2, 1.0)]);
    }

    #[test]
    fn loads_past_the_last_set_one_weigh_the_unit_and_survive_compaction() {
        let mut p = PlacedShards::default();
        for s in 0..8u64 {
            p.push(s, Arc::from(format!("s{s}")), LoadVec::UNIT);
        }
        assert!(p.loads.is_empty(), "unit loads are not stored");
        p.push(8, Arc::from("s8"), heavy(3.0));
        *p.load_mut(2).expect("placed") = heavy(2.0);
        assert_eq!(p.loads.len(), 9);
        p.push(9, Arc::from("s9"), LoadVec::UNIT);
        assert_eq!(
            p.loads.len(),
            9,
            "a unit load after the column is not stored either"
        );
        let weights =
            |p: &PlacedShards| p.iter().map(|(s, _, l)| (s, l.get(0))).collect::<Vec<_>>();
        for s in [0, 1, 3, 4, 5, 6] {
            assert_eq!(p.remove(s, s as usize).map(|(_, l)| l.get(0)), Some(1.0));
        }
        assert_eq!(p.seqs.len(), 4, "compacted");
        assert_eq!(weights(&p), vec![(2, 2.0), (7, 1.0), (8, 3.0), (9, 1.0)]);
        assert_eq!(p.loads.len(), 3, "up to the last stored load");
        // the index it was placed at is gone with the compaction
        assert_eq!(p.remove(8, 8).map(|(_, l)| l.get(0)), Some(3.0));
        assert_eq!(p.at(0).map(|(_, l)| l.get(0)), Some(2.0));
    }
}
