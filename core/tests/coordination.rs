//! End-to-end runs of coordinators and regions over a deterministic in-test network, through
//! the public step API only. The network is a FIFO queue the tests can make lossy, duplicating
//! or reordering for control messages; entity messages are never lost by the network, so
//! every accepted message must reach exactly one running owner, in per-sender order.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use shardline_core::coordinator::{
    Coordinator, CoordinatorConfig, CoordinatorInput, CoordinatorOutput, HandOffTimeoutPolicy,
    LeaseRequest,
};
use shardline_core::host::{InMemoryLease, Lease};
use shardline_core::host::{InMemoryStore, Store, WriteOutcome};
use shardline_core::model::Address;
use shardline_core::model::Member;
use shardline_core::protocol::{Endpoint, Envelope, Message};
use shardline_core::region::{Region, RegionConfig, RegionInput, RegionOutput, ShardExtractor};
use shardline_core::strategy::StrategyConfig;

fn node(i: usize) -> String {
    format!("pekko://sys@h{i}:2552")
}

/// A tiny deterministic generator for fault injection (the library itself has none).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

struct CoordNode {
    c: Coordinator,
    lease: InMemoryLease,
    up: bool,
}

#[derive(Default)]
struct Faults {
    drop_pct: u64,
    dup_pct: u64,
    swap_pct: u64,
    /// A duplicate held back for up to this long arrives as a stale message.
    max_delay_ms: u64,
}

struct Net {
    now: u64,
    coords: Vec<CoordNode>,
    store: InMemoryStore,
    regions: BTreeMap<String, Region>,
    inflight: VecDeque<Envelope>,
    delayed: Vec<(u64, Envelope)>,
    /// Entity stops the host still has to report, and regions whose stops hang.
    pending_stops: VecDeque<(String, String)>,
    hung_stops: BTreeSet<String>,
    faults: Faults,
    rng: Lcg,
    /// entity -> (region, sender, seq) in delivery order
    delivered: BTreeMap<String, Vec<(String, String, u64)>>,
    next_seq: BTreeMap<(String, String), u64>,
    accepted: u64,
    /// With forced moves an old owner may still be stopping while the new one runs; then
    /// only running copies must be unique.
    only_running_unique: bool,
}

impl Net {
    fn new(config: CoordinatorConfig, coordinators: usize) -> Net {
        let lease = InMemoryLease::new("c0", 30_000);
        let coords = (0..coordinators)
            .map(|i| {
                let strategy =
                    StrategyConfig::from_json(&serde_json::json!({"kind": "least-shard"}))
                        .unwrap()
                        .build()
                        .unwrap();
                let mut c = Coordinator::new(
                    config.clone(),
                    strategy,
                    Address::parse(&node(100 + i)).unwrap(),
                )
                .unwrap();
                for n in (1..=8).chain(100..100 + coordinators) {
                    c.handle(
                        0,
                        CoordinatorInput::Member(Box::new(Member::new(
                            Address::parse(&node(n)).unwrap(),
                        ))),
                    )
                    .unwrap();
                }
                CoordNode {
                    c,
                    lease: lease.contender(&format!("c{i}")),
                    up: true,
                }
            })
            .collect();
        Net {
            now: 0,
            coords,
            store: InMemoryStore::new(),
            regions: BTreeMap::new(),
            inflight: VecDeque::new(),
            delayed: Vec::new(),
            pending_stops: VecDeque::new(),
            hung_stops: BTreeSet::new(),
            faults: Faults::default(),
            rng: Lcg(7),
            delivered: BTreeMap::new(),
            next_seq: BTreeMap::new(),
            accepted: 0,
            only_running_unique: false,
        }
    }

    fn start_coordinator(&mut self, i: usize) {
        let now = self.now;
        self.coords[i].c.start(now);
        self.pump();
    }

    fn add_region(&mut self, name: &str, n: usize) {
        let mut r = Region::new(
            RegionConfig::default(),
            name,
            &node(n),
            ShardExtractor::pekko(12).unwrap(),
        )
        .unwrap();
        r.start(self.now);
        self.regions.insert(name.to_owned(), r);
        self.pump();
    }

