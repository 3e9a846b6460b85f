//! A deterministic cluster simulator for the coordinator and region state machines.
//!
//! N nodes each run a shard region; one or more coordinator candidates share a lease (with
//! fencing tokens) and a state store. Entity traffic flows between regions while a scenario
//! script changes the cluster and seeded faults disturb it: control messages lost, duplicated,
//! delayed and reordered; regions and coordinators crashing; the lease expiring under its
//! holder; clocks jumping; shard stops taking longer than the hand-off timeout.
//!
//! After every step the checker verifies the safety invariants:
//! * a shard runs in at most one region (with the keep-owner policy, it is not even *hosted*
//!   twice; a forced move may leave the old copy stopping, never running);
//! * every entity message a region accepted is delivered exactly once, except those held by
//!   a region that crashed (at-most-once delivery, counted apart);
//! * one rebalance round starts no more hand-offs than the strategy's limit;
//! * without faults that break the lease's timing model, one coordinator is active at a time;
//! * a coordinator restored from the store holds exactly the store's state, and one that
//!   replaces a crashed coordinator decides as the crashed one would have.
//!
//! and at the end the liveness ones: the cluster converges, every requested shard runs where
//! the coordinator put it, and nothing moves at steady state.
//!
//! The simulated hosts do what the state machines expect of a host, as Pekko's runtime does:
//! outputs are carried out in order and a failed write drops the rest; regions watch each
//! other (a stopped region's peers hear `RegionTerminated` promptly, a crashed one's when its
//! node is removed); a restored coordinator is told at once which regions in its state are
//! dead (`watchStateActors`); the transport quarantines a removed incarnation, so nothing it
//! sent arrives afterwards; a leaving node flushes its outbound entity messages before it goes;
//! an undeliverable message goes back to the region that forwarded it, to be routed again.
//!
//! Runs are a function of the seed: one thread, no clock, no OS randomness.
//!
//! ```
//! use shardline_core::sim::{run, Scenario, SimConfig};
//! let mut config = SimConfig::new(Scenario::ScaleOut, 7);
//! config.nodes = Some(3);
//! config.shards = Some(12);
//! let report = run(&config).unwrap();
//! assert!(report.violations.is_empty(), "{:?}", report.violations);
//! ```

mod checker;
mod clock;
mod metrics;
mod network;
mod rng;
mod scenario;
pub mod svg;
mod world;

use crate::coordinator::{CoordinatorConfig, HandOffTimeoutPolicy};
use crate::region::RegionConfig;
use crate::strategy::StrategyConfig;
use crate::{Error, Result};

pub use metrics::{CoordinatorStats, FaultStats, HandOffStats, MessageStats, Report, Series};
pub use scenario::{FaultLevel, Scenario};

use network::NetFaults;
use scenario::{play, Pace};
use world::{ReportHeader, World, WorldConfig};

/// One run. `nodes` and `shards` default to 6 and 60 (ten shards per node, Akka's advice).
#[derive(Debug, Clone)]
pub struct SimConfig {
    pub scenario: Scenario,
    pub seed: u64,
    pub nodes: Option<usize>,
    pub shards: Option<u32>,
    pub strategy: StrategyConfig,
    pub coordinators: usize,
    /// Entity messages per simulated second.
    pub rate: f64,
    /// `None`: the scenario's default.
    pub faults: Option<FaultLevel>,
    /// Rebalance rounds the cluster must stay put after converging.
    pub steady_rounds: u64,
    /// Coordinator settings; the hand-off timeout policy is the one that varies most.
    pub coordinator: CoordinatorConfig,
    pub region: RegionConfig,
    pub lease_ttl_ms: u64,
    /// Sample shards per node this often, for the chart (0: never).
    pub sample_ms: u64,
    /// Log every message, output and decision that touches this shard to stderr.
    pub trace: Option<String>,
    /// A run that takes more steps than this is stopped and reported as a livelock.
    pub max_steps: u64,
}

impl SimConfig {
    /// Pekko's defaults (10 s rebalance interval, 60 s hand-off timeout, keep-owner),
    /// least-shard allocation, two coordinator candidates, 10 messages per second.
    pub fn new(scenario: Scenario, seed: u64) -> SimConfig {
        SimConfig {
            scenario,
            seed,
            nodes: None,
            shards: None,
            strategy: StrategyConfig::LeastShard {
                absolute_limit: 20,
                relative_limit: 0.1,
                tie_break_by_age: false,
                phase1_from_most_loaded: false,
            },
            coordinators: 2,
            rate: 10.0,
            faults: None,
            steady_rounds: 20,
            coordinator: CoordinatorConfig {
                // Small enough that restores replay snapshots *and* events.
                snapshot_after: 25,
                ..CoordinatorConfig::default()
            },
            region: RegionConfig::default(),
            lease_ttl_ms: 15_000,
            sample_ms: 0,
            trace: None,
            max_steps: 20_000_000,
        }
    }

    pub fn with_policy(mut self, policy: HandOffTimeoutPolicy) -> SimConfig {
        self.coordinator.handoff_timeout_policy = policy;
        self
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::invalid_argument(m.to_owned()));
        if self.nodes == Some(0) {
            return bad("nodes must be >= 1");
        }
        if self.shards == Some(0) || self.shards.is_some_and(|s| s > 100_000) {
            return bad("shards must be in 1..=100000");
        }
        if self.coordinators == 0 {
            return bad("coordinators must be >= 1");
        }
        if !(self.rate > 0.0 && self.rate <= 100_000.0) {
            return bad("rate must be in (0, 100000] messages per second");
        }
        if self.lease_ttl_ms < 1_000 {
            return bad("leaseTtlMs must be >= 1000");
        }
        self.coordinator.validate()?;
        self.region.validate()?;
        self.strategy.build().map(|_| ())
    }
}

