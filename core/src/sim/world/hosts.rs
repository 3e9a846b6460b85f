//! The simulated hosts: implementations of the driver's host traits (transport, clock,
//! lease, store, entity host) that reach the simulated cluster, so every simulated
//! coordinator and region runs inside the same [`CoordinatorDriver`] and [`RegionDriver`]
//! that the C, Python, Node and JVM hosts use.
//!
//! A driver call cannot borrow the world, so the hosts answer what must be answered at once
//! (store writes, lease calls, with the simulator's injected failures) and leave everything
//! else as [`Effect`]s, in the order they happened; the world carries those out right after
//! the call returns, before anything else happens in the simulation.
//!
//! [`CoordinatorDriver`]: crate::host::CoordinatorDriver
//! [`RegionDriver`]: crate::host::RegionDriver

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::coordinator::LeaseGrant;
use crate::coordinator::StoredState;
use crate::coordinator::{
    Coordinator, CoordinatorInput, CoordinatorNotice, CoordinatorOutput, Record, Snapshot,
};
use crate::host::{
    Clock, CoordinatorDriver, CoordinatorObserver, EntityHost, RegionDriver, RegionObserver,
    Transport,
};
use crate::host::{InMemoryLease, Lease};
use crate::host::{InMemoryStore, Store, WriteOutcome};
use crate::protocol::{EntityId, Envelope, FencingToken, Payload, ShardId};
use crate::region::{Region, RegionInput, RegionNotice, RegionOutput};
use crate::replay::{CoordinatorStep, Recorder, RegionStep};
use crate::{Error, Result};

use super::World;

/// Something a host did during a driver call that the world reacts to.
#[derive(Debug)]
pub(super) enum Effect {
    CoordinatorSend(Envelope),
    /// A record the store took.
    Persisted {
        k: usize,
        record: Record,
    },
    SnapshotSaved {
        k: usize,
        snapshot: Snapshot,
    },
    Fenced,
    StoreError {
        k: usize,
        error: String,
    },
    InjectedStoreFailure,
    InjectedRenewFailure,
    CoordinatorNotice {
        k: usize,
        notice: CoordinatorNotice,
    },
    /// The coordinator itself refused a call: always a bug.
    CoordinatorError {
        k: usize,
        error: String,
    },
    RegionSend {
        region: String,
        env: Envelope,
    },
    Deliver {
        region: String,
        payload: Payload,
    },
    StopShard {
        region: String,
        shard: ShardId,
    },
    Undeliverable {
        region: String,
        shard: ShardId,
        entity: EntityId,
        payload: Payload,
        reason: String,
    },
    Stopped {
        region: String,
    },
    RegionNotice(RegionNotice),
}

/// What the world shares with its hosts.
#[derive(Default)]
pub(super) struct HostState {
    /// True time: the lease backend runs on it.
    pub now: u64,
    /// The next store write fails: `Some(false)` before it lands, `Some(true)` after.
    pub store_fail_armed: Option<bool>,
    /// The next lease renewal fails.
    pub renew_fail_armed: bool,
    pub effects: Vec<Effect>,
    /// Writes every call on a machine and its outputs, when a trace is being recorded.
    pub recorder: Option<Recorder>,
    /// Every notice of every machine as a JSON line, when the run's events are asked for.
    pub events: Option<String>,
}

impl HostState {
    /// One line of the event log: when (true time), which machine, and the notice as the
    /// step API gives it.
    fn event(&mut self, source: &str, machine: &str, notice: &impl serde::Serialize) {
        let now = self.now;
        if let Some(log) = self.events.as_mut() {
            let line = serde_json::json!({
                "atMs": now, "source": source, "machine": machine, "event": notice,
            });
            log.push_str(&line.to_string());
            log.push('\n');
        }
    }
}

