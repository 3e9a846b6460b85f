//! The coordinators' host: each runs in a driver over the shared store and lease (see
//! `hosts`), and the checks that tie a coordinator to what the store holds.

use crate::coordinator::{
    Coordinator, CoordinatorInput, CoordinatorNotice, PersistentState, Snapshot,
};
use crate::host::CoordinatorDriver;
use crate::model::AllocationState;
use crate::replay::{CoordinatorStep, MachineKind};
use crate::strategy::{Allocation, BoundedLoadHashing, InProgress, LeastShard, StrategyConfig};
use crate::Result;

use super::super::clock::Proc;
use super::{hosts, Event, World};

/// Decisions a coordinator's strategy makes on its allocation map, to compare a crashed
/// coordinator with its successor restored from the store.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Decisions {
    seq: u64,
    membership: u64,
    rebalance: Vec<String>,
    allocate: Option<String>,
}

/// How many shards a strategy may pick in one rebalance round, if it is bounded at all.
fn round_limit(strategy: &StrategyConfig, total: usize) -> Option<usize> {
    match strategy {
        StrategyConfig::LeastShard {
            absolute_limit,
            relative_limit,
            ..
        }
        | StrategyConfig::LeastLoad {
            absolute_limit,
            relative_limit,
            ..
        } => LeastShard::new(*absolute_limit, *relative_limit)
            .ok()
            .map(|l| l.limit(total)),
        StrategyConfig::LeastShardLegacy {
            max_simultaneous_rebalance,
            ..
        } => Some((*max_simultaneous_rebalance).max(0) as usize),
        StrategyConfig::ConsistentHashing {
            rebalance_limit, ..
        } => (*rebalance_limit > 0).then_some(*rebalance_limit as usize),
        StrategyConfig::ActorTsLeastShard {
            max_simultaneous_rebalance,
            ..
        } => Some((*max_simultaneous_rebalance).max(0) as usize),
        StrategyConfig::BoundedLoadHashing {
            epsilon,
            absolute_limit,
            relative_limit,
            virtual_nodes_factor,
        } => BoundedLoadHashing::new(
            *epsilon,
            *absolute_limit,
            *relative_limit,
            *virtual_nodes_factor,
        )
        .ok()
        .map(|b| b.limit(total)),
        StrategyConfig::ActorTsHash | StrategyConfig::External { .. } => None,
    }
}

/// The first difference between two coordinator states, ignoring shard versions (hand-off
/// starts bump them without an event; a successor's larger token outranks them anyway).
pub(super) fn state_difference(a: &PersistentState, b: &PersistentState) -> Option<String> {
    let (x, y) = (a.snapshot(), b.snapshot());
    if x.regions != y.regions {
        let show = |s: &crate::coordinator::Snapshot| {
            s.regions
                .iter()
                .map(|r| format!("{}@{}:[{}]", r.region, r.node, r.shards.join(",")))
                .collect::<Vec<_>>()
                .join(" ")
        };
        return Some(format!("regions differ: {} vs {}", show(&x), show(&y)));
    }
    if x.proxies != y.proxies {
        return Some("proxies differ".into());
    }
    if x.unallocated != y.unallocated {
        return Some(format!(
            "unallocated differ: {:?} vs {:?}",
            x.unallocated, y.unallocated
        ));
    }
    if x.remembered != y.remembered {
        return Some("remembered entities differ".into());
    }
    None
}

impl World {
    pub(super) fn start_coordinator(&mut self, k: usize) -> Result<()> {
        let inc = self.coords[k].incarnation;
        let strategy = self.cfg.strategy.build()?;
        let c = Coordinator::new(
            self.cfg.coordinator.clone(),
            strategy,
            self.coords[k].address.clone(),
        )?;
        self.clocks.reset(Proc::Coordinator(k));
        let name = if inc == 0 {
            format!("c{k}")
        } else {
            format!("c{k}.{inc}")
        };
        if let Some(r) = self.host.lock().recorder.as_mut() {
            r.create(
                MachineKind::Coordinator,
                &name,
                self.coords[k].address.as_str(),
            );
        }
        let shared = &self.host;
        let mut driver = CoordinatorDriver::new(
            c,
            Box::new(hosts::CoordinatorWire(shared.clone())),
            Box::new(self.coords[k].clock.clone()),
            Box::new(hosts::SimLease {
                shared: shared.clone(),
                lease: self.lease.contender(&format!("c{k}.{inc}")),
            }),
            Box::new(hosts::SimStore {
                shared: shared.clone(),
                store: self.store.clone(),
                k,
            }),
        );
        driver.observe(Box::new(hosts::CoordinatorWatch {
            shared: shared.clone(),
            k,
            name: name.clone(),
        }));
        self.coords[k].name = name;
        self.coords[k].driver = Some(driver);
        for (m, unreachable) in self.members() {
            let address = m.address.as_str().to_owned();
            self.coordinator_do(
                k,
                CoordinatorStep::Input(CoordinatorInput::Member(Box::new(m))),
            );
            if unreachable {
                self.coordinator_do(
                    k,
                    CoordinatorStep::Input(CoordinatorInput::Reachability {
                        address,
                        reachable: false,
                    }),
                );
            }
        }
        self.coordinator_do(k, CoordinatorStep::Start);
        Ok(())
    }