/// The scenario names with one-line descriptions, in `--list` order.
pub fn scenarios() -> Vec<(&'static str, &'static str)> {
    Scenario::ALL
        .iter()
        .map(|s| (s.name(), s.describe()))
        .collect()
}

/// Runs one simulation. Errors are configuration errors only; everything the simulation
/// finds is in the report.
pub fn run(config: &SimConfig) -> Result<Report> {
    Ok(run_world(config, Observe::default())?.report)
}

/// What to keep of a run besides its report.
#[derive(Debug, Clone, Default)]
pub struct Observe {
    /// Record every call on a coordinator or region with its outputs (the trace
    /// `crate::replay` reads); the value goes into the trace's header as it is.
    pub record: Option<serde_json::Value>,
    /// Log every notice of every machine as JSON lines, with the coordinators'
    /// `decisionEvents` on so that allocations and rebalance rounds carry their explanations.
    pub events: bool,
}

/// A run's report and what [`Observe`] asked for.
#[derive(Debug)]
pub struct Observed {
    pub report: Report,
    pub trace: Option<String>,
    pub events: Option<String>,
}

/// Runs one simulation and keeps what `observe` asks for. Observing does not change the run:
/// the report is the one [`run`] gives (explanations are computed beside the decisions, never
/// instead of them).
pub fn run_observed(config: &SimConfig, observe: Observe) -> Result<Observed> {
    run_world(config, observe)
}

fn run_world(config: &SimConfig, observe: Observe) -> Result<Observed> {
    config.validate()?;
    let faults = config.faults.unwrap_or(config.scenario.default_faults());
    let nodes = config.nodes.unwrap_or(6);
    let shards = config.shards.unwrap_or(60);
    let wc = WorldConfig {
        coordinator: CoordinatorConfig {
            decision_events: config.coordinator.decision_events || observe.events,
            ..config.coordinator.clone()
        },
        region: config.region.clone(),
        strategy: config.strategy.clone(),
        nodes,
        shards,
        coordinators: config.coordinators,
        rate: config.rate,
        lease_ttl_ms: config.lease_ttl_ms,
        net: if faults == FaultLevel::None {
            NetFaults::none()
        } else {
            NetFaults::lossy()
        },
        chaos: faults == FaultLevel::Chaos,
        zones: 3,
        sample_ms: config.sample_ms,
        seed: config.seed,
        trace: config.trace.clone(),
        max_steps: config.max_steps,
    };
    let strict = config.coordinator.handoff_timeout_policy == HandOffTimeoutPolicy::KeepOwner;
    let mut w = World::new(wc, strict)?;
    if observe.events {
        w.log_events();
    }
    if let Some(by) = observe.record {
        w.record(by);
    }
    let interval = config.coordinator.rebalance_interval_ms;
    let pace = Pace {
        interval,
        handoff_timeout: config.coordinator.handoff_timeout_ms,
        lease_ttl: config.lease_ttl_ms,
        leave_max: 4 * config.coordinator.handoff_timeout_ms + u64::from(shards) * interval,
    };
    // Time for the slowest strategy (legacy: one shard per round) to converge from anywhere.
    let settle_max = (2 * u64::from(shards) + 60) * interval + 4 * pace.handoff_timeout;

    if config.scenario == Scenario::ColdStart {
        w.begin_measuring();
        w.set_faults(faults != FaultLevel::None);
        w.mark("cold start");
        w.boot()?;
        w.storm();
        w.run_for(2_000);
    } else {
        w.boot()?;
        w.storm();
        if !w.run_until(settle_max, interval, |w| w.converged().is_ok()) {
            let why = w.converged().err().unwrap_or_default();
            let now = w.now;
            w.checker
                .violate(now, "no-convergence", format!("during warm-up: {why}"));
        }
        w.begin_measuring();
        w.set_faults(faults != FaultLevel::None);
    }
    play(config.scenario, &mut w, &pace);
    w.set_faults(false);

    if config.scenario == Scenario::CoordinatorFailover && w.restores_checked() == 0 {
        let now = w.now;
        w.checker.violate(
            now,
            "failover-not-exercised",
            "no coordinator restored from the store after the active one crashed",
        );
    }
    let converged = w.run_until(settle_max, interval / 2, |w| w.converged().is_ok());
    if !converged {
        let why = w.converged().err().unwrap_or_default();
        let now = w.now;
        w.checker.violate(
            now,
            "no-convergence",
            format!(
                "within {} s after the faults stopped: {why}",
                settle_max / 1_000
            ),
        );
    }
    let steady = if config.scenario == Scenario::SteadyState {
        config.steady_rounds.max(60)
    } else {
        config.steady_rounds
    };
    let (rounds, time) = w.convergence();
    w.steady = true;
    w.run_for(steady * interval);
    w.steady = false;
    w.set_traffic(false);
    w.run_until(300_000, 500, |w| w.pending_messages() == 0);
    w.final_checks();
    let trace = w.finish_recording();
    let events = w.finish_events();
    let mut report = w.report(
        ReportHeader {
            scenario: config.scenario.name().to_owned(),
            faults: faults.name().to_owned(),
        },
        converged,
    );
    report.rounds_to_converge = rounds;
    report.time_to_converge_ms = time;
    Ok(Observed {
        report,
        trace,
        events,
    })
}
