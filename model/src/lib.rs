//! Model checking of shardline's real coordinator and region state machines.
//!
//! Each state of the model holds the actual `Coordinator`s and `Region`s of shardline-core
//! (forked per step and fingerprinted canonically through its `model-check` feature) beside
//! what their host keeps: the messages in flight, the coordinator lease, the fenced store and a
//! clock. From a starting cluster the checker tries every action in every order: deliver any
//! message (so any reordering), drop or duplicate a control message, fire a machine's next
//! timer, let the lease run out, crash and restart a coordinator, and have a client send an
//! entity message through a region. Every reachable state within the [`Bounds`] is checked
//! against the properties in [`ClusterModel::properties`].
//!
//! stateright does the exploration. By default it is exhaustive (depth-first, remembering
//! only fingerprints, so memory stays small): the bounds are the clock's horizon, the fault
//! budgets and the messages in flight, not a depth. A violation is then searched again
//! breadth-first, depth by depth, so it is reported with a shortest trace.

mod host;
mod machines;

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use shardline_core::coordinator::{Coordinator, CoordinatorConfig, CoordinatorInput};
use shardline_core::model::{Address, Member};
use shardline_core::protocol::Endpoint;
use shardline_core::region::{Region, RegionConfig, RegionInput};
use stateright::{Checker, Expectation, Model, Property};

use host::{payload, Packet};
pub use host::{Breach, Host};
use machines::{extractor, strategy, Coord, Reg};

/// The size of the cluster and how far the checker looks.
#[derive(Debug, Clone)]
pub struct Bounds {
    pub regions: usize,
    pub coordinators: usize,
    pub shards: usize,
    /// Entity messages clients may send.
    pub messages: u32,
    /// Coordinator crashes (each followed by a restart that reloads from the store).
    pub crashes: u32,
    /// Control messages the network may lose, and may deliver twice.
    pub drops: u32,
    pub duplicates: u32,
    /// States with more messages in flight are not explored further.
    pub max_in_flight: usize,
    /// No timer fires, and the clock does not move, past this.
    pub horizon_ms: u64,
    pub lease_ttl_ms: u64,
    /// `None`: every reachable state within the other bounds. `Some(n)`: only those within
    /// n steps of the start (breadth-first; memory grows with the frontier).
    pub depth: Option<usize>,
    pub start: Start,
}

/// Where exploration starts. Every state reachable within the depth bound from there is
/// checked; a start part-way into a cluster's life puts deeper behaviour within reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Coordinators just started (the first holds the lease), regions just started and
    /// registering: registration, allocation, failover.
    Fresh,
    /// Every shard allocated to the first region, which started alone, and the others just
    /// registered with the coordinator: its next rebalance hands shards off.
    Unbalanced,
}

impl Start {
    pub fn name(self) -> &'static str {
        match self {
            Start::Fresh => "fresh",
            Start::Unbalanced => "unbalanced",
        }
    }
}

impl Bounds {
    /// Two regions, two coordinators, two shards, one of each fault, from `start`.
    pub fn small(start: Start, horizon_ms: u64) -> Bounds {
        Bounds {
            start,
            regions: 2,
            coordinators: 2,
            shards: 2,
            messages: 1,
            crashes: 1,
            drops: 1,
            duplicates: 1,
            max_in_flight: 6,
            horizon_ms,
            lease_ttl_ms: 2_000,
            depth: None,
        }
    }

    fn faults(mut self, messages: u32, crashes: u32, drops: u32, duplicates: u32) -> Bounds {
        (self.messages, self.crashes, self.drops, self.duplicates) =
            (messages, crashes, drops, duplicates);
        self
    }

    /// The runs the test command makes (a few seconds in a release build): together they
    /// reach every `sometimes` property.
    pub fn short_runs() -> Vec<Bounds> {
        vec![
            Bounds::small(Start::Fresh, 1_000).faults(0, 0, 0, 0),
            Bounds::small(Start::Unbalanced, 2_000).faults(0, 0, 0, 0),
            Bounds::small(Start::Unbalanced, 1_500),
        ]
    }