    /// Makes a call on a live coordinator through its driver, then carries out what its
    /// hosts were asked to do.
    pub(super) fn coordinator_do(&mut self, k: usize, step: CoordinatorStep) {
        let local = self.clocks.local(Proc::Coordinator(k), self.now);
        let slot = &mut self.coords[k];
        let Some(driver) = slot.driver.as_mut() else {
            return;
        };
        slot.clock.set(local);
        self.host.lock().now = self.now;
        // The coordinator's own errors reach the world through its watch; the hosts' errors
        // are the faults the world injected.
        let _ = hosts::drive_coordinator(driver, step);
        driver.take_notices();
        self.carry_out();
        if self.coords[k].check_restore && self.coords[k].c().is_some_and(Coordinator::is_active) {
            self.coords[k].check_restore = false;
            self.check_restore(k);
        }
    }

    pub(super) fn coordinator_timeout(&mut self, k: usize) {
        let Some(c) = self.coords[k].c() else {
            return;
        };
        let total = c.state().shard_count();
        let before = self.rebalance_moves;
        self.coordinator_do(k, CoordinatorStep::Timeout);
        let moves = self.rebalance_moves - before;
        if moves == 0 {
            return;
        }
        self.max_moves_per_round = self.max_moves_per_round.max(moves);
        if self.measuring {
            self.rounds_since_action += 1;
        }
        let limit = round_limit(&self.cfg.strategy, total);
        if let Some(limit) = limit {
            if moves as usize > limit {
                self.checker.violate(
                    self.now,
                    "moves-over-limit",
                    format!(
                        "one rebalance round started {moves} hand-offs; the strategy allows {limit}"
                    ),
                );
            }
        }
        if let StrategyConfig::LeastShardLegacy {
            max_simultaneous_rebalance,
            ..
        } = &self.cfg.strategy
        {
            let running = self.coords[k]
                .c()
                .map_or(0, |c| c.handoffs_in_progress().len());
            if running > (*max_simultaneous_rebalance).max(0) as usize {
                self.checker.violate(
                    self.now,
                    "moves-over-limit",
                    format!(
                        "{running} hand-offs in progress; maxSimultaneousRebalance is {max_simultaneous_rebalance}"
                    ),
                );
            }
        }
    }

    /// A snapshot the store took must hold what the stored events add up to.
    pub(super) fn check_snapshot(&mut self, k: usize, snapshot: &Snapshot) {
        let mut reference = self.reference.snapshot();
        let mut ours = snapshot.clone();
        reference.versions.clear();
        ours.versions.clear();
        if reference != ours {
            self.checker.violate(
                self.now,
                "snapshot-mismatch",
                format!(
                    "c{k} saved a snapshot at event {} that differs from its events",
                    snapshot.seq
                ),
            );
        }
    }

    pub(super) fn coordinator_notice(&mut self, k: usize, n: CoordinatorNotice) {
        self.trace(&format!("c{k}"), &n);
        match n {
            CoordinatorNotice::Active { .. } => {
                self.coordinator_stats.takeovers += 1;
                self.coords[k].check_restore = true;
                let incarnation = self.coords[k].incarnation;
                let watch = self.now + self.rng.range(1, 20);
                self.agenda
                    .push(watch, Event::WatchState { k, incarnation });
                let at = self.now + self.rng.range(10, 300);
                self.agenda.push(at, Event::CoordinatorChanged);
            }
            CoordinatorNotice::SteppedDown { .. } => self.coordinator_stats.step_downs += 1,
            CoordinatorNotice::HandOffStarted { rebalance, .. } => {
                self.handoffs.started += 1;
                self.last_change = self.now;
                if rebalance {
                    self.rebalance_moves += 1;
                }
                if self.measuring {
                    self.shards_moved += 1;
                }
                if self.steady {
                    self.moves_at_steady += 1;
                    self.checker.violate(
                        self.now,
                        "moves-at-steady-state",
                        "a hand-off started although nothing changed",
                    );
                }
            }
            CoordinatorNotice::HandOffCompleted { .. } => {
                self.handoffs.completed += 1;
                self.last_change = self.now;
            }
            CoordinatorNotice::HandOffTimedOut { .. } => self.handoffs.timed_out += 1,
            // The simulated hosts report well-formed loads and offers only.
            CoordinatorNotice::CommandRefused { region, reason, .. } => self.checker.violate(
                self.now,
                "command-refused",
                format!("c{k} refused a command of {region}: {reason}"),
            ),
            CoordinatorNotice::RegisterRefused { .. }
            | CoordinatorNotice::AllocationFailed { .. }
            | CoordinatorNotice::Allocated { .. }
            | CoordinatorNotice::RebalanceRound { .. } => {}
        }
    }

