//! Callback drivers for hosts that prefer "call me" to "poll me": they run the step machines
//! and carry out every output through host-implemented traits.
//!
//! All traits are object safe and the drivers are not generic, so C, Python, Node and JVM
//! bindings can wrap them. Every callback error is a [`crate::Error`]. A driver keeps going
//! after a failed callback (the state machine must stay consistent with what was already
//! done) and returns the first error once the outputs are drained.
//!
//! Store and lease calls are synchronous here; a host with asynchronous backends drives a
//! [`CoordinatorPipeline`], which the coordinator's driver is built on.
//!
//! An observer sees every call a driver makes on its machine (including the inputs it feeds
//! back from store and lease answers) and every output it takes, in order: enough to record a
//! replayable trace of a driven machine, which is how the simulator records its runs.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::coordinator::{Coordinator, CoordinatorInput, CoordinatorNotice, CoordinatorOutput};
use crate::host::{Completion, CoordinatorPipeline, Operation};
use crate::host::{Lease, Store};
use crate::model::{Amount, Member};
use crate::protocol::{EntityId, Envelope, Payload, RegionId, RegionOffer, ShardId};
use crate::region::{Region, RegionInput, RegionNotice, RegionOutput, Rejected};
use crate::replay::{CoordinatorStep, RegionStep};
use crate::Result;

/// Carries envelopes to their [`Envelope::to`]. Delivery may be lossy and reordered; the
/// protocol copes.
pub trait Transport: Send {
    fn send(&mut self, envelope: Envelope) -> Result<()>;
}

/// The host's monotonic clock, in milliseconds.
pub trait Clock: Send {
    fn now_ms(&self) -> u64;
}

/// Where a region's shards and entities live.
pub trait EntityHost: Send {
    /// Start hosting `shard`; `entities` are remembered ones to start right away.
    fn start_shard(&mut self, shard: &str, entities: &[EntityId]) -> Result<()>;
    /// More remembered entities for a running shard.
    fn start_entities(&mut self, shard: &str, entities: &[EntityId]) -> Result<()> {
        self.start_shard(shard, entities)
    }
    fn deliver(&mut self, shard: &str, entity: &str, payload: Payload) -> Result<()>;
    /// Stop every entity of `shard`. Return `true` if they are already stopped; otherwise
    /// call [`RegionDriver::shard_stopped`] when they are.
    fn stop_shard(&mut self, shard: &str) -> Result<bool>;
    /// A message forwarded by another region that this region could not keep.
    fn undeliverable(
        &mut self,
        _shard: &str,
        _entity: &str,
        _payload: Payload,
        _reason: &str,
    ) -> Result<()> {
        Ok(())
    }
    /// Graceful shutdown finished.
    fn stopped(&mut self) -> Result<()> {
        Ok(())
    }
}

/// A clock the host (or a test) sets; clones share the time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    pub fn new(now_ms: u64) -> ManualClock {
        ManualClock(Arc::new(AtomicU64::new(now_ms)))
    }
    pub fn set(&self, now_ms: u64) {
        self.0.fetch_max(now_ms, Ordering::SeqCst);
    }
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Watches a [`CoordinatorDriver`]: each call with its result, then each output as it is
/// taken, before it is carried out.
pub trait CoordinatorObserver: Send {
    fn called(
        &mut self,
        now_ms: u64,
        step: &CoordinatorStep,
        coordinator: &Coordinator,
        result: &Result<()>,
    );
    fn output(&mut self, output: &CoordinatorOutput);
}

/// Watches a [`RegionDriver`] the way [`CoordinatorObserver`] watches a coordinator's.
pub trait RegionObserver: Send {
    fn called(&mut self, now_ms: u64, step: &RegionStep, region: &Region, result: &Result<()>);
    fn output(&mut self, output: &RegionOutput);
}

fn keep_first(first: &mut Option<crate::Error>, r: Result<()>) {
    if let Err(e) = r {
        first.get_or_insert(e);
    }
}