    /// The runs scripts/model-check.sh makes: longer horizons, each fault alone over a whole
    /// failover, and three regions.
    pub fn long_runs() -> Vec<Bounds> {
        let three = |start, horizon_ms| Bounds {
            regions: 3,
            ..Bounds::small(start, horizon_ms).faults(0, 0, 0, 0)
        };
        vec![
            Bounds::small(Start::Fresh, 1_500).faults(0, 0, 0, 0),
            Bounds::small(Start::Unbalanced, 2_500).faults(0, 0, 0, 0),
            Bounds::small(Start::Unbalanced, 2_000).faults(1, 0, 0, 0),
            Bounds::small(Start::Unbalanced, 2_000).faults(0, 1, 0, 0),
            Bounds::small(Start::Unbalanced, 2_000).faults(0, 0, 1, 0),
            Bounds::small(Start::Unbalanced, 2_000).faults(0, 0, 0, 1),
            three(Start::Fresh, 1_000),
            three(Start::Unbalanced, 2_000),
        ]
    }
}

/// What the cluster is made of besides the bounds: the machines' configurations.
fn coordinator_config() -> CoordinatorConfig {
    CoordinatorConfig {
        rebalance_interval_ms: 1_000,
        handoff_timeout_ms: 3_000,
        handoff_resend_interval_ms: 0,
        shard_start_timeout_ms: 3_000,
        lease_retry_interval_ms: 1_000,
        snapshot_after: 3,
        ..CoordinatorConfig::default()
    }
}

fn region_config() -> RegionConfig {
    RegionConfig {
        buffer_capacity: 8,
        retry_interval_ms: 2_000,
        ..RegionConfig::default()
    }
}

fn node(i: usize) -> String {
    format!("pekko://sys@10.0.0.{}:2552", i + 1)
}

fn shard(i: usize) -> String {
    (i + 1).to_string()
}

#[derive(Clone, Debug, Hash, Default)]
pub struct Budget {
    messages: u32,
    crashes: u32,
    drops: u32,
    duplicates: u32,
}

// Equality is defined by the derived hash (see `PartialEq` below), so the two agree.
#[allow(clippy::derived_hash_with_manual_eq)]
#[derive(Clone, Debug, Hash)]
pub struct State {
    coords: Vec<Coord>,
    /// Each coordinator's restarts: a restarted process is a new lease owner.
    incarnations: Vec<u32>,
    regions: Vec<Reg>,
    host: Host,
    /// What is left to spend.
    budget: Budget,
}

impl State {
    fn fingerprint(&self) -> u64 {
        // SipHash with fixed keys: the same state always hashes the same.
        let mut h = DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

/// Path reconstruction compares states; two states are one when their canonical fingerprints
/// are, which is also how the checker deduplicates them.
impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.fingerprint() == other.fingerprint()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Deliver the message in flight with this text to coordinator or region `to`.
    Deliver {
        message: String,
        to: usize,
    },
    Drop {
        message: String,
    },
    Duplicate {
        message: String,
    },
    /// The clock moves to the machine's next deadline (if later) and its timers fire.
    CoordinatorTimeout(usize),
    RegionTimeout(usize),
    /// The clock moves to the lease's expiry without any machine being called: a host that
    /// is late calling its coordinator.
    LeaseRunsOut,
    /// The coordinator's process dies (its lease stays taken until it expires) and a new
    /// one starts in its place, reloading from the store.
    CrashCoordinator(usize),
    /// A client sends an entity message for `shard` through `region`.
    ClientSend {
        region: usize,
        shard: usize,
    },
}

pub struct ClusterModel {
    pub bounds: Bounds,
    /// States the properties were checked on (the checker also generates the layer one step
    /// past the bound, which it does not check).
    checked: AtomicUsize,
}

impl ClusterModel {
    pub fn new(bounds: Bounds) -> ClusterModel {
        ClusterModel {
            bounds,
            checked: AtomicUsize::new(0),
        }
    }