    /// Sends the next message from `sender` to `entity`; returns whether it was accepted.
    fn send(&mut self, sender: &str, entity: &str) -> bool {
        let key = (sender.to_owned(), entity.to_owned());
        let seq = *self.next_seq.get(&key).unwrap_or(&1);
        let payload = format!("{sender}|{seq}").into_bytes();
        let now = self.now;
        let ok = self
            .regions
            .get_mut(sender)
            .unwrap()
            .route(now, entity, payload)
            .is_ok();
        if ok {
            self.next_seq.insert(key, seq + 1);
            self.accepted += 1;
        }
        self.pump();
        ok
    }

    fn pump(&mut self) {
        loop {
            let mut progressed = false;
            for i in 0..self.coords.len() {
                while let Some(o) = self.coords[i].c.poll_output() {
                    progressed = true;
                    self.coordinator_output(i, o);
                }
            }
            let names: Vec<String> = self.regions.keys().cloned().collect();
            for name in names {
                while let Some(o) = self.regions.get_mut(&name).and_then(Region::poll_output) {
                    progressed = true;
                    self.region_output(&name, o);
                }
            }
            if !progressed {
                break;
            }
        }
    }

    fn coordinator_output(&mut self, i: usize, o: CoordinatorOutput) {
        let now = self.now;
        let node = &mut self.coords[i];
        if !node.up {
            return;
        }
        match o {
            CoordinatorOutput::Send(env) => self.inflight.push_back(env),
            CoordinatorOutput::Persist { token, record } => {
                if let WriteOutcome::Fenced { .. } = self.store.append(token, &record).unwrap() {
                    while node.c.poll_output().is_some() {}
                    node.c
                        .handle(now, CoordinatorInput::StoreFailed { fenced: true })
                        .unwrap();
                }
            }
            CoordinatorOutput::SaveSnapshot { token, snapshot } => {
                self.store.save_snapshot(token, &snapshot).unwrap();
            }
            CoordinatorOutput::LoadState { token } => {
                let input = match self.store.load(token).unwrap() {
                    Some(s) => CoordinatorInput::StateLoaded(Box::new(s)),
                    None => CoordinatorInput::StateLoadFailed { fenced: true },
                };
                node.c.handle(now, input).unwrap();
            }
            CoordinatorOutput::Lease(LeaseRequest::Acquire) => {
                let input = match node.lease.acquire(now).unwrap() {
                    Some(g) => CoordinatorInput::LeaseGranted(g),
                    None => CoordinatorInput::LeaseDenied,
                };
                node.c.handle(now, input).unwrap();
            }
            CoordinatorOutput::Lease(LeaseRequest::Renew { token }) => {
                let input = match node.lease.renew(token, now).unwrap() {
                    Some(valid_until_ms) => CoordinatorInput::LeaseRenewed {
                        token,
                        valid_until_ms,
                    },
                    None => CoordinatorInput::LeaseLost { token },
                };
                node.c.handle(now, input).unwrap();
            }
            CoordinatorOutput::Lease(LeaseRequest::Release { token }) => {
                node.lease.release(token).unwrap()
            }
            CoordinatorOutput::Notice(_) => {}
        }
    }

    fn region_output(&mut self, name: &str, o: RegionOutput) {
        match o {
            RegionOutput::Send(env) => self.inflight.push_back(env),
            RegionOutput::Deliver {
                entity, payload, ..
            } => {
                let text = String::from_utf8(payload).unwrap();
                let (sender, seq) = text.split_once('|').unwrap();
                self.delivered.entry(entity.to_string()).or_default().push((
                    name.to_owned(),
                    sender.to_owned(),
                    seq.parse().unwrap(),
                ));
            }
            RegionOutput::StopShard { shard } => {
                if !self.hung_stops.contains(name) {
                    self.pending_stops
                        .push_back((name.to_owned(), shard.to_string()));
                }
            }
            RegionOutput::Undeliverable { .. } => panic!("{name}: undeliverable message"),
            RegionOutput::StartShard { .. }
            | RegionOutput::StartEntities { .. }
            | RegionOutput::Stopped
            | RegionOutput::Notice(_) => {}
        }
    }

    fn is_control(env: &Envelope) -> bool {
        !matches!(env.message, Message::Forward(_))
    }

