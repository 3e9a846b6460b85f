//! The coordinators' host: outputs carried out in order against the shared store and
//! lease, and the checks that tie a coordinator to what the store holds.

use crate::allocation::AllocationState;
use crate::coordinator::{Coordinator, Input, LeaseRequest, Notice, Output, PersistentState};
use crate::lease::{Lease, LeaseGrant};
use crate::replay::{CoordinatorStep, MachineKind, Recorder};
use crate::store::{Store, WriteOutcome};
use crate::strategy::{Allocation, BoundedLoadHashing, InProgress, LeastShard, StrategyConfig};
use crate::Result;

use super::super::clock::Proc;
use super::{Event, World};

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

/// Makes a coordinator call, through the recorder when a trace is being recorded.
fn call(
    recorder: Option<&mut Recorder>,
    name: &str,
    c: &mut Coordinator,
    now: u64,
    step: CoordinatorStep,
) -> Result<()> {
    match recorder {
        Some(r) => r.call(name, c, now, step),
        None => step.apply(c, now),
    }
}

impl World {
    pub(super) fn start_coordinator(&mut self, k: usize) -> Result<()> {
        let inc = self.coords[k].incarnation;
        let strategy = self.cfg.strategy.build()?;
        let mut c = Coordinator::new(
            self.cfg.coordinator.clone(),
            strategy,
            self.coords[k].address.clone(),
        )?;
        self.clocks.reset(Proc::Coordinator(k));
        let now = self.clocks.local(Proc::Coordinator(k), self.now);
        let name = if inc == 0 {
            format!("c{k}")
        } else {
            format!("c{k}.{inc}")
        };
        if let Some(r) = self.recorder.as_mut() {
            r.create(
                MachineKind::Coordinator,
                &name,
                self.coords[k].address.as_str(),
            );
        }
        let members = self.members();
        let mut call =
            |c: &mut Coordinator, step| call(self.recorder.as_mut(), &name, c, now, step);
        for (m, unreachable) in members {
            let address = m.address.as_str().to_owned();
            call(&mut c, CoordinatorStep::Input(Input::Member(m)))?;
            if unreachable {
                call(
                    &mut c,
                    CoordinatorStep::Input(Input::Reachability {
                        address,
                        reachable: false,
                    }),
                )?;
            }
        }
        self.coords[k].lease = self.lease.contender(&format!("c{k}.{inc}"));
        call(&mut c, CoordinatorStep::Start)?;
        self.coords[k].name = name;
        self.coords[k].c = Some(c);
        self.pump_coordinator(k);
        Ok(())
    }

    /// Makes a call on a live coordinator and carries out its outputs.
    pub(super) fn coordinator_do(&mut self, k: usize, step: CoordinatorStep) {
        if self.coords[k].c.is_none() {
            return;
        }
        self.feed_step(k, step);
        self.pump_coordinator(k);
    }

    /// Makes a call on a live coordinator, leaving its outputs queued.
    fn feed_step(&mut self, k: usize, step: CoordinatorStep) {
        let now = self.clocks.local(Proc::Coordinator(k), self.now);
        let slot = &mut self.coords[k];
        let Some(c) = slot.c.as_mut() else {
            return;
        };
        if let Err(e) = call(self.recorder.as_mut(), &slot.name, c, now, step) {
            self.checker
                .violate(self.now, "coordinator-error", format!("c{k}: {e}"));
        }
    }

    /// The next output of a live coordinator, recorded as taken.
    fn poll_coordinator(&mut self, k: usize) -> Option<Output> {
        let slot = &mut self.coords[k];
        let o = slot.c.as_mut()?.poll_output()?;
        if let Some(r) = self.recorder.as_mut() {
            r.output(&slot.name, &o);
        }
        Some(o)
    }