    fn new_coordinator(&self, k: usize, now: u64) -> Coordinator {
        let address = Address::parse(&node(k)).expect("valid address");
        let mut c = Coordinator::new(coordinator_config(), strategy(), address)
            .expect("the model's coordinator config is valid");
        for n in 0..self.bounds.regions.max(self.bounds.coordinators) {
            let m = Member::new(Address::parse(&node(n)).expect("valid address"));
            c.handle(now, CoordinatorInput::Member(Box::new(m)))
                .expect("members are accepted");
        }
        c
    }

    fn start_coordinator(&self, s: &mut State, k: usize) {
        let now = s.host.now;
        let owner = (k, s.incarnations[k]);
        let c = s.coords[k].get();
        c.start(now);
        if s.host.carry_out_coordinator(c, owner) {
            coordinator_changed(s);
        }
    }

    fn initial(&self) -> State {
        let b = &self.bounds;
        let mut s = State {
            coords: (0..b.coordinators)
                .map(|k| Coord::new(self.new_coordinator(k, 0)))
                .collect(),
            incarnations: vec![0; b.coordinators],
            regions: Vec::new(),
            host: Host {
                lease_ttl_ms: b.lease_ttl_ms,
                ..Host::default()
            },
            budget: Budget {
                messages: b.messages,
                crashes: b.crashes,
                drops: b.drops,
                duplicates: b.duplicates,
            },
        };
        for k in 0..b.coordinators {
            self.start_coordinator(&mut s, k);
        }
        match b.start {
            Start::Fresh => {
                for i in 0..b.regions {
                    self.add_region(&mut s, i);
                }
            }
            Start::Unbalanced => {
                self.add_region(&mut s, 0);
                self.settle(&mut s);
                for n in 0..b.shards {
                    let id = s.host.ledger.accepted;
                    self.region_step(&mut s, 0, |r, now| {
                        r.route_to_shard(now, &shard(n), &format!("e{}", n + 1), payload(id))
                            .expect("an empty buffer takes a message");
                    });
                    s.host.ledger.accepted += 1;
                    self.settle(&mut s);
                }
                for i in 1..b.regions {
                    self.add_region(&mut s, i);
                }
                self.settle(&mut s);
            }
        }
        s
    }

    /// Starts region `i` (regions start in order).
    fn add_region(&self, s: &mut State, i: usize) {
        let r = Region::new(
            region_config(),
            &format!("r{}", i + 1),
            &node(i),
            extractor(),
        )
        .expect("the model's region config is valid");
        s.regions.push(Reg::new(r));
        self.region_step(s, i, |r, now| r.start(now));
    }

    /// Delivers everything in flight, oldest text first, until nothing is.
    fn settle(&self, s: &mut State) {
        while let Some(p) = s.host.net.first().cloned() {
            let to = self.receivers(s, &p).first().copied();
            self.deliver(s, &p.key, to);
        }
    }

    /// Who may receive a message: its region, or for a command each active coordinator (the
    /// host routes to the one it believes active, which may have been deposed meanwhile). A
    /// command sent while none is active waits.
    fn receivers(&self, s: &State, p: &Packet) -> Vec<usize> {
        match &p.envelope.to {
            Endpoint::Coordinator => (0..s.coords.len())
                .filter(|k| s.coords[*k].read().is_active())
                .collect(),
            Endpoint::Region(id) => s
                .regions
                .iter()
                .position(|r| r.read().id() == &**id)
                .into_iter()
                .collect(),
        }
    }

    fn deliver(&self, s: &mut State, key: &str, to: Option<usize>) -> Option<()> {
        let p = take(&mut s.host.net, key)?;
        let Some(to) = to else {
            return Some(());
        };
        match &p.envelope.to {
            Endpoint::Coordinator => {
                let input = CoordinatorInput::Receive(p.envelope);
                self.coordinator_step(s, to, |c, now| c.handle(now, input));
            }
            Endpoint::Region(_) => {
                let input = RegionInput::Receive(p.envelope);
                self.region_step(s, to, |r, now| r.handle(now, input));
            }
        }
        Some(())
    }

