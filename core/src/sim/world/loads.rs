//! Shard load as hosts measure it, for the load-shift scenario: every shard has a load drawn
//! from a lognormal distribution (a few heavy shards, many light ones, as request rates
//! usually are), one shard may run hot, and every live region reports the loads of the
//! shards it runs at a fixed interval. Reports travel the faulty network like any command.

use std::collections::BTreeMap;

use crate::coordinator::CoordinatorInput;
use crate::model::Amount;
use crate::protocol::ShardId;
use crate::region::RegionInput;
use crate::replay::{CoordinatorStep, RegionStep};

use super::{Event, NodeState, World};

/// How often each region reports (simulated ms).
pub const REPORT_EVERY_MS: u64 = 2_000;

/// The spread of the lognormal shard loads (the sigma of their logarithm).
const SIGMA: f64 = 0.75;

/// How much heavier the hot shard is than its usual load.
pub const HOT_FACTOR: f64 = 20.0;

#[derive(Debug, Default)]
pub(super) struct LoadModel {
    /// By shard index.
    base: Vec<f64>,
    hot: Option<usize>,
    on: bool,
}

impl LoadModel {
    fn load(&self, shard: usize) -> f64 {
        let base = self.base.get(shard).copied().unwrap_or(1.0);
        if self.hot == Some(shard) {
            base * HOT_FACTOR
        } else {
            base
        }
    }
}

impl World {
    /// Draws every shard's load and starts the regions reporting.
    pub fn start_load_reports(&mut self) {
        let base = (0..self.cfg.shards)
            .map(|_| {
                // Box-Muller from two uniform draws in (0, 1].
                let u = |w: &mut World| (w.rng.below(1 << 53) + 1) as f64 / (1u64 << 53) as f64;
                let (u1, u2) = (u(self), u(self));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                // Two decimals: what a host's metrics would carry.
                ((SIGMA * z).exp() * 100.0).round().max(1.0) / 100.0
            })
            .collect();
        let was_on = self.loads.on;
        self.loads = LoadModel {
            base,
            hot: None,
            on: true,
        };
        if !was_on {
            self.agenda
                .push(self.now + REPORT_EVERY_MS, Event::ReportLoads);
        }
    }

    /// Makes `shard` (an index) the hot one, or none.
    pub fn set_hot_spot(&mut self, shard: Option<usize>) {
        self.loads.hot = shard;
    }

    /// A shard index, at random.
    pub fn random_shard(&mut self) -> usize {
        self.rng.below(u64::from(self.cfg.shards)) as usize
    }

    pub fn stop_load_reports(&mut self) {
        self.loads.on = false;
    }

    /// The busiest live region's true load over the lower bound, in the active coordinator's
    /// final map; `None` when no loads were drawn or nothing is placed.
    pub(super) fn load_max_over_lb(&self) -> Option<f64> {
        if self.loads.base.is_empty() {
            return None;
        }
        let c = self.coords[self.active_coordinator()?].c()?;
        let mut per_region = Vec::new();
        for (id, _, shards) in c.state().regions() {
            if self.regions.contains_key(id.as_str()) {
                let loads = shards.filter_map(|s| s.parse().ok());
                per_region.push(loads.map(|i| self.loads.load(i)).sum::<f64>());
            }
        }
        if per_region.is_empty() {
            return None;
        }
        let shards = (0..self.cfg.shards as usize).map(|i| self.loads.load(i));
        let (total, largest) = shards.fold((0.0, 0.0_f64), |(t, m), l| (t + l, m.max(l)));
        let lb = (total / per_region.len() as f64).max(largest);
        let busiest = per_region.into_iter().fold(0.0_f64, f64::max);
        (lb > 0.0).then(|| (busiest / lb * 1000.0).round() / 1000.0)
    }

    /// Every live region reports the loads of the shards it runs.
    pub(super) fn report_loads(&mut self) {
        if !self.loads.on {
            return;
        }
        let reports: Vec<(String, BTreeMap<ShardId, Amount>)> = self
            .regions
            .iter()
            .filter(|(_, s)| s.done.is_none() && self.nodes[s.node].state != NodeState::Crashed)
            .map(|(id, s)| {
                let loads = s
                    .region()
                    .running_shards()
                    .into_iter()
                    .filter_map(|shard| {
                        let i: usize = shard.parse().ok()?;
                        Some((shard, Amount::Uniform(self.loads.load(i))))
                    })
                    .collect();
                (id.clone(), loads)
            })
            .collect();
        for (id, loads) in reports {
            self.region_do(&id, RegionStep::Input(RegionInput::ReportLoads { loads }));
        }
        self.agenda
            .push(self.now + REPORT_EVERY_MS, Event::ReportLoads);
    }

    /// Asks the active coordinator to drain the node's region; false when there is none or
    /// the strategy does not drain (the caller then has the node leave gracefully).
    pub fn drain(&mut self, node: usize) -> bool {
        let drains = self.cfg.strategy.build().is_ok_and(|s| s.drains());
        let (Some(k), Some(region)) = (self.active_coordinator(), self.nodes[node].region.clone())
        else {
            return false;
        };
        if !drains {
            return false;
        }
        self.coordinator_do(
            k,
            CoordinatorStep::Input(CoordinatorInput::Drain { region }),
        );
        true
    }

    /// The node's region holds no shards in the active coordinator's map.
    pub fn drained(&self, node: usize) -> bool {
        let Some(region) = &self.nodes[node].region else {
            return true;
        };
        self.active_coordinator()
            .and_then(|k| self.coords[k].c())
            .is_some_and(|c| {
                c.state().shards_of(region).next().is_none() && c.handoffs_in_progress().is_empty()
            })
    }
}
