//! Pekko's legacy `LeastShardAllocationStrategy(rebalanceThreshold, maxSimultaneousRebalance)`,
//! still Pekko's default (`rebalance-absolute-limit = 0`).

use std::collections::HashMap;

use super::least_shard::{
    allocate_least, fold_min, good_time, sort_failed, sorted_entries, AkkaOptions,
};
use super::{note, Allocation, AllocationStrategy, Explanation, InProgress, Skip};
use crate::jvm::compare_utf16;
use crate::model::{AllocationState, ShardId};
use crate::{Error, Result};

#[derive(Debug, Clone)]
pub struct LeastShardLegacy {
    threshold: i32,
    max_simultaneous: i32,
    akka: AkkaOptions,
}

impl LeastShardLegacy {
    /// Both parameters must be >= 0 (Pekko's defaults are 1 and 3).
    pub fn new(
        rebalance_threshold: i32,
        max_simultaneous_rebalance: i32,
    ) -> Result<LeastShardLegacy> {
        if rebalance_threshold < 0 {
            return Err(Error::invalid_argument(format!(
                "rebalanceThreshold must be >= 0, got {rebalance_threshold}"
            )));
        }
        if max_simultaneous_rebalance < 0 {
            return Err(Error::invalid_argument(format!(
                "maxSimultaneousRebalance must be >= 0, got {max_simultaneous_rebalance}"
            )));
        }
        Ok(LeastShardLegacy {
            threshold: rebalance_threshold,
            max_simultaneous: max_simultaneous_rebalance,
            akka: AkkaOptions::default(),
        })
    }

    pub fn with_akka_options(mut self, akka: AkkaOptions) -> LeastShardLegacy {
        self.akka = akka;
        self
    }
}

impl AllocationStrategy for LeastShardLegacy {
    fn name(&self) -> &str {
        "least-shard-legacy"
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        _requester: Option<&str>,
        _shard: &str,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Allocation> {
        note(&mut explain, |e| {
            *e = Explanation::new(self.name(), "allocate")
        });
        allocate_least(state, self.akka, explain)
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        mut explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>> {
        note(&mut explain, |e| {
            *e = Explanation::new(self.name(), "rebalance")
        });
        let threshold = self.threshold as usize;
        // With nothing in progress and the orderly ranking, the least count is the first
        // region's and the most is the largest: when they differ by at most the threshold the
        // answer is empty whatever else holds (every other early answer is empty too), decided
        // from the ranking's ends instead of sorting R regions. Explained rounds take the full
        // path, which gives the same answer with its reasons.
        if explain.is_none()
            && in_progress.is_empty()
            && !self.akka.tie_break_by_age
            && state.ranking_is_orderly()
        {
            if let Some(c) = state.ranked_counts() {
                if c.most <= c.first + threshold {
                    return Ok(Vec::new());
                }
            }
        }
        let max = self.max_simultaneous as usize;
        if in_progress.len() >= max {
            note(&mut explain, |e| {
                e.skipped = Some(Skip::TooManyInProgress {
                    in_progress: in_progress.len(),
                    max,
                });
                e.summary = "as many hand-offs as allowed are already running".into();
            });
            return Ok(Vec::new());
        }
        let Some(sorted) = sorted_entries(state, self.akka, false) else {
            return sort_failed(&mut explain);
        };
        if !good_time(state, &sorted, &mut explain) {
            return Ok(Vec::new());
        }
        note(&mut explain, |e| e.rank(state, sorted.iter().copied()));
        // Pekko takes `sorted.min`, a fold: with mixed leaving statuses it can differ from the
        // head of the sorted list. Least counts in-progress shards; most does not.
        let least = if state.ranking_is_orderly() && !self.akka.tie_break_by_age {
            sorted[0] // a consistent order: the fold lands on the head
        } else {
            fold_min(state, self.akka, sorted.iter().copied()).expect("non-empty")
        }
        .shard_count();
        let mut busy: HashMap<&str, usize> = HashMap::new();
        for s in in_progress {
            if let Some(r) = state.home_of(s) {
                *busy.entry(r.id()).or_default() += 1;
            }
        }
        let mut most = sorted[0];
        let mut most_n = 0usize;
        for (i, r) in sorted.iter().enumerate() {
            let n = r.shard_count() - busy.get(&**r.id()).copied().unwrap_or(0);
            if i == 0 || n > most_n {
                most = r;
                most_n = n;
            }
        }
        let difference = most_n.saturating_sub(least);
        if most_n <= least || difference <= threshold {
            note(&mut explain, |e| {
                e.skipped = Some(Skip::BelowThreshold {
                    difference,
                    threshold,
                });
                e.summary = format!(
                    "most-least difference {difference} is not above the threshold {threshold}"
                );
            });
            return Ok(Vec::new());
        }
        let n = (difference - threshold)
            .min(threshold)
            .min(max - in_progress.len());
        let mut candidates: Vec<&ShardId> = most
            .shards()
            .filter(|s| !in_progress.contains(*s))
            .collect();
        candidates.sort_by(|a, b| compare_utf16(a, b));
        let picked: Vec<ShardId> = candidates.into_iter().take(n).cloned().collect();
        note(&mut explain, |e| {
            e.limit = Some(n);
            e.summary = format!(
                "{} shard(s) from {} (difference {difference} > threshold {threshold})",
                picked.len(),
                most.id()
            );
        });
        Ok(picked)
    }
}