    fn coordinator_step(
        &self,
        s: &mut State,
        k: usize,
        f: impl FnOnce(&mut Coordinator, u64) -> shardline_core::Result<()>,
    ) {
        let now = s.host.now;
        let owner = (k, s.incarnations[k]);
        let c = s.coords[k].get();
        if let Err(e) = f(c, now) {
            s.host.breach(Breach::MachineError, format!("c{k}: {e}"));
        }
        if s.host.carry_out_coordinator(c, owner) {
            coordinator_changed(s);
        }
    }

    fn region_step(&self, s: &mut State, i: usize, f: impl FnOnce(&mut Region, u64)) {
        let now = s.host.now;
        let r = s.regions[i].get();
        f(r, now);
        s.host.carry_out_region(r);
    }
}

/// The host tells every region when a coordinator takes over, as the simulator's does.
fn coordinator_changed(s: &mut State) {
    let now = s.host.now;
    for r in &mut s.regions {
        let r = r.get();
        r.handle(now, RegionInput::CoordinatorChanged);
        s.host.carry_out_region(r);
    }
}

fn take(net: &mut Vec<Packet>, key: &str) -> Option<Packet> {
    let at = net.iter().position(|p| p.key == key)?;
    Some(net.remove(at))
}

impl Model for ClusterModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial()]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        let mut last: Option<&str> = None;
        for p in &s.host.net {
            // Copies of one message are interchangeable: act on the first.
            if last == Some(p.key.as_str()) {
                continue;
            }
            last = Some(&p.key);
            for to in self.receivers(s, p) {
                actions.push(Action::Deliver {
                    message: p.key.clone(),
                    to,
                });
            }
            if !p.is_entity() {
                if s.budget.drops > 0 {
                    actions.push(Action::Drop {
                        message: p.key.clone(),
                    });
                }
                if s.budget.duplicates > 0 {
                    actions.push(Action::Duplicate {
                        message: p.key.clone(),
                    });
                }
            }
        }
        let horizon = self.bounds.horizon_ms;
        for (k, c) in s.coords.iter().enumerate() {
            if c.read().next_deadline().is_some_and(|d| d <= horizon) {
                actions.push(Action::CoordinatorTimeout(k));
            }
        }
        for (i, r) in s.regions.iter().enumerate() {
            if r.read().next_deadline().is_some_and(|d| d <= horizon) {
                actions.push(Action::RegionTimeout(i));
            }
        }
        let lease = &s.host.lease;
        if lease.holder.is_some() && lease.expires > s.host.now && lease.expires <= horizon {
            actions.push(Action::LeaseRunsOut);
        }
        if s.budget.crashes > 0 {
            actions.extend((0..s.coords.len()).map(Action::CrashCoordinator));
        }
        if s.budget.messages > 0 {
            for region in 0..s.regions.len() {
                for shard in 0..self.bounds.shards {
                    actions.push(Action::ClientSend { region, shard });
                }
            }
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut s = last.clone();
        match action {
            Action::Deliver { message, to } => self.deliver(&mut s, &message, Some(to))?,
            Action::Drop { message } => {
                take(&mut s.host.net, &message)?;
                s.budget.drops -= 1;
            }
            Action::Duplicate { message } => {
                let p = s.host.net.iter().find(|p| p.key == message)?.clone();
                s.host.send(p.envelope);
                s.budget.duplicates -= 1;
            }
            Action::CoordinatorTimeout(k) => {
                let d = s.coords[k].read().next_deadline()?;
                s.host.now = s.host.now.max(d);
                self.coordinator_step(&mut s, k, |c, now| c.on_timeout(now));
            }
            Action::RegionTimeout(i) => {
                let d = s.regions[i].read().next_deadline()?;
                s.host.now = s.host.now.max(d);
                self.region_step(&mut s, i, |r, now| r.on_timeout(now));
            }
            Action::LeaseRunsOut => s.host.now = s.host.lease.expires,
            Action::CrashCoordinator(k) => {
                s.incarnations[k] += 1;
                s.coords[k] = Coord::new(self.new_coordinator(k, s.host.now));
                s.budget.crashes -= 1;
                self.start_coordinator(&mut s, k);
            }
            Action::ClientSend { region, shard: n } => {
                let id = s.host.ledger.accepted;
                let shard = shard(n);
                let entity = format!("e{}", n + 1);
                s.budget.messages -= 1;
                let now = s.host.now;
                let r = s.regions[region].get();
                if r.route_to_shard(now, &shard, &entity, payload(id)).is_ok() {
                    s.host.ledger.accepted += 1;
                }
                s.host.carry_out_region(r);
            }
        }
        Some(s)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("one owner per shard", |m: &ClusterModel, s: &State| {
                // The first property sees every checked state once: count them here.
                m.checked.fetch_add(1, Ordering::Relaxed);
                (0..m.bounds.shards).all(|n| {
                    let shard = shard(n);
                    s.regions
                        .iter()
                        .filter(|r| r.read().running_shards().iter().any(|s| *s == shard))
                        .count()
                        <= 1
                })
            }),
            Property::always(
                "every accepted message is delivered once or still on its way",
                |_, s: &State| {
                    let l = &s.host.ledger;
                    let buffered: usize = s.regions.iter().map(|r| r.read().buffered()).sum();
                    let in_flight = s.host.net.iter().filter(|p| p.is_entity()).count();
                    let placed =
                        l.delivered.len() + l.undeliverable as usize + buffered + in_flight;
                    placed == l.accepted as usize && !breached(s, Breach::Duplicate)
                },
            ),
            Property::always(
                "only the lease holder's directives go out and its writes land",
                |_, s: &State| !breached(s, Breach::Unfenced),
            ),
            Property::always("no machine fails", |_, s: &State| {
                !breached(s, Breach::MachineError)
            }),
            Property::sometimes("a hand-off completes", |_, s: &State| {
                s.host.seen.handoff_completed
            }),
            Property::sometimes(
                "a standby or restarted coordinator takes over",
                |_, s: &State| s.host.seen.failover,
            ),
            Property::sometimes("an entity message is delivered", |_, s: &State| {
                !s.host.ledger.delivered.is_empty()
            }),
        ]
    }

    fn within_boundary(&self, s: &State) -> bool {
        s.host.net.len() <= self.bounds.max_in_flight
    }
}