/// A [`CoordinatorPipeline`] whose every operation is carried out, through the host's
/// traits, as soon as it is handed out.
pub struct CoordinatorDriver {
    pipeline: CoordinatorPipeline,
    transport: Box<dyn Transport>,
    clock: Box<dyn Clock>,
    lease: Box<dyn Lease>,
    store: Box<dyn Store>,
}

impl CoordinatorDriver {
    pub fn new(
        coordinator: Coordinator,
        transport: Box<dyn Transport>,
        clock: Box<dyn Clock>,
        lease: Box<dyn Lease>,
        store: Box<dyn Store>,
    ) -> CoordinatorDriver {
        CoordinatorDriver {
            pipeline: CoordinatorPipeline::new(coordinator),
            transport,
            clock,
            lease,
            store,
        }
    }

    /// Shows every later call and output to `observer`.
    pub fn observe(&mut self, observer: Box<dyn CoordinatorObserver>) {
        self.pipeline.observe(observer);
    }

    pub fn coordinator(&self) -> &Coordinator {
        self.pipeline.coordinator()
    }

    /// Notices since the last call.
    pub fn take_notices(&mut self) -> Vec<CoordinatorNotice> {
        self.pipeline.take_notices()
    }

    pub fn start(&mut self) -> Result<()> {
        let now = self.clock.now_ms();
        let r = self.call(now, CoordinatorStep::Start);
        let ran = self.run();
        r?;
        ran
    }

    pub fn receive(&mut self, envelope: Envelope) -> Result<()> {
        self.input(CoordinatorInput::Receive(envelope))
    }

    pub fn member(&mut self, member: Member) -> Result<()> {
        self.input(CoordinatorInput::Member(Box::new(member)))
    }

    pub fn member_removed(&mut self, address: &str) -> Result<()> {
        self.input(CoordinatorInput::MemberRemoved {
            address: address.to_owned(),
        })
    }

    pub fn reachability(&mut self, address: &str, reachable: bool) -> Result<()> {
        self.input(CoordinatorInput::Reachability {
            address: address.to_owned(),
            reachable,
        })
    }

    pub fn region_terminated(&mut self, region: &str) -> Result<()> {
        self.input(CoordinatorInput::RegionTerminated {
            region: region.to_owned(),
        })
    }

    /// The lease backend reports the current grant lost (at most once per grant is enough;
    /// repeats are ignored).
    pub fn lease_lost(&mut self) -> Result<()> {
        match self.coordinator().token() {
            Some(token) => self.input(CoordinatorInput::LeaseLost { token }),
            None => Ok(()),
        }
    }

    pub fn preparing_for_shutdown(&mut self) -> Result<()> {
        self.input(CoordinatorInput::PreparingForShutdown)
    }

    /// See [`CoordinatorInput::Drain`].
    pub fn drain(&mut self, region: &str) -> Result<()> {
        self.input(CoordinatorInput::Drain {
            region: region.to_owned(),
        })
    }

    pub fn undrain(&mut self, region: &str) -> Result<()> {
        self.input(CoordinatorInput::Undrain {
            region: region.to_owned(),
        })
    }

    pub fn stop(&mut self) -> Result<()> {
        self.input(CoordinatorInput::Stop)
    }

    /// Runs every timer that is due; returns when to call again.
    pub fn poll(&mut self) -> Result<Option<u64>> {
        let now = self.clock.now_ms();
        let r = self.call(now, CoordinatorStep::Timeout);
        let ran = self.run();
        r?;
        ran?;
        Ok(self.pipeline.next_deadline())
    }

    pub fn next_deadline(&self) -> Option<u64> {
        self.pipeline.next_deadline()
    }

    /// Any input, at the clock's time.
    pub fn input(&mut self, input: CoordinatorInput) -> Result<()> {
        let now = self.clock.now_ms();
        let r = self.call(now, CoordinatorStep::Input(input));
        let ran = self.run();
        r?;
        ran
    }

    fn call(&mut self, now: u64, step: CoordinatorStep) -> Result<()> {
        self.pipeline.step(now, step)
    }

