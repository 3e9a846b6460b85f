//! Judging a run: has the cluster converged, does everything agree at the end, and the
//! report.

use std::collections::BTreeMap;

use crate::protocol::Message;
use crate::strategy::InProgress;

use super::super::metrics::{max_over_mean, moves_lower_bound, percentile, Report};
use super::coordinators::state_difference;
use super::{Event, NodeState, World};

impl World {
    /// Why the cluster has not converged yet, or Ok: one active coordinator, no hand-offs,
    /// every requested shard running exactly where the coordinator put it, nothing waiting in
    /// a buffer, and nothing left for the strategy to move.
    pub fn converged(&self) -> std::result::Result<(), String> {
        if let Some(n) = self
            .nodes
            .iter()
            .find(|n| n.unreachable || !matches!(n.state, NodeState::Up | NodeState::Gone))
        {
            let holding = n
                .region
                .as_ref()
                .and_then(|id| self.regions.get(id).map(|s| (id, s)))
                .map(|(id, s)| {
                    format!(
                        " ({id} hosts {:?}, running {:?}, buffers {})",
                        s.region().local_shards(),
                        s.region().running_shards(),
                        s.region().buffered()
                    )
                })
                .unwrap_or_default();
            return Err(format!("{} is {:?}{holding}", n.address, n.state));
        }
        let pending_change = self.agenda.iter().any(|e| {
            matches!(
                e,
                Event::MemberUp { .. }
                    | Event::Removed { .. }
                    | Event::Rejoin { .. }
                    | Event::Reachability { .. }
                    | Event::CoordinatorRestart { .. }
            )
        });
        if pending_change {
            return Err("membership changes are still scheduled".into());
        }
        let k = self.active_coordinator().ok_or("no active coordinator")?;
        let c = self.coords[k].c().expect("active");
        let handoffs = c.handoffs_in_progress();
        if !handoffs.is_empty() {
            return Err(format!("{} hand-off(s) in progress", handoffs.len()));
        }
        let eligible = self
            .regions
            .values()
            .any(|s| !s.leaving && s.done.is_none() && self.nodes[s.node].state == NodeState::Up);
        for s in &self.requested {
            let Some(home) = c.state().home_of(s) else {
                if eligible {
                    return Err(format!("shard {s} is not allocated"));
                }
                continue;
            };
            let Some(slot) = self.regions.get(home) else {
                return Err(format!("shard {s} is allocated to {home}, which is gone"));
            };
            let runners = self.checker.runners(s);
            if runners != [slot.key] {
                return Err(format!(
                    "shard {s} is allocated to {home} but runs in {} region(s) there",
                    runners.len()
                ));
            }
        }
        if let Some((id, s)) = self.regions.iter().find(|(_, s)| s.region().buffered() > 0) {
            return Err(format!("{id} buffers {} message(s)", s.region().buffered()));
        }
        let mut strategy = self.cfg.strategy.build().map_err(|e| e.to_string())?;
        let moves = strategy
            .rebalance(c.allocation(), &InProgress::new(), None)
            .map_err(|e| e.to_string())?;
        if !moves.is_empty() {
            return Err(format!("the strategy still moves {} shard(s)", moves.len()));
        }
        Ok(())
    }

    /// End-of-run checks, after traffic stopped and the wire drained.
    pub fn final_checks(&mut self) {
        if let Err(why) = self.converged() {
            self.checker
                .violate(self.now, "not-converged", format!("at the end: {why}"));
        }
        if let Some(k) = self.active_coordinator() {
            let c = self.coords[k].c().expect("active");
            let mut orphans = Vec::new();
            for (shard, runners) in self.checker.running_shards() {
                let home = c
                    .state()
                    .home_of(shard)
                    .and_then(|h| self.region_keys.get(h));
                if runners.iter().any(|r| Some(r) != home) {
                    orphans.push(shard.clone());
                }
            }
            orphans.sort();
            if let Some(diff) = state_difference(c.state(), &self.reference) {
                self.checker.violate(
                    self.now,
                    "store-mismatch",
                    format!("c{k} disagrees with the store: {diff}"),
                );
            }
            for s in orphans {
                self.checker.violate(
                    self.now,
                    "orphan-copy",
                    format!("shard {s} runs in a region the coordinator did not give it to"),
                );
            }
        }
        let pending_data = self
            .agenda
            .iter()
            .filter(|e| matches!(e, Event::Deliver { env, .. } if matches!(env.message, Message::Forward(_))))
            .count();
        if pending_data > 0 {
            self.checker.violate(
                self.now,
                "not-drained",
                format!("{pending_data} entity message(s) still on the wire"),
            );
        }
        self.checker.finish(self.now);
    }

