//! Allocation strategies: where a new shard goes, and which shards to move.
//!
//! Every strategy reads the same [`AllocationState`] and can explain its decision. The Pekko
//! family reproduces Pekko/Akka 2.6 decisions exactly, including map-order ties; the actor-ts
//! family reproduces actor-ts with one deliberate fix (a strict rebalance threshold).
//! `bounded-load-hashing` is our own: hash affinity with a bound on the most loaded region;
//! so is `least-load`: least-shard over shard loads and region capacities, with rules and a
//! movement budget.

mod actor_ts;
mod bounded;
mod config;
mod consistent;
mod explain;
mod external;
mod least_load;
mod least_shard;
mod legacy;

use std::collections::HashSet;

pub use actor_ts::{ActorTsHash, ActorTsLeastShard};
pub use bounded::BoundedLoadHashing;
pub use config::StrategyConfig;
pub use consistent::ConsistentHashing;
pub use explain::{Candidate, Explanation, MoveNote, Rejection, Skip};
pub use external::{External, Lookup, ShardLocations};
pub use least_load::{LeastLoad, DEFAULT_BAND};
pub use least_shard::{AkkaOptions, LeastShard};
pub use legacy::LeastShardLegacy;

use crate::model::{AllocationState, RegionId, ShardId};
use crate::Result;

/// Shards whose hand-off is under way (Pekko's `rebalanceInProgress` key set).
pub type InProgress = HashSet<ShardId>;

/// The answer to "where does this shard go?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allocation {
    /// Allocate to this region. Pekko's External strategy may answer the requester even
    /// when it is not a registered region; the coordinator then drops the allocation.
    Region(RegionId),
    /// No decision now (no region maps to a known member, or no requester to fall back to):
    /// the caller retries later, as Pekko does.
    Pending,
}

/// A placement policy. Implement it to plug in your own (the C ABI and bindings expose it
/// through callbacks).
pub trait AllocationStrategy: Send {
    /// Short name used in explanations, e.g. `least-shard`.
    fn name(&self) -> &str;

    /// Whether it moves shards off a draining region and places none there (see
    /// [`AllocationState::set_region_draining`]). The coordinator refuses to drain with a
    /// strategy that does not, rather than pretend.
    fn drains(&self) -> bool {
        false
    }

    /// Chooses a home for `shard`. `requester` is the region that asked, or `None` for
    /// allocations the coordinator triggers itself. `explain`, when given, is filled in.
    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
        explain: Option<&mut Explanation>,
    ) -> Result<Allocation>;

    /// Chooses shards to hand off, in decision order (no duplicates).
    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        explain: Option<&mut Explanation>,
    ) -> Result<Vec<ShardId>>;
}

/// Fills `explain` when the caller asked for an explanation.
pub(crate) fn note(explain: &mut Option<&mut Explanation>, f: impl FnOnce(&mut Explanation)) {
    if let Some(e) = explain.as_deref_mut() {
        f(e)
    }
}

/// Regions with a known member in Pekko's `ShardSuitabilityOrdering` (what Pekko's spec calls
/// sorting region entries). `None` when Pekko's sort would throw on an inconsistent ordering.
pub fn rank(state: &AllocationState, akka: AkkaOptions) -> Option<Vec<RegionId>> {
    least_shard::sorted_entries(state, akka, false)
        .map(|v| v.into_iter().map(|r| r.id().clone()).collect())
}