    pub(super) fn coordinator_timeout(&mut self, k: usize) {
        let Some(c) = self.coords[k].c.as_ref() else {
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
                .c
                .as_ref()
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

    /// Carries out a coordinator's outputs in order, as the contract requires: a failed or
    /// fenced write drops everything queued after it.
    pub(super) fn pump_coordinator(&mut self, k: usize) {
        while let Some(o) = self.poll_coordinator(k) {
            match o {
                Output::Send(env) => self.send_from_coordinator(env),
                Output::Persist { token, record } => {
                    self.trace(&format!("c{k} persist {token}"), &record.event);
                    let armed = if self.chaos_on {
                        self.store_fail_armed.take()
                    } else {
                        None
                    };
                    if armed == Some(false) {
                        self.injected.store_failures += 1;
                        self.feed_after_failure(k, Input::StoreFailed { fenced: false });
                        continue;
                    }
                    let outcome = self.store.append(token, &record);
                    if let Ok(WriteOutcome::Written) = outcome {
                        self.mirror(&record);
                    }
                    if armed == Some(true) {
                        // Written, but the answer never came back.
                        self.injected.store_failures += 1;
                        self.feed_after_failure(k, Input::StoreFailed { fenced: false });
                        continue;
                    }
                    match outcome {
                        Ok(WriteOutcome::Written) => {}
                        Ok(WriteOutcome::Fenced { .. }) => {
                            self.coordinator_stats.fenced_writes += 1;
                            self.feed_after_failure(k, Input::StoreFailed { fenced: true });
                        }
                        Err(e) => {
                            self.checker
                                .violate(self.now, "store-error", format!("c{k}: {e}"));
                            self.feed_after_failure(k, Input::StoreFailed { fenced: false });
                        }
                    }
                }
                Output::SaveSnapshot { token, snapshot } => {
                    match self.store.save_snapshot(token, &snapshot) {
                        Ok(WriteOutcome::Written) => {
                            let mut reference = self.reference.snapshot();
                            let mut ours = snapshot.clone();
                            reference.versions.clear();
                            ours.versions.clear();
                            if reference != ours {
                                self.checker.violate(
                                    self.now,
                                    "snapshot-mismatch",
                                    format!("c{k} saved a snapshot at event {} that differs from its events", snapshot.seq),
                                );
                            }
                        }
                        Ok(WriteOutcome::Fenced { .. }) => {
                            self.coordinator_stats.fenced_writes += 1;
                            self.feed_after_failure(k, Input::StoreFailed { fenced: true });
                        }
                        Err(e) => {
                            self.checker
                                .violate(self.now, "store-error", format!("c{k}: {e}"));
                            self.feed_after_failure(k, Input::StoreFailed { fenced: false });
                        }
                    }
                }
                Output::Lease(req) => self.lease_request(k, req),
                Output::LoadState { token } => {
                    let input = match self.store.load(token) {
                        Ok(Some(stored)) => Input::StateLoaded(stored),
                        Ok(None) => Input::StateLoadFailed { fenced: true },
                        Err(_) => Input::StateLoadFailed { fenced: false },
                    };
                    self.feed(k, input);
                }
                Output::Notice(n) => self.coordinator_notice(k, n),
            }
        }
        if self.coords[k].check_restore
            && self.coords[k]
                .c
                .as_ref()
                .is_some_and(Coordinator::is_active)
        {
            self.coords[k].check_restore = false;
            self.check_restore(k);
        }
    }

    pub(super) fn feed(&mut self, k: usize, input: Input) {
        if !matches!(input, Input::StateLoaded(_)) {
            self.trace(&format!("c{k} input"), &input);
        }
        self.feed_step(k, CoordinatorStep::Input(input));
    }

    pub(super) fn feed_after_failure(&mut self, k: usize, input: Input) {
        while self.poll_coordinator(k).is_some() {}
        self.feed(k, input);
    }

    pub(super) fn lease_request(&mut self, k: usize, req: LeaseRequest) {
        self.trace(&format!("c{k} lease"), &req);
        let local = self.clocks.local(Proc::Coordinator(k), self.now);
        // The backend runs on true time; the holder turns its answer into a local deadline.
        let to_local = |until: u64, now: u64| local + until.saturating_sub(now);
        let input = match req {
            LeaseRequest::Acquire => match self.coords[k].lease.acquire(self.now) {
                Ok(Some(g)) => Input::LeaseGranted(LeaseGrant {
                    token: g.token,
                    valid_until_ms: to_local(g.valid_until_ms, self.now),
                }),
                _ => Input::LeaseDenied,
            },
            LeaseRequest::Renew { token } => {
                if std::mem::take(&mut self.renew_fail_armed) {
                    self.injected.lease_renew_failures += 1;
                    Input::LeaseRenewFailed { token }
                } else {
                    match self.coords[k].lease.renew(token, self.now) {
                        Ok(Some(until)) => Input::LeaseRenewed {
                            token,
                            valid_until_ms: to_local(until, self.now),
                        },
                        Ok(None) => Input::LeaseLost { token },
                        Err(_) => Input::LeaseRenewFailed { token },
                    }
                }
            }
            LeaseRequest::Release { token } => {
                let _ = self.coords[k].lease.release(token);
                return;
            }
        };
        self.feed(k, input);
    }

    pub(super) fn coordinator_notice(&mut self, k: usize, n: Notice) {
        self.trace(&format!("c{k}"), &n);
        match n {
            Notice::Active { .. } => {
                self.coordinator_stats.takeovers += 1;
                self.coords[k].check_restore = true;
                let incarnation = self.coords[k].incarnation;
                let watch = self.now + self.rng.range(1, 20);
                self.agenda
                    .push(watch, Event::WatchState { k, incarnation });
                let at = self.now + self.rng.range(10, 300);
                self.agenda.push(at, Event::CoordinatorChanged);
            }
            Notice::SteppedDown { .. } => self.coordinator_stats.step_downs += 1,
            Notice::HandOffStarted { rebalance, .. } => {
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
            Notice::HandOffCompleted { .. } => {
                self.handoffs.completed += 1;
                self.last_change = self.now;
            }
            Notice::HandOffTimedOut { .. } => self.handoffs.timed_out += 1,
            Notice::RegisterRefused { .. } | Notice::AllocationFailed { .. } => {}
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
        let Some(c) = self.coords[k].c.as_ref().filter(|c| c.is_active()) else {
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
            self.feed(k, Input::RegionTerminated { region });
        }
        self.pump_coordinator(k);
    }

    /// A coordinator just restored from the store: it must hold exactly what the store holds,
    /// and, if it replaces one that crashed, decide as that one would have.
    pub(super) fn check_restore(&mut self, k: usize) {
        let Some(c) = self.coords[k].c.as_ref() else {
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
            .filter(|(_, s)| s.c.as_ref().is_some_and(Coordinator::is_active))
            .max_by_key(|(_, s)| s.c.as_ref().and_then(Coordinator::token))
            .map(|(k, _)| k)
    }
}
