//! Coordinator settings, with Pekko's defaults.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// What happens when a hand-off does not finish within `handoff_timeout_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum HandOffTimeoutPolicy {
    /// Pekko: the shard stays with its owner, which is told to host it again.
    #[default]
    KeepOwner,
    /// actor-ts: the shard is deallocated and re-allocated at once. The new home is announced
    /// to every region with a newer stamp, so the old owner stops its copy as soon as it hears
    /// of it and can never start it again from an older directive. Only an owner that has
    /// acknowledged `BeginHandOff` (and so no longer delivers) is overruled this way; one that
    /// never answered may still be running the shard and keeps it, as under `KeepOwner`.
    ForceReallocate,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct CoordinatorConfig {
    /// `rebalance-interval`: how often the strategy is asked what to move.
    pub rebalance_interval_ms: u64,
    /// `handoff-timeout`: one deadline for the whole hand-off (acks and the stop).
    pub handoff_timeout_ms: u64,
    pub handoff_timeout_policy: HandOffTimeoutPolicy,
    /// How often `BeginHandOff` / `HandOff` are re-sent to regions that have not answered
    /// (regions treat repeats as no-ops). 0 = never, as in Pekko.
    pub handoff_resend_interval_ms: u64,
    /// `shard-start-timeout`: `HostShard` is re-sent this often until `ShardStarted`.
    pub shard_start_timeout_ms: u64,
    /// `down-removal-margin`: a region whose node failed is treated as terminated this long
    /// after the failure is reported. 0 = at once.
    pub removal_margin_ms: u64,
    /// `min-nr-of-members`: `GetShardHome` is ignored until this many regions have registered.
    pub min_members: usize,
    /// `lease-retry-interval`: wait after a refused or failed acquisition.
    pub lease_retry_interval_ms: u64,
    pub remember_entities: bool,
    /// Emit a snapshot after this many events. 0 = never.
    pub snapshot_after: u64,
    /// `ShardHomes` sent on registration: pairs per message, and messages at most.
    pub shard_homes_batch: usize,
    pub shard_homes_max_batches: usize,
    pub rebalance_enabled: bool,
    /// Emit a notice for every allocation and every rebalance round, with the strategy's
    /// explanation (candidates ranked, limits hit, why a round moved nothing). Off by default:
    /// explaining costs time on the allocation path.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub decision_events: bool,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig {
            rebalance_interval_ms: 10_000,
            handoff_timeout_ms: 60_000,
            handoff_timeout_policy: HandOffTimeoutPolicy::KeepOwner,
            handoff_resend_interval_ms: 2_000,
            shard_start_timeout_ms: 10_000,
            removal_margin_ms: 0,
            min_members: 1,
            lease_retry_interval_ms: 5_000,
            remember_entities: false,
            snapshot_after: 1_000,
            shard_homes_batch: 500,
            shard_homes_max_batches: 10,
            rebalance_enabled: true,
            decision_events: false,
        }
    }
}

impl CoordinatorConfig {
    pub fn from_json(value: &serde_json::Value) -> Result<CoordinatorConfig> {
        let c = CoordinatorConfig::deserialize(value)
            .map_err(|e| Error::invalid_argument(format!("coordinator config: {e}")))?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<()> {
        let positive = [
            ("rebalanceIntervalMs", self.rebalance_interval_ms),
            ("handoffTimeoutMs", self.handoff_timeout_ms),
            ("shardStartTimeoutMs", self.shard_start_timeout_ms),
            ("leaseRetryIntervalMs", self.lease_retry_interval_ms),
            ("shardHomesBatch", self.shard_homes_batch as u64),
            ("shardHomesMaxBatches", self.shard_homes_max_batches as u64),
        ];
        for (name, v) in positive {
            if v == 0 {
                return Err(Error::invalid_argument(format!(
                    "coordinator config: {name} must be > 0"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_json() {
        let c = CoordinatorConfig::from_json(&serde_json::json!({
            "handoffTimeoutPolicy": "force-reallocate",
            "minMembers": 2
        }))
        .unwrap();
        assert_eq!(
            c.handoff_timeout_policy,
            HandOffTimeoutPolicy::ForceReallocate
        );
        assert_eq!(c.min_members, 2);
        assert_eq!(c.rebalance_interval_ms, 10_000);
        assert_eq!(c.handoff_timeout_ms, 60_000);
        assert!(CoordinatorConfig::from_json(&serde_json::json!({"nope": 1})).is_err());
        assert!(CoordinatorConfig::from_json(&serde_json::json!({"handoffTimeoutMs": 0})).is_err());
    }
}
