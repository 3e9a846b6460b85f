//! actor-ts `HashAllocationStrategy` and `LeastShardAllocationStrategy`, with one deliberate
//! fix: the threshold is strict (actor-ts's `>=` hands the same shards back and forth forever
//! at threshold 1). Addresses order exactly as actor-ts's `localeCompare` orders them
//! ([`crate::model::ActorTsKey`]).
//!
//! Candidates are the eligible regions, in candidate order; a region's address is its node.

use super::{note, Allocation, AllocationStrategy, Explanation, InProgress, Skip};
use crate::model::{AllocationState, Region, ShardId};
use crate::{Error, Result};

/// actor-ts shard ids are integers; ours are their decimal strings.
fn numeric(shard: &str) -> Result<u64> {
    if shard.is_empty() || !shard.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::invalid_argument(format!(
            "shard id {shard:?}: actor-ts strategies need non-negative integer shard ids"
        )));
    }
    shard
        .parse()
        .map_err(|_| Error::invalid_argument(format!("shard id {shard:?} is too large")))
}

#[derive(Debug, Clone, Default)]
pub struct ActorTsHash;

impl ActorTsHash {
    pub fn new() -> ActorTsHash {
        ActorTsHash
    }

    fn target<'a>(state: &'a AllocationState, shard: &str) -> Result<Option<&'a Region>> {
        let n = state.eligible_by_address().len() as u64;
        if n == 0 {
            return Ok(None);
        }
        Ok(state.eligible_by_address_nth((numeric(shard)? % n) as usize))
    }
}

impl AllocationStrategy for ActorTsHash {
    fn name(&self) -> &str {
        "actor-ts-hash"
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        _requester: Option<&str>,
        shard: &str,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Allocation> {
        note(&mut explain, |e| {
            *e = Explanation::new("actor-ts-hash", "allocate")
        });
        let region = Self::target(state, shard)?
            .ok_or_else(|| Error::no_candidates("HashAllocationStrategy: no candidates"))?;
        note(&mut explain, |e| {
            e.rank(state, state.eligible_by_address());
            e.summary = format!(
                "shard {shard} modulo {} candidates (sorted by address) is {}",
                state.eligible_by_address().len(),
                region.id()
            );
        });
        Ok(Allocation::Region(region.id().clone()))
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        note(&mut explain, |e| {
            *e = Explanation::new("actor-ts-hash", "rebalance")
        });
        if state.eligible_by_address().len() == 0 {
            note(&mut explain, |e| {
                e.skipped = Some(Skip::NotEnoughCandidates)
            });
            return Ok(Vec::new());
        }
        let mut picked = Vec::new();
        for r in state.regions() {
            for s in r.shards() {
                if in_progress.contains(s) {
                    continue;
                }
                let target = Self::target(state, s)?.expect("candidates are non-empty");
                if target.address() != r.address() {
                    picked.push(s.clone());
                }
            }
        }
        note(&mut explain, |e| {
            e.summary = format!(
                "{} shard(s) are not on their modulo candidate",
                picked.len()
            )
        });
        Ok(picked)
    }
}

#[derive(Debug, Clone)]
pub struct ActorTsLeastShard {
    threshold: usize,
    max_simultaneous: usize,
}

impl ActorTsLeastShard {
    /// `rebalance_threshold` >= 1 (actor-ts default 1), `max_simultaneous_rebalance` >= 0 (default 3).
    pub fn new(
        rebalance_threshold: i64,
        max_simultaneous_rebalance: i64,
    ) -> Result<ActorTsLeastShard> {
        if rebalance_threshold < 1 {
            return Err(Error::invalid_argument(format!(
                "rebalanceThreshold must be >= 1, got {rebalance_threshold}"
            )));
        }
        if max_simultaneous_rebalance < 0 {
            return Err(Error::invalid_argument(format!(
                "maxSimultaneousRebalance must be >= 0, got {max_simultaneous_rebalance}"
            )));
        }
        Ok(ActorTsLeastShard {
            threshold: rebalance_threshold as usize,
            max_simultaneous: max_simultaneous_rebalance as usize,
        })
    }
}

impl AllocationStrategy for ActorTsLeastShard {
    fn name(&self) -> &str {
        "actor-ts-least-shard"
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        _requester: Option<&str>,
        _shard: &str,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Allocation> {
        note(&mut explain, |e| {
            *e = Explanation::new("actor-ts-least-shard", "allocate")
        });
        let region = state
            .least_loaded_eligible()
            .ok_or_else(|| Error::no_candidates("LeastShardAllocationStrategy: no candidates"))?;
        note(&mut explain, |e| {
            e.summary = format!(
                "{} has the fewest shards ({}), ties to the lowest address",
                region.id(),
                region.shard_count()
            );
        });
        Ok(Allocation::Region(region.id().clone()))
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        note(&mut explain, |e| {
            *e = Explanation::new("actor-ts-least-shard", "rebalance")
        });
        let mut loads = state.eligible_in_candidate_order();
        if loads.len() < 2 {
            note(&mut explain, |e| {
                e.skipped = Some(Skip::NotEnoughCandidates)
            });
            return Ok(Vec::new());
        }
        loads.sort_by_key(|r| r.shard_count()); // stable: ties keep candidate order
        let min = loads[0].shard_count();
        let max = loads[loads.len() - 1].shard_count();
        if max - min <= self.threshold {
            note(&mut explain, |e| {
                e.skipped = Some(Skip::BelowThreshold {
                    difference: max - min,
                    threshold: self.threshold,
                });
                e.summary = format!(
                    "spread {} is not above the threshold {}",
                    max - min,
                    self.threshold
                );
            });
            return Ok(Vec::new());
        }
        let mut remaining = self.max_simultaneous;
        let mut picked = Vec::new();
        'nodes: for r in loads.iter().rev() {
            if remaining == 0 || r.shard_count() - min <= self.threshold {
                break;
            }
            for s in r.shards() {
                if remaining == 0 {
                    break 'nodes;
                }
                if !in_progress.contains(s) {
                    picked.push(s.clone());
                    remaining -= 1;
                }
            }
        }
        note(&mut explain, |e| {
            e.rank(state, loads.iter().copied());
            e.limit = Some(self.max_simultaneous);
            e.summary = format!(
                "{} shard(s) from nodes more than {} above the least loaded",
                picked.len(),
                self.threshold
            );
        });
        Ok(picked)
    }
}