    /// Carries out operations in order, each completed before the next is taken. A callback
    /// error is kept (the first is returned) and its operation completes as failed.
    fn run(&mut self) -> Result<()> {
        let mut first = None;
        while let Some((ticket, op)) = self.pipeline.next_operation() {
            let now = self.clock.now_ms();
            let answer = match op {
                Operation::Send { envelope } => {
                    self.transport.send(envelope).map(|()| Completion::Sent)
                }
                Operation::Append { token, record } => {
                    self.store.append(token, &record).map(Completion::from)
                }
                Operation::SaveSnapshot { token, snapshot } => self
                    .store
                    .save_snapshot(token, &snapshot)
                    .map(Completion::from),
                Operation::Load { token } => self.store.load(token).map(Completion::loaded),
                Operation::Acquire => self.lease.acquire(now).map(Completion::acquired),
                Operation::Renew { token } => self.lease.renew(token, now).map(Completion::renewed),
                Operation::Release { token } => {
                    self.lease.release(token).map(|()| Completion::Released)
                }
            };
            let done = answer.unwrap_or_else(|e| {
                first.get_or_insert(e);
                Completion::Failed
            });
            keep_first(&mut first, self.pipeline.complete(now, ticket, done));
        }
        first.map_or(Ok(()), Err)
    }
}

pub struct RegionDriver {
    region: Region,
    transport: Box<dyn Transport>,
    clock: Box<dyn Clock>,
    host: Box<dyn EntityHost>,
    notices: Vec<RegionNotice>,
    observer: Option<Box<dyn RegionObserver>>,
}

impl RegionDriver {
    pub fn new(
        region: Region,
        transport: Box<dyn Transport>,
        clock: Box<dyn Clock>,
        host: Box<dyn EntityHost>,
    ) -> RegionDriver {
        RegionDriver {
            region,
            transport,
            clock,
            host,
            notices: Vec::new(),
            observer: None,
        }
    }

    /// Shows every later call and output to `observer`.
    pub fn observe(&mut self, observer: Box<dyn RegionObserver>) {
        self.observer = Some(observer);
    }

    pub fn region(&self) -> &Region {
        &self.region
    }

    pub fn take_notices(&mut self) -> Vec<RegionNotice> {
        std::mem::take(&mut self.notices)
    }

    pub fn start(&mut self) -> Result<()> {
        self.input_step(RegionStep::Start)
    }

    /// Routes a message; when the region cannot take it, the error says why (the caller
    /// still owns what it passed in through the bindings).
    pub fn route(&mut self, entity: &str, payload: Payload) -> Result<()> {
        self.try_route(entity, payload)
            .map_err(crate::Error::from)?
    }

    /// Like [`RegionDriver::route`], handing the payload back on refusal.
    pub fn try_route(
        &mut self,
        entity: &str,
        payload: Payload,
    ) -> std::result::Result<Result<()>, Rejected> {
        let now = self.clock.now_ms();
        match self.region.shard_of(entity) {
            Ok(shard) => self.route_in(now, &shard, entity, payload)?,
            // Region::route turns this into its refusal, with the payload handed back.
            Err(_) => self.region.route(now, entity, payload)?,
        }
        Ok(self.run())
    }

    pub fn route_to_shard(&mut self, shard: &str, entity: &str, payload: Payload) -> Result<()> {
        let now = self.clock.now_ms();
        self.route_in(now, shard, entity, payload)
            .map_err(crate::Error::from)?;
        self.run()
    }

    /// The one place a message enters the region, so the observer sees it as a route step.
    fn route_in(
        &mut self,
        now: u64,
        shard: &str,
        entity: &str,
        payload: Payload,
    ) -> std::result::Result<(), Rejected> {
        let Some(observer) = self.observer.as_mut() else {
            return self.region.route_to_shard(now, shard, entity, payload);
        };
        let step = RegionStep::Route {
            shard: shard.into(),
            entity: entity.into(),
            payload: payload.clone(),
        };
        let r = self.region.route_to_shard(now, shard, entity, payload);
        let seen = r.clone().map_err(crate::Error::from);
        observer.called(now, &step, &self.region, &seen);
        r
    }

