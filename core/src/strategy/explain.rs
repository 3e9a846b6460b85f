//! Structured explanations of decisions: which candidates were ranked how, which limit
//! applied, and why a rebalance was skipped.

use serde::{Deserialize, Serialize};

use crate::model::{AllocationState, Region};

/// How many ranked candidates an explanation lists; enough to see why the winner won.
pub const MAX_CANDIDATES: usize = 10;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub strategy: String,
    pub op: String,
    /// One line for people.
    pub summary: String,
    /// Best first, at most [`MAX_CANDIDATES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimal: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Skip>,
    /// least-load: total load over the capacity of the regions that may receive shards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fluid_optimum: Option<f64>,
    /// least-load: regions above this utilisation give shards away.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band_ceiling: Option<f64>,
    /// least-load: each move a rebalance planned, in decision order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<MoveNote>,
    /// Why a region could not take a shard (allocate: every region, when none could).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<Rejection>,
}

/// One planned move and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct MoveNote {
    pub shard: String,
    pub from: String,
    pub to: String,
    /// `draining`, `off-pin`, `missing-tags`, `above-max-shards` (a broken rule) or `band`.
    pub trigger: String,
    pub from_before: f64,
    pub from_after: f64,
    pub to_before: f64,
    pub to_after: f64,
    /// Moves the round may still plan.
    pub moves_left: usize,
    /// Load the round may still move (least over dimensions); absent when unlimited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_left: Option<f64>,
}

/// A region that could not take a shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    pub shard: String,
    pub region: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub region: String,
    pub address: String,
    pub shards: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// least-load: the region's utilisation after taking the shard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub utilisation: Option<f64>,
}

impl Candidate {
    pub fn of(state: &AllocationState, r: &Region) -> Candidate {
        let m = state.member_of(r);
        Candidate {
            region: r.id().to_string(),
            address: state.node_of(r).to_string(),
            shards: r.shard_count(),
            status: m.map(|m| m.status.to_string()),
            app_version: m.map(|m| m.app_version.to_string()),
            utilisation: None,
        }
    }
}

/// Why a rebalance returned nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "reason", rename_all = "camelCase")]
pub enum Skip {
    /// The new least-shard strategy waits for the previous round to finish.
    ShardsInProgress {
        count: usize,
    },
    /// Legacy: as many hand-offs as allowed are running.
    TooManyInProgress {
        in_progress: usize,
        max: usize,
    },
    /// Members run different app versions (a rolling upgrade).
    MixedVersions {
        versions: Vec<String>,
    },
    /// Members of the coordinator's data center are unreachable.
    UnreachableMembers {
        members: Vec<String>,
    },
    /// Members of the coordinator's data center are joining.
    JoiningMembers {
        members: Vec<String>,
    },
    NoRegions,
    NoShards,
    /// Every region is within the strategy's tolerance.
    Balanced,
    /// The spread between most and least loaded is not above the threshold.
    BelowThreshold {
        difference: usize,
        threshold: usize,
    },
    /// The external location source did not answer.
    LookupUnavailable,
    /// Fewer than two candidates.
    NotEnoughCandidates,
    /// least-load: above the band, but no single move off the busiest region lowers the
    /// larger of the two utilisations.
    Stable,
}

// Explanations travel in coordinator notices, which are compared for equality (replay).
// Their numbers are utilisations and optima, finite by construction (capacities are > 0), so
// equality is reflexive.
impl Eq for Explanation {}

impl Explanation {
    pub fn new(strategy: &str, op: &str) -> Explanation {
        Explanation {
            strategy: strategy.into(),
            op: op.into(),
            ..Default::default()
        }
    }

    pub fn rank<'a>(
        &mut self,
        state: &AllocationState,
        ranked: impl IntoIterator<Item = &'a Region>,
    ) {
        self.candidates = ranked
            .into_iter()
            .take(MAX_CANDIDATES)
            .map(|r| Candidate::of(state, r))
            .collect();
    }
}