fn breached(s: &State, kind: Breach) -> bool {
    s.host.breaches.iter().any(|(k, _)| *k == kind)
}

/// What one run found.
#[derive(Debug, Clone)]
pub struct Summary {
    pub bounds: Bounds,
    /// Distinct states checked against every property.
    pub states_explored: usize,
    /// The longest path explored, in steps from the start.
    pub depth: usize,
    pub elapsed: Duration,
    /// `always` properties that some state broke, each with a shortest trace.
    pub violations: Vec<(String, String)>,
    /// `sometimes` properties a state showed.
    pub reached: Vec<String>,
}

impl Summary {
    fn json(&self) -> serde_json::Value {
        let b = &self.bounds;
        serde_json::json!({
            "start": b.start.name(),
            "regions": b.regions,
            "coordinators": b.coordinators,
            "shards": b.shards,
            "horizonMs": b.horizon_ms,
            "faults": {"messages": b.messages, "crashes": b.crashes, "drops": b.drops, "duplicates": b.duplicates},
            "statesExplored": self.states_explored,
            "depth": self.depth,
            "elapsedMs": self.elapsed.as_millis() as u64,
            "violated": self.violations.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        })
    }
}

/// Several runs together, as scripts and the test read them.
#[derive(Debug, Clone)]
pub struct Report {
    pub runs: Vec<Summary>,
    /// Every property's name.
    pub properties: Vec<String>,
}

impl Report {
    pub fn states_explored(&self) -> usize {
        self.runs.iter().map(|r| r.states_explored).sum()
    }

    pub fn violations(&self) -> impl Iterator<Item = &(String, String)> {
        self.runs.iter().flat_map(|r| &r.violations)
    }