    /// Delivers one in-flight message (with faults for control messages).
    fn deliver_one(&mut self) -> bool {
        let Some(env) = self.inflight.pop_front() else {
            return false;
        };
        if Self::is_control(&env) {
            if self.rng.chance(self.faults.drop_pct) {
                return true;
            }
            if self.rng.chance(self.faults.swap_pct) {
                if let Some(pos) = self.inflight.iter().position(Self::is_control) {
                    // Let a later control message overtake this one.
                    self.inflight.insert(pos + 1, env);
                    return true;
                }
            }
            if self.rng.chance(self.faults.dup_pct) {
                if self.faults.max_delay_ms > 0 {
                    let at = self.now + 1 + self.rng.next() % self.faults.max_delay_ms;
                    self.delayed.push((at, env.clone()));
                } else {
                    self.inflight.push_back(env.clone());
                }
            }
        }
        let now = self.now;
        match &env.to {
            Endpoint::Coordinator => {
                for node in self.coords.iter_mut().filter(|n| n.up) {
                    node.c
                        .handle(now, CoordinatorInput::Receive(env.clone()))
                        .unwrap();
                }
            }
            Endpoint::Region(r) => {
                if let Some(region) = self.regions.get_mut(&**r) {
                    region.handle(now, RegionInput::Receive(env));
                }
            }
        }
        self.pump();
        self.check_single_owner();
        true
    }

    /// At most one region hosts a shard (running, handing off or still stopping).
    fn check_single_owner(&self) {
        let mut owners: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for (name, r) in &self.regions {
            let hosted = if self.only_running_unique {
                r.running_shards()
            } else {
                r.local_shards()
            };
            for s in hosted {
                owners.entry(s.to_string()).or_default().push(name);
            }
        }
        for (s, o) in owners {
            assert!(o.len() <= 1, "t={} shard {s} hosted by {o:?}", self.now);
        }
    }

    fn next_deadline(&self) -> Option<u64> {
        self.coords
            .iter()
            .filter(|n| n.up)
            .filter_map(|n| n.c.next_deadline())
            .chain(self.regions.values().filter_map(Region::next_deadline))
            .chain(self.delayed.iter().map(|(t, _)| *t))
            .min()
    }

    /// Runs until nothing is in flight and no deadline falls before `until`.
    fn run_until(&mut self, until: u64) {
        for _ in 0..1_000_000 {
            if self.deliver_one() {
                continue;
            }
            if let Some((r, s)) = self.pending_stops.pop_front() {
                let now = self.now;
                if let Some(region) = self.regions.get_mut(&r) {
                    region.handle(now, RegionInput::ShardStopped { shard: s.into() });
                }
                self.pump();
                continue;
            }
            match self.next_deadline() {
                Some(t) if t <= until => {
                    self.now = self.now.max(t);
                    let now = self.now;
                    let (due, later): (Vec<_>, Vec<_>) =
                        self.delayed.drain(..).partition(|(at, _)| *at <= now);
                    self.delayed = later;
                    self.inflight.extend(due.into_iter().map(|(_, e)| e));
                    for node in self.coords.iter_mut().filter(|n| n.up) {
                        node.c.on_timeout(now).unwrap();
                    }
                    for r in self.regions.values_mut() {
                        r.on_timeout(now);
                    }
                    self.pump();
                }
                _ => {
                    self.now = self.now.max(until);
                    return;
                }
            }
        }
        panic!("no quiescence");
    }

    fn settle(&mut self, ms: u64) {
        let until = self.now + ms;
        self.run_until(until);
    }

    fn crash_region(&mut self, name: &str, n: usize) {
        self.regions.remove(name);
        self.inflight
            .retain(|e| e.to != Endpoint::Region(name.into()));
        let now = self.now;
        for node in self.coords.iter_mut().filter(|n| n.up) {
            node.c
                .handle(
                    now,
                    CoordinatorInput::MemberRemoved {
                        address: node_addr(n),
                    },
                )
                .unwrap();
        }
        for r in self.regions.values_mut() {
            r.handle(
                now,
                RegionInput::RegionTerminated {
                    region: name.to_owned(),
                },
            );
        }
        self.pump();
    }

    fn owners(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for (name, r) in &self.regions {
            for s in r.running_shards() {
                m.insert(s.to_string(), name.clone());
            }
        }
        m
    }

