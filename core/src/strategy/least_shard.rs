//! Pekko/Akka `LeastShardAllocationStrategy` (the "new" algorithm with absolute and relative
//! limits) and the allocate rule it shares with the legacy strategy.

use std::cmp::Ordering;

use super::{note, Allocation, AllocationStrategy, Explanation, InProgress, Skip};
use crate::jvm;
use crate::jvm::compare_utf16;
use crate::model::{AllocationState, RebalanceBlocker, Region, ShardId};
use crate::{Error, Result};

/// Behaviour of newer Akka releases; both off reproduces Pekko and Akka 2.6.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AkkaOptions {
    /// Akka >= 2.9.4: after the shard count, prefer the older member (upNumber), then the
    /// lower address (host, then port), instead of map order.
    pub tie_break_by_age: bool,
    /// Akka >= 2.10.19: phase 1 takes shards from the most loaded region first.
    pub phase1_from_most_loaded: bool,
}

#[derive(Debug, Clone)]
pub struct LeastShard {
    absolute_limit: i32,
    relative_limit: f64,
    akka: AkkaOptions,
}

impl LeastShard {
    /// `absolute_limit` >= 0 (0 behaves as 1, as in Pekko), `relative_limit` in (0, 1].
    pub fn new(absolute_limit: i32, relative_limit: f64) -> Result<LeastShard> {
        if absolute_limit < 0 {
            return Err(Error::invalid_argument(format!(
                "absoluteLimit must be >= 0, got {absolute_limit}"
            )));
        }
        if !(relative_limit > 0.0 && relative_limit <= 1.0) {
            return Err(Error::invalid_argument(format!(
                "relativeLimit must be in (0, 1], got {relative_limit}"
            )));
        }
        Ok(LeastShard {
            absolute_limit,
            relative_limit,
            akka: AkkaOptions::default(),
        })
    }

    pub fn with_akka_options(mut self, akka: AkkaOptions) -> LeastShard {
        self.akka = akka;
        self
    }

    /// `max(1, min((relativeLimit * N).toInt, absoluteLimit))` with JVM `d2i` truncation.
    pub fn limit(&self, shards: usize) -> usize {
        let n = i32::try_from(shards).unwrap_or(i32::MAX);
        // `as i32` is the JVM d2i: truncates toward zero, saturates, NaN -> 0.
        let relative = (self.relative_limit * f64::from(n)) as i32;
        relative.min(self.absolute_limit).max(1) as usize
    }
}

/// Pekko's comparator, optionally extended with newer Akka's age/address tie-break.
pub(crate) fn compare(
    state: &AllocationState,
    akka: AkkaOptions,
    x: &Region,
    y: &Region,
) -> Ordering {
    let c = state.pekko_compare(x, y);
    if c != Ordering::Equal || !akka.tie_break_by_age {
        return c;
    }
    by_age(state, x, y)
}

/// Newer Akka's tie-break after the shard count: the older member (upNumber), then the lower
/// address (host, then port); equal when either member is unknown or their statuses differ.
pub(crate) fn by_age(state: &AllocationState, x: &Region, y: &Region) -> Ordering {
    let (Some(mx), Some(my)) = (state.member_of(x), state.member_of(y)) else {
        return Ordering::Equal;
    };
    if mx.status != my.status {
        return Ordering::Equal;
    }
    mx.up_number.cmp(&my.up_number).then_with(|| {
        compare_utf16(
            mx.address.host().unwrap_or(""),
            my.address.host().unwrap_or(""),
        )
        .then_with(|| {
            mx.address
                .port()
                .unwrap_or(0)
                .cmp(&my.address.port().unwrap_or(0))
        })
    })
}

/// Scala's `Iterable.min`: a left fold that replaces the best only on a strictly better entry.
/// With Pekko's non-transitive ordering this is not the head of the sorted list.
pub(crate) fn fold_min<'a>(
    state: &AllocationState,
    akka: AkkaOptions,
    regions: impl IntoIterator<Item = &'a Region>,
) -> Option<&'a Region> {
    regions.into_iter().fold(None, |best, r| match best {
        Some(b) if compare(state, akka, b, r) != Ordering::Greater => Some(b),
        _ => Some(r),
    })
}

