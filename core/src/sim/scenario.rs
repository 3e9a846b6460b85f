//! Scenario scripts: what happens to the cluster between warm-up and the final checks.
//!
//! Every run has the same shape: boot and warm up without faults until the cluster has
//! converged (cold-start skips this: the boot *is* the scenario), then the script runs with
//! the fault level switched on, then faults stop and the cluster must converge again, stay
//! put through a steady window, and deliver every accepted message once traffic stops.

use serde::Serialize;

use crate::model::Version;

use super::clock::Proc;
use super::world::World;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    ColdStart,
    SteadyState,
    ScaleOut,
    ScaleOutDouble,
    ScaleIn,
    Crash,
    ZoneLoss,
    RollingRestart,
    RollingUpgrade,
    Flapping,
    SlowHandoff,
    CoordinatorFailover,
    LeaseExpiry,
    ClockJumps,
    Chaos,
    LoadShift,
}

impl Scenario {
    pub const ALL: [Scenario; 16] = [
        Scenario::ColdStart,
        Scenario::SteadyState,
        Scenario::ScaleOut,
        Scenario::ScaleOutDouble,
        Scenario::ScaleIn,
        Scenario::Crash,
        Scenario::ZoneLoss,
        Scenario::RollingRestart,
        Scenario::RollingUpgrade,
        Scenario::Flapping,
        Scenario::SlowHandoff,
        Scenario::CoordinatorFailover,
        Scenario::LeaseExpiry,
        Scenario::ClockJumps,
        Scenario::Chaos,
        Scenario::LoadShift,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::ColdStart => "cold-start",
            Scenario::SteadyState => "steady-state",
            Scenario::ScaleOut => "scale-out",
            Scenario::ScaleOutDouble => "scale-out-double",
            Scenario::ScaleIn => "scale-in",
            Scenario::Crash => "crash",
            Scenario::ZoneLoss => "zone-loss",
            Scenario::RollingRestart => "rolling-restart",
            Scenario::RollingUpgrade => "rolling-upgrade",
            Scenario::Flapping => "flapping",
            Scenario::SlowHandoff => "slow-handoff",
            Scenario::CoordinatorFailover => "coordinator-failover",
            Scenario::LeaseExpiry => "lease-expiry",
            Scenario::ClockJumps => "clock-jumps",
            Scenario::Chaos => "chaos",
            Scenario::LoadShift => "load-shift",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Scenario::ColdStart => "all nodes start at once and every shard is requested within a second (allocation storm)",
            Scenario::SteadyState => "nothing changes for a long time under traffic and network faults: no shard may move",
            Scenario::ScaleOut => "one node joins",
            Scenario::ScaleOutDouble => "as many nodes join as there are",
            Scenario::ScaleIn => "one node leaves gracefully, handing its shards off",
            Scenario::Crash => "one node crashes; its shards are re-allocated once it is removed",
            Scenario::ZoneLoss => "every node of one zone (a third of the cluster) crashes at once",
            Scenario::RollingRestart => "each node in turn leaves gracefully and rejoins as a new incarnation",
            Scenario::RollingUpgrade => "a rolling restart onto a new app version (mixed versions in between)",
            Scenario::Flapping => "one node is unreachable for 2 s every 30 s",
            Scenario::SlowHandoff => "a node joins and another leaves while 30% of shard stops take twice the hand-off timeout",
            Scenario::CoordinatorFailover => "the active coordinator crashes mid hand-off; a standby takes the lease, restores from the store and carries on",
            Scenario::LeaseExpiry => "the lease backend forgets its holder repeatedly while hand-offs run (split-brain windows fenced by tokens)",
            Scenario::ClockJumps => "process clocks jump forward and back while a node joins",
            Scenario::Chaos => "random clock jumps, lease expiries, coordinator and node crashes, store failures and flaps",
            Scenario::LoadShift => "regions report lognormal shard loads; a hot spot moves between shards, the coordinator fails over, then one node is drained (least-load) and leaves",
        }
    }

    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The scenario's fault level when none is given.
    pub fn default_faults(self) -> FaultLevel {
        match self {
            Scenario::Chaos => FaultLevel::Chaos,
            _ => FaultLevel::Network,
        }
    }
}

/// How hostile the environment is while the script runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultLevel {
    /// A quick, clean network: only the script's own events.
    None,
    /// Control messages lost, duplicated, delayed by up to seconds (so reordered).
    Network,
    /// Network faults plus random clock jumps, lease expiries, coordinator and node crashes,
    /// store failures and flapping nodes.
    Chaos,
}