    /// Every accepted message arrived exactly once, in order per sender and entity, and each
    /// entity's messages were delivered by regions that ran its shard at the time.
    fn check_all_delivered(&self) {
        let mut total = 0;
        for (entity, msgs) in &self.delivered {
            let mut last: BTreeMap<&str, u64> = BTreeMap::new();
            for (_, sender, seq) in msgs {
                let prev = last.insert(sender, *seq).unwrap_or(0);
                assert_eq!(*seq, prev + 1, "entity {entity}: from {sender}: {msgs:?}");
            }
            total += msgs.len() as u64;
        }
        for ((sender, entity), next) in &self.next_seq {
            let got = self.delivered.get(entity).map_or(0, |m| {
                m.iter().filter(|(_, s, _)| s == sender).count() as u64
            });
            assert_eq!(got, next - 1, "{sender} -> {entity}");
        }
        assert_eq!(total, self.accepted);
    }
}

fn node_addr(n: usize) -> String {
    node(n)
}

fn quick() -> CoordinatorConfig {
    CoordinatorConfig {
        rebalance_interval_ms: 1_000,
        handoff_timeout_ms: 10_000,
        ..Default::default()
    }
}

fn traffic(net: &mut Net, rounds: usize, senders: &[&str]) {
    for round in 0..rounds {
        for (i, s) in senders.iter().enumerate() {
            let entity = format!("e{}", (round * 7 + i * 3) % 30);
            assert!(net.send(s, &entity), "buffer full");
        }
        if round % 5 == 4 {
            let t = net.now + 150;
            net.run_until(t);
        }
    }
}

#[test]
fn messages_reach_one_owner_in_order_through_rebalances() {
    let mut net = Net::new(quick(), 1);
    net.start_coordinator(0);
    net.add_region("r1", 1);
    net.add_region("r2", 2);
    net.settle(1_000);
    traffic(&mut net, 40, &["r1", "r2"]);
    net.settle(500);
    // A third region joins; the strategy moves shards to it while traffic flows.
    net.add_region("r3", 3);
    traffic(&mut net, 150, &["r1", "r2", "r3"]);
    net.settle(60_000);
    net.check_all_delivered();
    let owners = net.owners();
    let on_r3 = owners.values().filter(|r| *r == "r3").count();
    assert!(on_r3 >= 3, "rebalanced onto the new region: {owners:?}");
    let coordinator = &net.coords[0].c;
    assert_eq!(coordinator.state().shard_count(), owners.len());
    for (s, r) in &owners {
        assert_eq!(coordinator.state().home_of(s), Some(r.as_str()));
    }
}

#[test]
fn control_messages_lost_duplicated_and_reordered() {
    for seed in 1..=6 {
        let mut net = Net::new(quick(), 1);
        net.rng = Lcg(seed);
        net.faults = Faults {
            drop_pct: 10,
            dup_pct: 20,
            swap_pct: 10,
            max_delay_ms: 8_000,
        };
        net.start_coordinator(0);
        net.add_region("r1", 1);
        net.add_region("r2", 2);
        traffic(&mut net, 30, &["r1", "r2"]);
        net.add_region("r3", 3);
        traffic(&mut net, 80, &["r1", "r2", "r3"]);
        let t = net.now + 20_000;
        net.run_until(t);
        net.faults = Faults::default();
        net.settle(120_000);
        assert!(net.delayed.is_empty());
        net.check_all_delivered();
        let owners = net.owners();
        let c = &net.coords[0].c;
        for (s, r) in &owners {
            assert_eq!(c.state().home_of(s), Some(r.as_str()), "seed {seed}");
        }
    }
}