    pub fn receive(&mut self, envelope: Envelope) -> Result<()> {
        self.input(RegionInput::Receive(envelope))
    }

    pub fn shard_stopped(&mut self, shard: &str) -> Result<()> {
        self.input(RegionInput::ShardStopped {
            shard: shard.into(),
        })
    }

    pub fn entity_passivated(&mut self, shard: &str, entity: &str) -> Result<()> {
        self.input(RegionInput::EntityPassivated {
            shard: shard.into(),
            entity: entity.into(),
        })
    }

    pub fn coordinator_changed(&mut self) -> Result<()> {
        self.input(RegionInput::CoordinatorChanged)
    }

    pub fn region_terminated(&mut self, region: &RegionId) -> Result<()> {
        self.input(RegionInput::RegionTerminated {
            region: region.clone(),
        })
    }

    pub fn graceful_shutdown(&mut self) -> Result<()> {
        self.input(RegionInput::GracefulShutdown)
    }

    /// See [`RegionInput::ReportLoads`].
    pub fn report_loads(&mut self, loads: BTreeMap<ShardId, Amount>) -> Result<()> {
        self.input(RegionInput::ReportLoads { loads })
    }

    pub fn update_offer(&mut self, offer: RegionOffer) -> Result<()> {
        self.input(RegionInput::UpdateOffer { offer })
    }

    pub fn poll(&mut self) -> Result<Option<u64>> {
        self.input_step(RegionStep::Timeout)?;
        Ok(self.region.next_deadline())
    }

    pub fn next_deadline(&self) -> Option<u64> {
        self.region.next_deadline()
    }

    /// Any input, at the clock's time.
    pub fn input(&mut self, input: RegionInput) -> Result<()> {
        self.input_step(RegionStep::Input(input))
    }

    fn input_step(&mut self, step: RegionStep) -> Result<()> {
        let now = self.clock.now_ms();
        self.call(now, step);
        self.run()
    }

    /// Every call but a route goes through here, so the observer sees it. None of them can
    /// fail.
    fn call(&mut self, now: u64, step: RegionStep) {
        let Some(observer) = self.observer.as_mut() else {
            let _ = step.apply(&mut self.region, now);
            return;
        };
        let r = step.clone().apply(&mut self.region, now);
        observer.called(now, &step, &self.region, &r);
    }

    fn take_output(&mut self) -> Option<RegionOutput> {
        let o = self.region.poll_output()?;
        if let Some(observer) = self.observer.as_mut() {
            observer.output(&o);
        }
        Some(o)
    }

    fn run(&mut self) -> Result<()> {
        let mut first = None;
        while let Some(o) = self.take_output() {
            let stopped: Option<ShardId> = match o {
                RegionOutput::Send(env) => {
                    keep_first(&mut first, self.transport.send(env));
                    None
                }
                RegionOutput::StartShard { shard, entities } => {
                    keep_first(&mut first, self.host.start_shard(&shard, &entities));
                    None
                }
                RegionOutput::StartEntities { shard, entities } => {
                    keep_first(&mut first, self.host.start_entities(&shard, &entities));
                    None
                }
                RegionOutput::Deliver {
                    shard,
                    entity,
                    payload,
                } => {
                    keep_first(&mut first, self.host.deliver(&shard, &entity, payload));
                    None
                }
                RegionOutput::StopShard { shard } => match self.host.stop_shard(&shard) {
                    Ok(true) => Some(shard),
                    Ok(false) => None,
                    Err(e) => {
                        first.get_or_insert(e);
                        None
                    }
                },
                RegionOutput::Undeliverable {
                    shard,
                    entity,
                    payload,
                    reason,
                } => {
                    keep_first(
                        &mut first,
                        self.host.undeliverable(&shard, &entity, payload, &reason),
                    );
                    None
                }
                RegionOutput::Stopped => {
                    keep_first(&mut first, self.host.stopped());
                    None
                }
                RegionOutput::Notice(n) => {
                    self.notices.push(n);
                    None
                }
            };
            if let Some(shard) = stopped {
                let now = self.clock.now_ms();
                self.call(now, RegionStep::Input(RegionInput::ShardStopped { shard }));
            }
        }
        first.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, VecDeque};
    use std::sync::Mutex;