    pub(super) fn mirror(&mut self, record: &crate::coordinator::Record) {
        if let Err(e) = self.reference.recover(record) {
            self.checker.violate(
                self.now,
                "store-error",
                format!("stored event does not apply: {e}"),
            );
            return;
        }
        if let crate::coordinator::Event::ShardHomeAllocated { .. }
        | crate::coordinator::Event::ShardHomeDeallocated { .. } = record.event
        {
            self.last_change = self.now;
            if self.measuring
                && matches!(
                    record.event,
                    crate::coordinator::Event::ShardHomeAllocated { .. }
                )
            {
                self.allocations += 1;
            }
        }
    }

    /// Death watch for a coordinator that restored its state: every region and proxy in it
    /// that is already gone is reported terminated.
    pub(super) fn watch_state(&mut self, k: usize, incarnation: u32) {
        if self.coords[k].incarnation != incarnation {
            return;
        }
        let Some(c) = self.coords[k].c().filter(|c| c.is_active()) else {
            return;
        };
        let dead: Vec<String> = c
            .state()
            .regions()
            .map(|(r, _, _)| r.clone())
            .chain(c.state().proxies().map(|(p, _)| p.clone()))
            .filter(|r| self.gone.contains_key(r))
            .collect();
        for region in dead {
            self.coordinator_do(
                k,
                CoordinatorStep::Input(CoordinatorInput::RegionTerminated { region }),
            );
        }
    }

    /// A coordinator just restored from the store: it must hold exactly what the store holds,
    /// and, if it replaces one that crashed, decide as that one would have.
    pub(super) fn check_restore(&mut self, k: usize) {
        let Some(c) = self.coords[k].c() else {
            return;
        };
        if let Some(diff) = state_difference(c.state(), &self.reference) {
            self.checker.violate(
                self.now,
                "restore-mismatch",
                format!("c{k} restored a state unlike the store's: {diff}"),
            );
        }
        if !std::mem::take(&mut self.failover_pending) {
            return;
        }
        self.coordinator_stats.restores_checked += 1;
        let before = self.failover_probe.take();
        let after = self.decisions(c.allocation(), c.state().seq());
        if let (Some(before), Some(after)) = (before, after) {
            if after.seq == before.seq
                && after.membership == before.membership
                && (after.rebalance != before.rebalance || after.allocate != before.allocate)
            {
                self.checker.violate(
                    self.now,
                    "decision-mismatch",
                    format!(
                        "restored c{k} decides rebalance {:?} / allocate {:?}; its crashed predecessor decided {:?} / {:?}",
                        after.rebalance, after.allocate, before.rebalance, before.allocate
                    ),
                );
            }
        }
    }

    pub(super) fn decisions(&self, alloc: &AllocationState, seq: u64) -> Option<Decisions> {
        if alloc.regions().any(|r| !r.is_eligible()) {
            return None;
        }
        let mut s = self.cfg.strategy.build().ok()?;
        let rebalance = s
            .rebalance(alloc, &InProgress::new(), None)
            .ok()?
            .iter()
            .map(|x| x.to_string())
            .collect();
        let probe = self.cfg.shards.to_string();
        let allocate = match s.allocate(alloc, None, &probe, None).ok()? {
            Allocation::Region(r) => Some(r.to_string()),
            Allocation::Pending => None,
        };
        Some(Decisions {
            seq,
            membership: self.membership_gen,
            rebalance,
            allocate,
        })
    }

    /// The coordinator that is active with the newest token.
    pub fn active_coordinator(&self) -> Option<usize> {
        self.coords
            .iter()
            .enumerate()
            .filter(|(_, s)| s.c().is_some_and(Coordinator::is_active))
            .max_by_key(|(_, s)| s.c().and_then(Coordinator::token))
            .map(|(k, _)| k)
    }
}