/// Regions with a member, in suitability order; `None` where Pekko's sort would throw.
pub(crate) fn sorted_entries(
    state: &AllocationState,
    akka: AkkaOptions,
    eligible_only: bool,
) -> Option<Vec<&Region>> {
    if !akka.tie_break_by_age {
        return state.pekko_sorted(eligible_only).ok();
    }
    let mut v: Vec<&Region> = state
        .regions()
        .filter(|r| state.member_of(r).is_some() && (!eligible_only || r.is_eligible()))
        .collect();
    jvm::sort_by(&mut v, |a, b| compare(state, akka, a, b)).ok()?;
    Some(v)
}

/// `AbstractLeastShardAllocationStrategy.allocateShard`: the most suitable eligible region.
pub(crate) fn allocate_least(
    state: &AllocationState,
    akka: AkkaOptions,
    mut explain: Option<&mut Explanation>,
) -> Result<Allocation> {
    let best = if akka.tie_break_by_age {
        fold_min(
            state,
            akka,
            state
                .regions()
                .filter(|r| r.is_eligible() && state.member_of(r).is_some()),
        )
    } else {
        state.pekko_min(true)
    };
    note(&mut explain, |e| {
        if let Some(sorted) = sorted_entries(state, akka, true) {
            e.rank(state, sorted);
        }
        e.summary = match best {
            Some(r) => format!(
                "region {} ranks first: not leaving, newest app version, fewest shards",
                r.id()
            ),
            None => "no eligible region is on a known cluster member; retry later".into(),
        };
    });
    Ok(best.map_or(Allocation::Pending, |r| Allocation::Region(r.id().clone())))
}

/// Explains and reports `isAGoodTimeToRebalance` failures; true when rebalancing may go on.
pub(crate) fn good_time(
    state: &AllocationState,
    sorted: &[&Region],
    explain: &mut Option<&mut Explanation>,
) -> bool {
    no_blocker(state.pekko_rebalance_blockers(sorted), explain)
}

fn no_blocker(blockers: Vec<RebalanceBlocker>, explain: &mut Option<&mut Explanation>) -> bool {
    if let Some(b) = blockers.into_iter().next() {
        note(explain, |e| {
            e.skipped = Some(match b {
                RebalanceBlocker::NoRegions => Skip::NoRegions,
                RebalanceBlocker::MixedVersions(versions) => Skip::MixedVersions { versions },
                RebalanceBlocker::Unreachable(members) => Skip::UnreachableMembers { members },
                RebalanceBlocker::Joining(members) => Skip::JoiningMembers { members },
            });
            e.summary = "not a good time to rebalance".into();
        });
        return false;
    }
    true
}

/// Pekko answers an empty rebalance when its sort throws on an inconsistent comparator.
/// The start of a least-shard round: the regions in Pekko's order
/// and the total shard count, or `Err` with the round's answer when it must not run (hand-offs
/// still under way, an inconsistent order, not a good time, no shards).
pub(crate) fn round_start<'a>(
    state: &'a AllocationState,
    akka: AkkaOptions,
    in_progress: &InProgress,
    explain: &mut Option<&mut Explanation>,
) -> std::result::Result<(Vec<&'a Region>, usize), Result<Vec<ShardId>>> {
    if !in_progress.is_empty() {
        note(explain, |e| {
            e.skipped = Some(Skip::ShardsInProgress {
                count: in_progress.len(),
            });
            e.summary = "waiting for the previous round of hand-offs to finish".into();
        });
        return Err(Ok(Vec::new()));
    }
    let Some(sorted) = sorted_entries(state, akka, false) else {
        return Err(sort_failed(explain));
    };
    if !good_time(state, &sorted, explain) {
        return Err(Ok(Vec::new()));
    }
    let total = some_shards(sorted.iter().map(|r| r.shard_count()).sum(), explain)?;
    Ok((sorted, total))
}

/// `total`, or the round's empty answer when it is 0.
fn some_shards(
    total: usize,
    explain: &mut Option<&mut Explanation>,
) -> std::result::Result<usize, Result<Vec<ShardId>>> {
    if total == 0 {
        note(explain, |e| {
            e.skipped = Some(Skip::NoShards);
            e.summary = "no shards are allocated".into();
        });
        return Err(Ok(Vec::new()));
    }
    Ok(total)
}