    use super::*;
    use crate::coordinator::CoordinatorConfig;
    use crate::host::InMemoryLease;
    use crate::host::InMemoryStore;
    use crate::model::Address;
    use crate::protocol::Endpoint;
    use crate::region::{RegionConfig, ShardExtractor};
    use crate::strategy::StrategyConfig;
    use crate::Error;

    type Wire = Arc<Mutex<VecDeque<Envelope>>>;

    struct Queue(Wire);
    impl Transport for Queue {
        fn send(&mut self, envelope: Envelope) -> Result<()> {
            self.0.lock().unwrap().push_back(envelope);
            Ok(())
        }
    }

    #[derive(Clone, Default)]
    struct Host {
        log: Arc<Mutex<Vec<String>>>,
        sync_stop: bool,
    }
    impl EntityHost for Host {
        fn start_shard(&mut self, shard: &str, _: &[EntityId]) -> Result<()> {
            self.log.lock().unwrap().push(format!("start {shard}"));
            Ok(())
        }
        fn deliver(&mut self, _: &str, entity: &str, payload: Payload) -> Result<()> {
            let p = String::from_utf8(payload).unwrap();
            self.log.lock().unwrap().push(format!("{entity}={p}"));
            Ok(())
        }
        fn stop_shard(&mut self, shard: &str) -> Result<bool> {
            self.log.lock().unwrap().push(format!("stop {shard}"));
            Ok(self.sync_stop)
        }
    }

    struct FailingTransport;
    impl Transport for FailingTransport {
        fn send(&mut self, _: Envelope) -> Result<()> {
            Err(Error::invalid_state("network down"))
        }
    }

    fn node(i: u32) -> String {
        format!("pekko://sys@h{i}:2552")
    }

    fn coordinator(
        clock: &ManualClock,
        wire: &Wire,
        lease: InMemoryLease,
        store: InMemoryStore,
    ) -> CoordinatorDriver {
        let strategy = StrategyConfig::from_json(&serde_json::json!({"kind": "least-shard"}))
            .unwrap()
            .build()
            .unwrap();
        let c = Coordinator::new(
            CoordinatorConfig::default(),
            strategy,
            Address::parse(&node(0)).unwrap(),
        )
        .unwrap();
        let mut d = CoordinatorDriver::new(
            c,
            Box::new(Queue(wire.clone())),
            Box::new(clock.clone()),
            Box::new(lease),
            Box::new(store),
        );
        for i in 0..4 {
            d.member(Member::new(Address::parse(&node(i)).unwrap()))
                .unwrap();
        }
        d
    }

    fn region(clock: &ManualClock, wire: &Wire, name: &str, n: u32, host: Host) -> RegionDriver {
        let r = Region::new(
            RegionConfig::default(),
            name,
            &node(n),
            ShardExtractor::custom(|e| e[..1].into()),
        )
        .unwrap();
        RegionDriver::new(
            r,
            Box::new(Queue(wire.clone())),
            Box::new(clock.clone()),
            Box::new(host),
        )
    }

    /// Delivers everything on the wire; coordinator-bound mail goes to every coordinator.
    fn deliver(
        wire: &Wire,
        coords: &mut [&mut CoordinatorDriver],
        regions: &mut BTreeMap<String, RegionDriver>,
    ) {
        loop {
            let Some(env) = wire.lock().unwrap().pop_front() else {
                return;
            };
            match env.to.clone() {
                Endpoint::Coordinator => {
                    for c in coords.iter_mut() {
                        c.receive(env.clone()).unwrap();
                    }
                }
                Endpoint::Region(r) => {
                    if let Some(d) = regions.get_mut(&*r) {
                        d.receive(env).unwrap();
                    }
                }
            }
        }
    }

