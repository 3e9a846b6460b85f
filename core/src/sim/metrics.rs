//! What a run reports: the invariant verdict first, then placement quality (balance,
//! movement, convergence) and availability (how long messages waited).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::coordinator::HandOffTimeoutPolicy;

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageStats {
    pub accepted: u64,
    pub delivered: u64,
    /// Refused by the sending region (buffer full or shut down): never accepted.
    pub rejected: u64,
    /// Handed back by a region that could not keep them and routed again by their origin.
    pub bounced: u64,
    /// Delivered after a later message from the same sender to the same entity. Reported,
    /// not a violation: the wire keeps order per pair of regions only.
    pub out_of_order: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandOffStats {
    pub started: u64,
    pub completed: u64,
    pub timed_out: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoordinatorStats {
    /// Times a coordinator became active (restored from the store).
    pub takeovers: u64,
    pub step_downs: u64,
    /// Store writes refused because a newer coordinator had loaded the state.
    pub fenced_writes: u64,
    /// Coordinator crashes that restarted from the store and were checked against it.
    pub restores_checked: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultStats {
    pub dropped: u64,
    pub duplicated: u64,
    pub delayed: u64,
    pub clock_jumps: u64,
    pub lease_expiries: u64,
    pub lease_renew_failures: u64,
    pub coordinator_crashes: u64,
    pub region_crashes: u64,
    pub store_failures: u64,
    pub flaps: u64,
    pub slow_stops: u64,
}

/// Shards per node over time, for the chart.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Node labels, in node order.
    pub nodes: Vec<String>,
    /// (time, shards running per node); nodes that joined later are absent from earlier rows.
    pub samples: Vec<(u64, Vec<u32>)>,
    /// (time, what happened) for the chart's markers.
    pub events: Vec<(u64, String)>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    pub strategy: serde_json::Value,
    pub policy: HandOffTimeoutPolicy,
    pub nodes: usize,
    pub shards: u32,
    pub coordinators: usize,
    pub faults: String,
    /// Empty when every invariant held. At most 100 are listed; see `violationCount`.
    pub violations: Vec<String>,
    pub violation_count: u64,
    pub lost_messages: u64,
    /// Messages held by (or on their way to) a region when it crashed: at-most-once
    /// delivery loses these by design, so they are not violations.
    pub lost_to_crashes: u64,
    pub duplicate_deliveries: u64,
    pub duplicate_owners: u64,
    pub moves_at_steady_state: u64,
    pub converged: bool,
    /// Rebalance rounds that moved shards, from the last disruption to convergence.
    pub rounds_to_converge: u64,
    /// Simulated time from the last disruption to the last placement change.
    pub time_to_converge_ms: u64,
    /// Busiest region's shard count over the mean, at the end.
    pub max_over_mean: f64,
    /// With loads reported (load-shift): the busiest region's true load at the end over LB =
    /// max(total load / live regions, largest shard), the bound no placement beats (1.0 =
    /// optimal). The coordinator sees the loads only through the protocol (reports every
    /// few seconds, smoothed, over the faulty network); this is what that cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_max_over_lb: Option<f64>,
    /// Hand-offs started by rebalancing or graceful shutdown after warm-up.
    pub shards_moved: u64,
    /// Fewest hand-offs that take the placement after warm-up to count balance over the
    /// regions alive at the end (shards of crashed regions are re-allocated, not handed off).
    /// Hash strategies aim at their ring, not at count balance: for them it is a reference.
    pub moves_lower_bound: u64,
    /// Allocations after warm-up (new shards, and shards of crashed regions).
    pub allocations: u64,
    pub max_moves_per_round: u64,
    pub messages: MessageStats,
    /// Accepted-to-delivered time of entity messages.
    pub buffered_delay_max_ms: u64,
    pub buffered_delay_p99_ms: u64,
    pub handoffs: HandOffStats,
    /// Directives regions refused for a stale stamp (fencing at work).
    pub directives_refused: u64,
    pub coordinator: CoordinatorStats,
    pub injected: FaultStats,
    pub simulated_ms: u64,
    pub steps: u64,
    pub final_shards_per_region: BTreeMap<String, usize>,
    #[serde(skip)]
    pub series: Series,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.violation_count == 0
    }
}

/// The `p`-th percentile (0..=100) by nearest rank; 0 for no samples.
pub(crate) fn percentile(values: &mut [u64], p: u64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    let rank = (p as usize * values.len()).div_ceil(100).max(1);
    values[rank - 1]
}

/// Busiest over mean; 1.0 when balanced, 0.0 with nothing placed.
pub(crate) fn max_over_mean(counts: &[usize]) -> f64 {
    let total: usize = counts.iter().sum();
    if counts.is_empty() || total == 0 {
        return 0.0;
    }
    let max = *counts.iter().max().expect("non-empty") as f64;
    let mean = total as f64 / counts.len() as f64;
    (max / mean * 1_000.0).round() / 1_000.0
}

/// Fewest hand-offs that bring a placement to count balance (every region within
/// [floor(S/N), ceil(S/N)]): `staying` regions keep their shards unless above the ceiling,
/// `leaving` counts are shards that must move, `unplaced` shards (of crashed regions) are
/// allocated for free, and `joining` regions start empty.
pub(crate) fn moves_lower_bound(
    staying: &[usize],
    leaving: usize,
    unplaced: usize,
    joining: usize,
) -> u64 {
    let n = staying.len() + joining;
    if n == 0 {
        return 0;
    }
    let total: usize = staying.iter().sum::<usize>() + leaving + unplaced;
    let (lo, hi) = (total / n, total.div_ceil(n));
    let excess: usize = staying.iter().map(|c| c.saturating_sub(hi)).sum::<usize>() + leaving;
    let deficit: usize =
        staying.iter().map(|c| lo.saturating_sub(*c)).sum::<usize>() + joining * lo;
    excess.max(deficit.saturating_sub(unplaced)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_balance() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentile(&mut v, 99), 99);
        assert_eq!(percentile(&mut v, 100), 100);
        assert_eq!(percentile(&mut [], 99), 0);
        assert_eq!(max_over_mean(&[10, 10, 10]), 1.0);
        assert_eq!(max_over_mean(&[20, 10, 0]), 2.0);
    }

    #[test]
    fn lower_bounds_for_the_usual_changes() {
        // 100 shards on 10 nodes, one joins: 9 must move (floor(100/11) = 9).
        assert_eq!(moves_lower_bound(&[10; 10], 0, 0, 1), 9);
        // Doubling: each new node needs floor(100/20) = 5.
        assert_eq!(moves_lower_bound(&[10; 10], 0, 0, 10), 50);
        // A node leaves gracefully: its 10 shards move.
        assert_eq!(moves_lower_bound(&[10; 9], 10, 0, 0), 10);
        // A node crashes: its shards are re-allocated, nothing has to be handed off.
        assert_eq!(moves_lower_bound(&[10; 9], 0, 10, 0), 0);
    }
}
