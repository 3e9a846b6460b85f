//! Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, SODA 2018) over
//! Pekko's hash ring of node addresses: a shard goes to the first node clockwise from its hash
//! whose region holds fewer than `cap = ceil((1 + epsilon) * shards / regions)` shards.
//!
//! Why it exists: Pekko's consistent hashing keeps shards on "their" node across restarts (good
//! for caches and warm state) but balances poorly (max/mean 1.5-2.4 at 10 shards per node);
//! least-shard balances but forgets where shards were. This strategy keeps the affinity and
//! bounds the most loaded region by `cap`.
//!
//! Rebalance moves a shard only to a region that comes *earlier* in that shard's clockwise walk
//! and has room, or off a region above `cap`. Every move of the first kind brings the shard
//! strictly closer to its hash position and never fills a region past `cap`, so repeated rounds
//! reach a fixed point: no moves at steady state.

use std::collections::HashMap;

use super::consistent::{CachedRing, ConsistentHashing, MAX_VIRTUAL_NODES};
use super::least_shard::{good_time, sort_failed, sorted_entries, AkkaOptions};
use super::{note, Allocation, AllocationStrategy, Explanation, InProgress};
use crate::hashing::string_hash;
use crate::model::{AllocationState, Region, ShardId};
use crate::{Error, Result};

#[derive(Debug, Clone)]
pub struct BoundedLoadHashing {
    epsilon: f64,
    absolute_limit: i32,
    relative_limit: f64,
    virtual_nodes: u32,
    ring: Option<CachedRing>,
    seen: Seen,
    /// The last unexplained round: its placement stamp, the shards then in progress, and its
    /// answer. A settled map is asked the same question every rebalance interval; the answer
    /// depends on nothing else (skipping a shard in progress changes the loads the rest of the
    /// walk sees, so other in-progress sets are worked out afresh).
    last_round: Option<((u64, u64), InProgress, Vec<ShardId>)>,
}

/// Which ring nodes a walk has passed, reused across walks: a walk usually stops after a node
/// or two, so clearing a flag per ring node for every walk would cost more than the walk.
#[derive(Debug, Clone, Default)]
struct Seen {
    stamp: Vec<u32>,
    epoch: u32,
}

impl Seen {
    /// Starts a walk over a ring of `nodes` nodes.
    fn start(&mut self, nodes: usize) -> &mut Seen {
        if self.stamp.len() != nodes {
            self.stamp = vec![0; nodes];
            self.epoch = 0;
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.fill(0);
            self.epoch = 1;
        }
        self
    }

    /// True the first time `node` is passed in this walk.
    fn first(&mut self, node: usize) -> bool {
        std::mem::replace(&mut self.stamp[node], self.epoch) != self.epoch
    }
}

impl BoundedLoadHashing {
    /// `epsilon` > 0 (the load bound is `1 + epsilon` times the mean); moves per round are
    /// `max(1, min(absolute_limit, relative_limit * shards))` as in Pekko's least-shard;
    /// `virtual_nodes` in `1..=1000`.
    pub fn new(
        epsilon: f64,
        absolute_limit: i32,
        relative_limit: f64,
        virtual_nodes: u32,
    ) -> Result<BoundedLoadHashing> {
        if !(epsilon > 0.0 && epsilon <= 100.0) {
            return Err(Error::invalid_argument(format!(
                "epsilon must be in (0, 100], got {epsilon}"
            )));
        }
        if absolute_limit < 1 {
            return Err(Error::invalid_argument(format!(
                "absoluteLimit must be >= 1, got {absolute_limit}"
            )));
        }
        if !(relative_limit > 0.0 && relative_limit <= 1.0) {
            return Err(Error::invalid_argument(format!(
                "relativeLimit must be in (0, 1], got {relative_limit}"
            )));
        }
        if !(1..=MAX_VIRTUAL_NODES).contains(&virtual_nodes) {
            return Err(Error::invalid_argument(format!(
                "virtualNodesFactor must be in 1..={MAX_VIRTUAL_NODES}, got {virtual_nodes}"
            )));
        }
        Ok(BoundedLoadHashing {
            epsilon,
            absolute_limit,
            relative_limit,
            virtual_nodes,
            ring: None,
            seen: Seen::default(),
            last_round: None,
        })
    }

    /// The most shards a region may hold when `shards` are spread over `regions`.
    pub fn cap(&self, shards: usize, regions: usize) -> usize {
        let mean = shards as f64 / regions.max(1) as f64;
        ((1.0 + self.epsilon) * mean).ceil().max(1.0) as usize
    }

    /// How many shards one rebalance round may pick.
    pub fn limit(&self, shards: usize) -> usize {
        let relative = (self.relative_limit * shards as f64) as usize;
        relative.min(self.absolute_limit as usize).max(1)
    }
}