    pub fn pending_messages(&self) -> u64 {
        self.checker.pending()
    }

    pub fn convergence(&self) -> (u64, u64) {
        (
            self.rounds_since_action,
            self.last_change.saturating_sub(self.last_action),
        )
    }

    /// Starts counting moves, allocations and lower bounds from here (after warm-up).
    /// Fewest hand-offs that take the placement measuring began with to count balance over
    /// the regions alive now: shards of regions that left must move, shards of regions that
    /// crashed (or never placed) are allocated for free, regions that joined start empty.
    fn moves_lower_bound(&self) -> u64 {
        let (mut staying, mut leaving, mut unplaced) = (Vec::new(), 0, 0);
        let mut placed = 0;
        for (id, n) in &self.initial_placement {
            placed += n;
            match self.gone.get(id) {
                None if self.regions.contains_key(id) => staying.push(*n),
                Some(false) => leaving += n,
                _ => unplaced += n,
            }
        }
        unplaced += (self.cfg.shards as usize).saturating_sub(placed);
        let joining = self
            .regions
            .keys()
            .filter(|id| !self.initial_placement.iter().any(|(r, _)| r == *id))
            .count();
        moves_lower_bound(&staying, leaving, unplaced, joining)
    }

    pub fn begin_measuring(&mut self) {
        self.initial_placement = self
            .reference
            .regions()
            .map(|(id, _, shards)| (id.clone(), shards.len()))
            .collect();
        self.measuring = true;
    }

    pub fn report(mut self, header: ReportHeader, converged: bool) -> Report {
        let mut delays = std::mem::take(&mut self.checker.delays);
        let max_delay = delays.iter().copied().max().unwrap_or(0);
        let p99 = percentile(&mut delays, 99);
        let mut final_counts = BTreeMap::new();
        if let Some(k) = self.active_coordinator() {
            let c = self.coords[k].c().expect("active");
            for (id, _, shards) in c.state().regions() {
                if self.regions.contains_key(id.as_str()) {
                    final_counts.insert(id.clone(), shards.len());
                }
            }
        }
        let counts: Vec<usize> = final_counts.values().copied().collect();
        let (violations, violation_count) = self.checker.violations();
        let (rounds, time) = self.convergence();
        self.messages.delivered = self.checker.delivered;
        self.messages.out_of_order = self.checker.out_of_order;
        self.injected.dropped = self.net.stats.dropped;
        self.injected.duplicated = self.net.stats.duplicated;
        self.injected.delayed = self.net.stats.delayed;
        Report {
            scenario: header.scenario,
            seed: self.cfg.seed,
            strategy: serde_json::to_value(&self.cfg.strategy).unwrap_or_default(),
            policy: self.cfg.coordinator.handoff_timeout_policy,
            nodes: self.cfg.nodes,
            shards: self.cfg.shards,
            coordinators: self.cfg.coordinators,
            faults: header.faults,
            violations: violations.to_vec(),
            violation_count,
            lost_messages: self.checker.lost,
            lost_to_crashes: self.checker.lost_to_crash,
            duplicate_deliveries: self.checker.duplicate_deliveries,
            duplicate_owners: self.checker.duplicate_owners,
            moves_at_steady_state: self.moves_at_steady,
            converged,
            rounds_to_converge: rounds,
            time_to_converge_ms: time,
            max_over_mean: max_over_mean(&counts),
            load_max_over_lb: self.load_max_over_lb(),
            shards_moved: self.shards_moved,
            moves_lower_bound: self.moves_lower_bound(),
            allocations: self.allocations,
            max_moves_per_round: self.max_moves_per_round,
            messages: self.messages.clone(),
            buffered_delay_max_ms: max_delay,
            buffered_delay_p99_ms: p99,
            handoffs: self.handoffs.clone(),
            directives_refused: self.directives_refused,
            coordinator: self.coordinator_stats.clone(),
            injected: self.injected.clone(),
            simulated_ms: self.now,
            steps: self.steps,
            final_shards_per_region: final_counts,
            series: std::mem::take(&mut self.series),
        }
    }
}

pub(crate) struct ReportHeader {
    pub scenario: String,
    pub faults: String,
}