impl FaultLevel {
    pub fn name(self) -> &'static str {
        match self {
            FaultLevel::None => "none",
            FaultLevel::Network => "network",
            FaultLevel::Chaos => "chaos",
        }
    }

    pub fn from_name(name: &str) -> Option<FaultLevel> {
        [FaultLevel::None, FaultLevel::Network, FaultLevel::Chaos]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// Limits for waiting on the cluster, in simulated time.
pub(crate) struct Pace {
    pub interval: u64,
    pub handoff_timeout: u64,
    pub lease_ttl: u64,
    /// Longest a graceful leave may take.
    pub leave_max: u64,
}

fn v(text: &str) -> Version {
    Version::parse(text).expect("literal versions parse")
}

pub(crate) fn play(s: Scenario, w: &mut World, pace: &Pace) {
    let i = pace.interval;
    let current = v("1.0.0");
    match s {
        Scenario::ColdStart => {}
        Scenario::SteadyState => {
            w.steady = true;
            w.run_for(10 * i);
            w.steady = false;
        }
        Scenario::ScaleOut => {
            w.mark("+1 node");
            w.add_nodes(1, &current);
            w.run_for(3 * i);
        }
        Scenario::ScaleOutDouble => {
            let n = w.up_nodes().len().max(1);
            w.mark(&format!("+{n} nodes"));
            w.add_nodes(n, &current);
            w.run_for(3 * i);
        }
        Scenario::ScaleIn => {
            if let Some(&n) = w.up_nodes().last() {
                w.mark(&format!("n{n} leaves"));
                w.leave(n);
                w.run_until(pace.leave_max, 500, |w| w.node_gone(n));
            }
        }
        Scenario::Crash => {
            if let Some(n) = w.random_up_node() {
                w.mark(&format!("n{n} crashes"));
                w.crash(&[n]);
                w.run_for(3 * i);
            }
        }
        Scenario::ZoneLoss => {
            let zone: Vec<usize> = w
                .up_nodes()
                .into_iter()
                .filter(|n| w.nodes[*n].zone == 0)
                .collect();
            w.mark("zone 0 lost");
            w.crash(&zone);
            w.run_for(3 * i);
        }
        Scenario::RollingRestart | Scenario::RollingUpgrade => {
            let version = if s == Scenario::RollingUpgrade {
                v("2.0.0")
            } else {
                current
            };
            for n in w.up_nodes() {
                w.mark(&format!("restart n{n}"));
                w.leave(n);
                w.run_until(pace.leave_max, 500, |w| w.node_gone(n));
                w.rejoin(n, version.clone());
                w.run_until(60_000, 200, |w| w.node_up(n));
                w.run_for(i);
            }
        }
        Scenario::Flapping => {
            if let Some(&n) = w.up_nodes().first() {
                w.mark(&format!("n{n} flaps"));
                for _ in 0..6 {
                    w.flap(n, 2_000);
                    w.run_for(30_000);
                }
            }
        }
        Scenario::SlowHandoff => {
            w.slow_stop_fraction = 0.3;
            w.mark("+1 node, slow stops");
            w.add_nodes(1, &current);
            w.run_for(i + i / 2);
            if let Some(&n) = w.up_nodes().first() {
                w.mark(&format!("n{n} leaves, slow stops"));
                w.leave(n);
                w.run_until(pace.leave_max, 500, |w| w.node_gone(n));
            }
            w.run_for(3 * pace.handoff_timeout);
            w.slow_stop_fraction = 0.0;
        }
        Scenario::CoordinatorFailover => {
            w.mark("+1 node");
            w.add_nodes(1, &current);
            // A rebalance round starts hand-offs; crash the coordinator in the middle of them.
            w.run_for(i + i / 10);
            if let Some(k) = w.active_coordinator() {
                w.mark(&format!("c{k} crashes"));
                w.crash_coordinator(k, 2 * pace.lease_ttl);
            }
            w.run_until(4 * pace.lease_ttl, 500, |w| w.restores_checked() > 0);
            w.run_for(2 * i);
            if let Some(k) = w.active_coordinator() {
                w.mark(&format!("c{k} crashes"));
                w.crash_coordinator(k, 1_000);
            }
            w.run_for(2 * pace.lease_ttl);
        }
        Scenario::LeaseExpiry => {
            w.mark("+1 node, lease expiries");
            w.add_nodes(1, &current);
            for _ in 0..4 {
                w.run_for(i / 2 + 700);
                w.expire_lease();
            }
            w.run_for(2 * pace.lease_ttl);
        }
        Scenario::ClockJumps => {
            w.mark("+1 node, clock jumps");
            w.add_nodes(1, &current);
            for round in 0..12u64 {
                let delta = 1_000 + (round * 1_777) % 15_000;
                let delta = if round % 2 == 0 {
                    delta as i64
                } else {
                    -(delta as i64)
                };
                let p = if round % 3 == 0 {
                    Proc::Coordinator(w.active_coordinator().unwrap_or(0))
                } else {
                    match w.random_up_node() {
                        Some(n) => Proc::Node(n),
                        None => Proc::Coordinator(0),
                    }
                };
                w.jump_clock(p, delta);
                w.run_for(5_000);
            }
        }
        Scenario::LoadShift => {
            w.mark("loads reported");
            w.start_load_reports();
            w.run_for(2 * i);
            for _ in 0..3 {
                let hot = w.random_shard();
                w.mark(&format!("shard {hot} runs hot"));
                w.set_hot_spot(Some(hot));
                w.run_for(i + i / 2);
            }
            // The successor must decide as its predecessor would have, loads included.
            if let Some(k) = w.active_coordinator() {
                w.mark(&format!("c{k} crashes"));
                w.crash_coordinator(k, 2 * pace.lease_ttl);
                w.run_until(4 * pace.lease_ttl, 500, |w| w.restores_checked() > 0);
            }
            w.set_hot_spot(None);
            // A planned shutdown: drained first where the strategy drains, then it leaves.
            if let Some(&n) = w.up_nodes().first() {
                if w.drain(n) {
                    w.mark(&format!("n{n} drains"));
                    w.run_until(pace.leave_max, 500, |w| w.drained(n));
                }
                w.mark(&format!("n{n} leaves"));
                w.leave(n);
                w.run_until(pace.leave_max, 500, |w| w.node_gone(n));
            }
            // Smoothed loads decay by a fifth a report: let them settle, then stop reporting.
            w.run_for(40 * super::world::REPORT_EVERY_MS);
            w.stop_load_reports();
        }
        Scenario::Chaos => {
            w.mark("chaos");
            w.add_nodes(1, &current);
            w.run_for(150_000);
            if let Some(n) = w.random_up_node() {
                w.leave(n);
            }
            w.run_for(150_000);
        }
    }
}