    /// `sometimes` properties no run reached: the bounds are too tight to show them.
    pub fn unreached(&self) -> Vec<&str> {
        let model = ClusterModel::new(Bounds::small(Start::Fresh, 0));
        model
            .properties()
            .into_iter()
            .filter(|p| p.expectation == Expectation::Sometimes)
            .map(|p| p.name)
            .filter(|n| !self.runs.iter().any(|r| r.reached.iter().any(|x| x == n)))
            .collect()
    }

    /// One JSON line: the totals, then each run.
    pub fn json(&self) -> String {
        serde_json::json!({
            "statesExplored": self.states_explored(),
            "depth": self.runs.iter().map(|r| r.depth).max().unwrap_or(0),
            "violations": self.violations().count(),
            "unreached": self.unreached(),
            "properties": self.properties,
            "runs": self.runs.iter().map(Summary::json).collect::<Vec<_>>(),
        })
        .to_string()
    }
}

/// Checks each run in turn.
pub fn check_all(runs: Vec<Bounds>) -> Report {
    let properties = ClusterModel::new(Bounds::small(Start::Fresh, 0))
        .properties()
        .iter()
        .map(|p| p.name.to_string())
        .collect();
    Report {
        runs: runs.into_iter().map(check).collect(),
        properties,
    }
}

/// Explores every state within `bounds` and checks every property on each.
pub fn check(bounds: Bounds) -> Summary {
    let started = Instant::now();
    let model = ClusterModel::new(bounds.clone());
    let Some(depth) = bounds.depth else {
        let checker = model.checker().spawn_dfs().join();
        let mut summary = summarize(&checker, bounds.clone(), started);
        summary.depth = checker.max_depth().saturating_sub(1);
        // Depth-first paths are not the shortest: look again breadth-first, one step deeper
        // at a time, for the violations found.
        let longest = checker
            .discoveries()
            .values()
            .map(|p| p.clone().into_actions().len())
            .max();
        if let (Some(longest), false) = (longest, summary.violations.is_empty()) {
            for depth in 1..=longest {
                let shortest = check(Bounds {
                    depth: Some(depth),
                    ..bounds.clone()
                });
                if !shortest.violations.is_empty() {
                    summary.violations = shortest.violations;
                    break;
                }
            }
        }
        summary.elapsed = started.elapsed();
        return summary;
    };
    // stateright counts the start as depth 1 and does not check states at its target depth,
    // so `depth` steps need a target two past it.
    let checker = model
        .checker()
        .target_max_depth(depth + 2)
        .spawn_bfs()
        .join();
    let mut summary = summarize(&checker, bounds, started);
    summary.depth = depth;
    summary
}

fn summarize(checker: &impl Checker<ClusterModel>, bounds: Bounds, started: Instant) -> Summary {
    let mut violations = Vec::new();
    let mut reached = Vec::new();
    let discoveries = checker.discoveries();
    for p in checker.model().properties() {
        let Some(path) = discoveries.get(p.name) else {
            continue;
        };
        match p.expectation {
            Expectation::Always => violations.push((p.name.to_string(), trace(path))),
            Expectation::Sometimes => reached.push(p.name.to_string()),
            Expectation::Eventually => {}
        }
    }
    Summary {
        bounds,
        states_explored: checker.model().checked.load(Ordering::Relaxed),
        depth: 0,
        elapsed: started.elapsed(),
        violations,
        reached,
    }
}

/// The steps from the initial state to the violating one, with what the host saw go wrong.
fn trace(path: &stateright::Path<State, Action>) -> String {
    let mut out = String::new();
    for (i, (state, action)) in path.clone().into_vec().into_iter().enumerate() {
        let Some(action) = action else {
            for (kind, detail) in &state.host.breaches {
                let _ = writeln!(out, "  => {kind:?}: {detail}");
            }
            let _ = writeln!(out, "  final state: {state:#?}");
            continue;
        };
        let _ = writeln!(
            out,
            "{:>3}. t={} ms {}",
            i + 1,
            state.host.now,
            model_action(&action)
        );
    }
    out
}

fn model_action(a: &Action) -> String {
    match a {
        Action::Deliver { message, .. } => format!("deliver {message}"),
        other => format!("{other:?}"),
    }
}