    #[test]
    fn drivers_carry_a_message_to_its_entity_and_fail_over() {
        let clock = ManualClock::new(1_000);
        let wire: Wire = Arc::default();
        let lease = InMemoryLease::new("c1", 30_000);
        let store = InMemoryStore::new();
        let mut c1 = coordinator(&clock, &wire, lease.clone(), store.clone());
        let mut c2 = coordinator(&clock, &wire, lease.contender("c2"), store.clone());
        c1.start().unwrap();
        c2.start().unwrap();
        assert!(c1.coordinator().is_active());
        assert!(!c2.coordinator().is_active());
        let host_a = Host::default();
        let host_b = Host {
            sync_stop: true,
            ..Default::default()
        };
        let mut regions = BTreeMap::new();
        regions.insert(
            "a".to_string(),
            region(&clock, &wire, "a", 1, host_a.clone()),
        );
        regions.insert(
            "b".to_string(),
            region(&clock, &wire, "b", 2, host_b.clone()),
        );
        for r in regions.values_mut() {
            r.start().unwrap();
        }
        deliver(&wire, &mut [&mut c1, &mut c2], &mut regions);
        regions
            .get_mut("b")
            .unwrap()
            .route("x1", b"hello".to_vec())
            .unwrap();
        deliver(&wire, &mut [&mut c1, &mut c2], &mut regions);
        assert_eq!(*host_a.log.lock().unwrap(), vec!["start x", "x1=hello"]);
        assert!(store.contents().events.len() >= 3);

        // c1 stops renewing (its node hangs); its local deadline passes, c2 takes over.
        clock.advance(30_000);
        c2.poll().unwrap(); // retries the acquisition: still held on the backend
        clock.advance(5_000);
        c1.poll().unwrap();
        assert!(
            !c1.coordinator().is_active(),
            "stopped acting at its own deadline"
        );
        assert!(c1
            .take_notices()
            .iter()
            .any(|n| matches!(n, CoordinatorNotice::SteppedDown { .. })));
        let t = c2.next_deadline().unwrap();
        clock.set(t);
        c2.poll().unwrap();
        assert!(c2.coordinator().is_active());
        assert_eq!(c2.coordinator().state().home_of("x"), Some("a"));
        for r in regions.values_mut() {
            r.coordinator_changed().unwrap();
        }
        deliver(&wire, &mut [&mut c2], &mut regions);
        regions
            .get_mut("b")
            .unwrap()
            .route("x2", b"again".to_vec())
            .unwrap();
        deliver(&wire, &mut [&mut c2], &mut regions);
        assert_eq!(host_a.log.lock().unwrap().last().unwrap(), "x2=again");
    }

    #[test]
    fn callback_errors_surface_after_the_outputs_are_carried_out() {
        let clock = ManualClock::new(0);
        let r = Region::new(
            RegionConfig {
                buffer_capacity: 1,
                ..Default::default()
            },
            "a",
            &node(1),
            ShardExtractor::custom(|e| e.into()),
        )
        .unwrap();
        let mut d = RegionDriver::new(
            r,
            Box::new(FailingTransport),
            Box::new(clock),
            Box::new(Host::default()),
        );
        let e = d.start().unwrap_err();
        assert!(e.message().contains("network down"));
        assert!(
            d.route("e1", b"1".to_vec()).is_err(),
            "the GetShardHome could not be sent"
        );
        assert_eq!(d.region().buffered(), 1, "the message itself was kept");
        match d.try_route("e2", b"2".to_vec()) {
            Err(rejected) => assert_eq!(rejected.payload, b"2"),
            Ok(_) => panic!("buffer of one is full"),
        }
        let e = d.route("e3", b"3".to_vec()).unwrap_err();
        assert!(e.message().contains("buffer is full"), "{e}");
    }
}