/// [`round_start`] for a strategy that needs only the total. While the ranking is orderly
/// (and age breaks no ties) Pekko's sort cannot throw and nothing here depends on its order, so
/// the regions are not sorted: least-load never reads the ranking, which then never re-keys.
pub(crate) fn round_total(
    state: &AllocationState,
    akka: AkkaOptions,
    in_progress: &InProgress,
    explain: &mut Option<&mut Explanation>,
) -> std::result::Result<usize, Result<Vec<ShardId>>> {
    if akka.tie_break_by_age || !state.ranking_is_orderly() || !in_progress.is_empty() {
        return round_start(state, akka, in_progress, explain).map(|(_, total)| total);
    }
    if !no_blocker(state.orderly_rebalance_blockers(), explain) {
        return Err(Ok(Vec::new()));
    }
    some_shards(state.ranked_shard_count(), explain)
}

pub(crate) fn sort_failed(explain: &mut Option<&mut Explanation>) -> Result<Vec<ShardId>> {
    note(explain, |e| {
        e.summary =
            "the region ordering is inconsistent; Pekko's sort throws, so nothing moves".into()
    });
    Ok(Vec::new())
}

impl AllocationStrategy for LeastShard {
    fn name(&self) -> &str {
        "least-shard"
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
        // With every count within one of the others, neither phase finds anything: if they
        // are all c, optimal is c; if some are c + 1, optimal is c + 1; either way no region is
        // above optimal nor two below it. Every other early answer is empty too, so the steady
        // tick is decided from the ranking's ends instead of sorting R regions. Explained
        // rounds take the full path, which gives the same answer with its reasons.
        if explain.is_none() && !self.akka.tie_break_by_age && state.ranking_is_orderly() {
            if let Some(c) = state.ranked_counts() {
                if c.most - c.fewest <= 1 {
                    return Ok(Vec::new());
                }
            }
        }
        let (sorted, total) = match round_start(state, self.akka, in_progress, &mut explain) {
            Ok(start) => start,
            Err(answer) => return answer,
        };
        let regions = sorted.len();
        let optimal = total.div_ceil(regions);
        let limit = self.limit(total);
        note(&mut explain, |e| {
            e.rank(state, sorted.iter().copied());
            e.optimal = Some(optimal);
            e.limit = Some(limit);
        });

        // Phase 1: shards above optimal, oldest first.
        let mut picked: Vec<ShardId> = Vec::new();
        let walk: Box<dyn Iterator<Item = &&Region>> = if self.akka.phase1_from_most_loaded {
            Box::new(sorted.iter().rev())
        } else {
            Box::new(sorted.iter())
        };
        for r in walk {
            if picked.len() >= limit {
                break;
            }
            let n = r.shard_count();
            if n > optimal {
                picked.extend(
                    r.shards()
                        .take((n - optimal).min(limit - picked.len()))
                        .cloned(),
                );
            }
        }
        if !picked.is_empty() {
            note(&mut explain, |e| {
                e.phase = Some(1);
                e.summary = format!(
                    "{} shard(s) from regions above the optimal {optimal} per region",
                    picked.len()
                );
            });
            return Ok(picked);
        }

        // Phase 2: only when some region is at least two below optimal.
        let below: usize = sorted
            .iter()
            .map(|r| (optimal - 1).saturating_sub(r.shard_count()))
            .sum();
        if below == 0 {
            note(&mut explain, |e| {
                e.skipped = Some(Skip::Balanced);
                e.summary =
                    format!("balanced: every region is within one of the optimal {optimal}");
            });
            return Ok(Vec::new());
        }
        let take = below.min(limit);
        let picked: Vec<ShardId> = sorted
            .iter()
            .filter(|r| r.shard_count() >= optimal)
            .filter_map(|r| r.shards().next().cloned())
            .take(take)
            .collect();
        note(&mut explain, |e| {
            e.phase = Some(2);
            e.summary = format!(
                "{} shard(s) from full regions toward regions two or more below optimal",
                picked.len()
            );
        });
        Ok(picked)
    }
}