/// The eligible regions in the clockwise order of `shard`'s walk around the ring, one per node.
fn walk<'s>(
    ring: &'s CachedRing,
    state: &'s AllocationState,
    seen: &'s mut Seen,
    shard: &str,
) -> impl Iterator<Item = &'s Region> + 's {
    let seen = seen.start(ring.nodes.len());
    ring.ring
        .clockwise(string_hash(shard))
        .filter(move |&i| seen.first(i))
        .filter_map(move |i| state.regions_on(&ring.nodes[i]).find(|r| r.is_eligible()))
}

/// The first region clockwise from `shard` below `cap`.
fn place(
    ring: &CachedRing,
    state: &AllocationState,
    seen: &mut Seen,
    shard: &str,
    cap: usize,
    explain: &mut Option<&mut Explanation>,
) -> Result<Allocation> {
    let mut first = None;
    for r in walk(ring, state, seen, shard) {
        first.get_or_insert(r);
        if r.shard_count() < cap {
            note(explain, |e| {
                e.limit = Some(cap);
                e.summary = format!(
                    "region {} is the first clockwise from shard {shard:?} below the cap of {cap}",
                    r.id()
                );
            });
            return Ok(Allocation::Region(r.id().clone()));
        }
    }
    // Only reachable when no region is eligible, or with more regions per node than the
    // ring has nodes (then the cap is counted per node, not per region): take the owner.
    match first {
        Some(r) => Ok(Allocation::Region(r.id().clone())),
        None => {
            note(explain, |e| {
                e.summary = "no eligible region; retry later".into()
            });
            Ok(Allocation::Pending)
        }
    }
}

/// Shards to move, in region map order: closer to their hash position, or off a region above
/// `cap`, while the target stays within `cap`.
fn pick(
    ring: &CachedRing,
    state: &AllocationState,
    seen: &mut Seen,
    in_progress: &InProgress,
    cap: usize,
    limit: usize,
) -> Vec<ShardId> {
    // Loads as they will be once the moves picked so far have landed.
    let mut load: HashMap<&str, usize> = state
        .regions()
        .map(|r| (r.id().as_ref(), r.shard_count()))
        .collect();
    let mut picked = Vec::new();
    'regions: for r in state.regions().filter(|r| r.is_eligible()) {
        for s in r.shards() {
            if picked.len() >= limit {
                break 'regions;
            }
            if in_progress.contains(s) {
                continue;
            }
            let over = load[r.id().as_ref()] > cap;
            // Earlier in the walk with room, or (when over the cap) anywhere with room.
            let target = walk(ring, state, seen, s)
                .take_while(|t| over || t.id() != r.id())
                .find(|t| t.id() != r.id() && load[t.id().as_ref()] < cap);
            if let Some(t) = target {
                *load.get_mut(r.id().as_ref()).expect("loaded") -= 1;
                *load.get_mut(t.id().as_ref()).expect("loaded") += 1;
                picked.push(s.clone());
            }
        }
    }
    picked
}

impl AllocationStrategy for BoundedLoadHashing {
    fn name(&self) -> &str {
        "bounded-load-hashing"
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        _requester: Option<&str>,
        shard: &str,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Allocation> {
        note(&mut explain, |e| {
            *e = Explanation::new("bounded-load-hashing", "allocate")
        });
        let mut cache = self.ring.take();
        let ring = ConsistentHashing::cached_ring(&mut cache, state, self.virtual_nodes, true);
        let cap = self.cap(state.shard_count() + 1, ring.nodes.len());
        let decision = place(ring, state, &mut self.seen, shard, cap, &mut explain);
        self.ring = cache;
        decision
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        note(&mut explain, |e| {
            *e = Explanation::new("bounded-load-hashing", "rebalance")
        });
        let stamp = state.placement_stamp();
        if let Some((_, _, picked)) = self
            .last_round
            .as_ref()
            .filter(|(s, busy, _)| *s == stamp && busy == in_progress && explain.is_none())
        {
            return Ok(picked.clone());
        }
        let picked = self.round(state, in_progress, &mut explain)?;
        if explain.is_none() {
            self.last_round = Some((stamp, in_progress.clone(), picked.clone()));
        }
        Ok(picked)
    }
}

impl BoundedLoadHashing {
    fn round(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        explain: &mut Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        let Some(sorted) = sorted_entries(state, AkkaOptions::default(), false) else {
            return sort_failed(explain);
        };
        if !good_time(state, &sorted, explain) {
            return Ok(Vec::new());
        }
        let total = state.shard_count();
        let limit = self.limit(total);
        let mut cache = self.ring.take();
        let ring = ConsistentHashing::cached_ring(&mut cache, state, self.virtual_nodes, true);
        let cap = self.cap(total, ring.nodes.len());
        let picked = pick(ring, state, &mut self.seen, in_progress, cap, limit);
        self.ring = cache;
        note(explain, |e| {
            e.limit = Some(limit);
            e.summary = format!(
                "{} shard(s) move closer to their hash position or off a region above the cap of {cap}",
                picked.len()
            );
        });
        Ok(picked)
    }
}