#[test]
fn a_region_crash_mid_hand_off_loses_no_buffered_message() {
    let mut net = Net::new(quick(), 1);
    net.start_coordinator(0);
    net.add_region("r1", 1);
    net.settle(500);
    traffic(&mut net, 20, &["r1"]);
    net.add_region("r2", 2);
    net.add_region("r3", 3);
    // r1's stops hang, so hand-offs from it are stuck mid-way when it crashes.
    net.hung_stops.insert("r1".into());
    net.settle(1_200);
    assert!(!net.coords[0].c.handoffs_in_progress().is_empty());
    traffic(&mut net, 20, &["r2", "r3"]);
    // Messages from the crashed region itself die with it; forget them.
    net.next_seq.retain(|(s, _), _| s != "r1");
    for msgs in net.delivered.values_mut() {
        msgs.retain(|(_, s, _)| s != "r1");
    }
    net.accepted = net.delivered.values().map(|m| m.len() as u64).sum::<u64>()
        + net
            .regions
            .values()
            .map(|r| r.buffered() as u64)
            .sum::<u64>()
        + net
            .inflight
            .iter()
            .filter(|e| matches!(e.message, Message::Forward(_)))
            .count() as u64;
    net.crash_region("r1", 1);
    net.settle(30_000);
    assert!(net.coords[0].c.handoffs_in_progress().is_empty());
    net.check_all_delivered();
    assert!(net.owners().values().all(|r| r != "r1"));
}

#[test]
fn lease_loss_mid_hand_off_fails_over_to_a_second_coordinator() {
    let mut net = Net::new(quick(), 2);
    net.start_coordinator(0);
    net.start_coordinator(1);
    assert!(net.coords[0].c.is_active());
    assert!(!net.coords[1].c.is_active(), "one lease, one coordinator");
    net.add_region("r1", 1);
    net.add_region("r2", 2);
    net.settle(500);
    traffic(&mut net, 30, &["r1", "r2"]);
    net.add_region("r3", 3);
    net.hung_stops.insert("r1".into());
    net.hung_stops.insert("r2".into());
    net.settle(1_100);
    assert!(!net.coords[0].c.handoffs_in_progress().is_empty());
    // The first coordinator's node dies; its lease runs out on the backend.
    net.coords[0].up = false;
    net.coords[0].lease.expire_now();
    traffic(&mut net, 20, &["r1", "r2", "r3"]);
    net.hung_stops.clear();
    let now = net.now;
    for r in net.regions.values_mut() {
        r.handle(now, RegionInput::CoordinatorChanged);
    }
    let stuck: Vec<(String, String)> = net
        .regions
        .iter()
        .flat_map(|(n, r)| {
            let running: BTreeSet<String> =
                r.running_shards().iter().map(|s| s.to_string()).collect();
            r.local_shards()
                .into_iter()
                .map(|s| s.to_string())
                .filter(move |s| !running.contains(s))
                .map(move |s| (n.clone(), s))
        })
        .collect();
    // The host finishes the stops it had started.
    net.pending_stops.extend(stuck);
    net.settle(60_000);
    assert!(net.coords[1].c.is_active());
    assert!(net.coords[1].c.token() > Some(shardline_core::protocol::FencingToken(1)));
    net.check_all_delivered();
    let c = &net.coords[1].c;
    let owners = net.owners();
    for (s, r) in &owners {
        assert_eq!(c.state().home_of(s), Some(r.as_str()));
    }
}

#[test]
fn a_forced_move_stops_the_old_owner_as_soon_as_it_hears() {
    let config = CoordinatorConfig {
        handoff_timeout_policy: HandOffTimeoutPolicy::ForceReallocate,
        ..quick()
    };
    let mut net = Net::new(config, 1);
    net.start_coordinator(0);
    net.add_region("r1", 1);
    net.settle(500);
    traffic(&mut net, 20, &["r1"]);
    net.add_region("r2", 2);
    // r1 never finishes stopping, so the coordinator gives up and moves shards anyway. The
    // old copies keep stopping; no shard may ever *run* in two regions.
    net.hung_stops.insert("r1".into());
    net.only_running_unique = true;
    traffic(&mut net, 10, &["r1", "r2"]);
    net.settle(30_000);
    let c = &net.coords[0].c;
    assert!(
        c.state().shards_of("r2").next().is_some(),
        "the timeout moved shards to r2"
    );
    let r1 = &net.regions["r1"];
    assert!(
        r1.local_shards().len() > r1.running_shards().len(),
        "r1 still has copies stopping"
    );
    for s in r1.running_shards() {
        assert_eq!(c.state().home_of(&s), Some("r1"));
    }
    traffic(&mut net, 20, &["r1", "r2"]);
    net.settle(5_000);
    net.check_all_delivered();
}