#[derive(Clone, Default)]
pub(super) struct Shared(Arc<Mutex<HostState>>);

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, HostState> {
        // A panic while holding it ends the simulation anyway.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, effect: Effect) {
        self.lock().effects.push(effect);
    }
}

/// A process's local clock, set by the world before each call; it may jump backwards.
#[derive(Clone, Default)]
pub(super) struct ProcessClock(Arc<AtomicU64>);

impl ProcessClock {
    pub fn set(&self, now_ms: u64) {
        self.0.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ProcessClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

pub(super) struct CoordinatorWire(pub Shared);

impl Transport for CoordinatorWire {
    fn send(&mut self, envelope: Envelope) -> Result<()> {
        self.0.push(Effect::CoordinatorSend(envelope));
        Ok(())
    }
}

pub(super) struct RegionWire {
    pub shared: Shared,
    pub region: String,
}

impl Transport for RegionWire {
    fn send(&mut self, env: Envelope) -> Result<()> {
        self.shared.push(Effect::RegionSend {
            region: self.region.clone(),
            env,
        });
        Ok(())
    }
}

fn injected() -> Error {
    Error::invalid_state("injected failure")
}

/// The shared store as coordinator `k` reaches it, failing when the world armed a failure.
pub(super) struct SimStore {
    pub shared: Shared,
    pub store: InMemoryStore,
    pub k: usize,
}

impl SimStore {
    fn outcome(&self, outcome: Result<WriteOutcome>, written: Effect) -> Result<WriteOutcome> {
        match outcome {
            Ok(WriteOutcome::Written) => self.shared.push(written),
            Ok(WriteOutcome::Fenced { .. }) => self.shared.push(Effect::Fenced),
            Err(ref e) => self.shared.push(Effect::StoreError {
                k: self.k,
                error: e.to_string(),
            }),
        }
        outcome
    }
}

impl Store for SimStore {
    fn append(&mut self, token: FencingToken, record: &Record) -> Result<WriteOutcome> {
        let armed = self.shared.lock().store_fail_armed.take();
        if armed == Some(false) {
            self.shared.push(Effect::InjectedStoreFailure);
            return Err(injected());
        }
        let written = Effect::Persisted {
            k: self.k,
            record: record.clone(),
        };
        let outcome = self.store.append(token, record);
        let outcome = self.outcome(outcome, written);
        if armed == Some(true) {
            // Written, but the answer never came back.
            self.shared.push(Effect::InjectedStoreFailure);
            return Err(injected());
        }
        outcome
    }

    fn save_snapshot(&mut self, token: FencingToken, snapshot: &Snapshot) -> Result<WriteOutcome> {
        let written = Effect::SnapshotSaved {
            k: self.k,
            snapshot: snapshot.clone(),
        };
        let outcome = self.store.save_snapshot(token, snapshot);
        self.outcome(outcome, written)
    }

    fn load(&mut self, token: FencingToken) -> Result<Option<StoredState>> {
        self.store.load(token)
    }
}

/// The shared lease backend, on true time, as a coordinator sees it on its own clock.
pub(super) struct SimLease {
    pub shared: Shared,
    pub lease: InMemoryLease,
}

impl SimLease {
    /// The backend's deadline on the holder's clock.
    fn to_local(&self, until: u64, local: u64) -> u64 {
        local + until.saturating_sub(self.shared.lock().now)
    }
}

impl Lease for SimLease {
    fn acquire(&mut self, local: u64) -> Result<Option<LeaseGrant>> {
        let now = self.shared.lock().now;
        Ok(self.lease.acquire(now)?.map(|g| LeaseGrant {
            token: g.token,
            valid_until_ms: self.to_local(g.valid_until_ms, local),
        }))
    }

    fn renew(&mut self, token: FencingToken, local: u64) -> Result<Option<u64>> {
        if std::mem::take(&mut self.shared.lock().renew_fail_armed) {
            self.shared.push(Effect::InjectedRenewFailure);
            return Err(injected());
        }
        let now = self.shared.lock().now;
        Ok(self
            .lease
            .renew(token, now)?
            .map(|until| self.to_local(until, local)))
    }

    fn release(&mut self, token: FencingToken) -> Result<()> {
        self.lease.release(token)
    }
}

/// Entities live in the world: deliveries are checked, stops take simulated time.
pub(super) struct SimEntities {
    pub shared: Shared,
    pub region: String,
}

impl EntityHost for SimEntities {
    fn start_shard(&mut self, _: &str, _: &[EntityId]) -> Result<()> {
        Ok(())
    }

    fn deliver(&mut self, _: &str, _: &str, payload: Payload) -> Result<()> {
        self.shared.push(Effect::Deliver {
            region: self.region.clone(),
            payload,
        });
        Ok(())
    }

    fn stop_shard(&mut self, shard: &str) -> Result<bool> {
        self.shared.push(Effect::StopShard {
            region: self.region.clone(),
            shard: shard.into(),
        });
        Ok(false)
    }

    fn undeliverable(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
        reason: &str,
    ) -> Result<()> {
        self.shared.push(Effect::Undeliverable {
            region: self.region.clone(),
            shard: shard.into(),
            entity: entity.into(),
            payload,
            reason: reason.to_owned(),
        });
        Ok(())
    }

    fn stopped(&mut self) -> Result<()> {
        self.shared.push(Effect::Stopped {
            region: self.region.clone(),
        });
        Ok(())
    }
}

/// Records a coordinator's calls and outputs into the trace, and hands its notices and
/// errors to the world in the order they came.
pub(super) struct CoordinatorWatch {
    pub shared: Shared,
    pub k: usize,
    pub name: String,
}

impl CoordinatorObserver for CoordinatorWatch {
    fn called(&mut self, now: u64, step: &CoordinatorStep, c: &Coordinator, result: &Result<()>) {
        let mut host = self.shared.lock();
        if let Some(r) = host.recorder.as_mut() {
            r.called(&self.name, c, now, step, result);
        }
        if let Err(e) = result {
            host.effects.push(Effect::CoordinatorError {
                k: self.k,
                error: e.to_string(),
            });
        }
    }

    fn output(&mut self, output: &CoordinatorOutput) {
        let mut host = self.shared.lock();
        if let Some(r) = host.recorder.as_mut() {
            r.output(&self.name, output);
        }
        if let CoordinatorOutput::Notice(n) = output {
            host.event("coordinator", &self.name, n);
            host.effects.push(Effect::CoordinatorNotice {
                k: self.k,
                notice: n.clone(),
            });
        }
    }
}

/// Records a region's calls and outputs into the trace.
pub(super) struct RegionWatch {
    pub shared: Shared,
    pub name: String,
}

impl RegionObserver for RegionWatch {
    fn called(&mut self, now: u64, step: &RegionStep, region: &Region, result: &Result<()>) {
        if let Some(r) = self.shared.lock().recorder.as_mut() {
            r.called(&self.name, region, now, step, result);
        }
    }

    fn output(&mut self, output: &RegionOutput) {
        let mut host = self.shared.lock();
        if let Some(r) = host.recorder.as_mut() {
            r.output(&self.name, output);
        }
        if let RegionOutput::Notice(n) = output {
            host.event("region", &self.name, n);
            host.effects.push(Effect::RegionNotice(n.clone()));
        }
    }
}

/// Makes a simulated call through the driver's own entry points.
pub(super) fn drive_coordinator(d: &mut CoordinatorDriver, step: CoordinatorStep) -> Result<()> {
    match step {
        CoordinatorStep::Start => d.start(),
        CoordinatorStep::Timeout => d.poll().map(drop),
        CoordinatorStep::Input(CoordinatorInput::Receive(env)) => d.receive(env),
        CoordinatorStep::Input(CoordinatorInput::Member(m)) => d.member(*m),
        CoordinatorStep::Input(CoordinatorInput::MemberRemoved { address }) => {
            d.member_removed(&address)
        }
        CoordinatorStep::Input(CoordinatorInput::Reachability { address, reachable }) => {
            d.reachability(&address, reachable)
        }
        CoordinatorStep::Input(CoordinatorInput::RegionTerminated { region }) => {
            d.region_terminated(&region)
        }
        CoordinatorStep::Input(CoordinatorInput::Drain { region }) => d.drain(&region),
        CoordinatorStep::Input(CoordinatorInput::Undrain { region }) => d.undrain(&region),
        CoordinatorStep::Input(other) => Err(Error::invalid_argument(format!(
            "the driver feeds {other:?} itself"
        ))),
    }
}

/// Makes a simulated call through the driver's own entry points.
pub(super) fn drive_region(d: &mut RegionDriver, step: RegionStep) -> Result<()> {
    match step {
        RegionStep::Start => d.start(),
        RegionStep::Timeout => d.poll().map(drop),
        RegionStep::Route {
            shard,
            entity,
            payload,
        } => d.route_to_shard(&shard, &entity, payload),
        RegionStep::Input(i) => match i {
            RegionInput::Receive(env) => d.receive(env),
            RegionInput::ShardStopped { shard } => d.shard_stopped(&shard),
            RegionInput::EntityPassivated { shard, entity } => d.entity_passivated(&shard, &entity),
            RegionInput::CoordinatorChanged => d.coordinator_changed(),
            RegionInput::RegionTerminated { region } => d.region_terminated(&region),
            RegionInput::GracefulShutdown => d.graceful_shutdown(),
            RegionInput::ReportLoads { loads } => d.report_loads(loads),
            RegionInput::UpdateOffer { offer } => d.update_offer(offer),
        },
    }
}

impl World {
    /// Carries out, in order, what the hosts were asked to do during the last driver call.
    pub(super) fn carry_out(&mut self) {
        let effects = std::mem::take(&mut self.host.lock().effects);
        for effect in effects {
            match effect {
                Effect::CoordinatorSend(env) => self.send_from_coordinator(env),
                Effect::Persisted { k, record } => {
                    self.trace(&format!("c{k} persisted"), &record.event);
                    self.mirror(&record);
                }
                Effect::SnapshotSaved { k, snapshot } => self.check_snapshot(k, &snapshot),
                Effect::Fenced => self.coordinator_stats.fenced_writes += 1,
                Effect::StoreError { k, error } => {
                    self.checker
                        .violate(self.now, "store-error", format!("c{k}: {error}"));
                }
                Effect::InjectedStoreFailure => self.injected.store_failures += 1,
                Effect::InjectedRenewFailure => self.injected.lease_renew_failures += 1,
                Effect::CoordinatorNotice { k, notice } => self.coordinator_notice(k, notice),
                Effect::CoordinatorError { k, error } => {
                    self.checker
                        .violate(self.now, "coordinator-error", format!("c{k}: {error}"));
                }
                Effect::RegionSend { region, env } => {
                    self.trace(&region, &(&env.to, &env.message));
                    self.send_from_region(&region, env);
                }
                Effect::Deliver { region, payload } => self.delivered(&region, &payload),
                Effect::StopShard { region, shard } => self.stop_shard(region, shard),
                Effect::Undeliverable {
                    region,
                    shard,
                    entity,
                    payload,
                    reason,
                } => self.bounce(&region, shard, entity, payload, &reason),
                Effect::Stopped { region } => self.region_stopped(&region),
                Effect::RegionNotice(RegionNotice::DirectiveRefused { .. }) => {
                    self.directives_refused += 1;
                }
                Effect::RegionNotice(RegionNotice::Registered { .. }) => {}
                Effect::RegionNotice(RegionNotice::InputRefused { reason, .. }) => {
                    self.checker.violate(self.now, "input-refused", reason);
                }
            }
        }
    }
}
