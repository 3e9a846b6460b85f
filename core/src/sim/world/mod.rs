//! The simulated cluster: nodes with shard regions, coordinator candidates sharing one lease
//! and one store, the wire between them, and a host for each that carries out outputs the
//! way a real one would (stopping entities takes time, a stopped region's node leaves the
//! cluster, a crashed node is noticed late).
//!
//! Everything is driven from one agenda in true time; each process sees it through its own
//! clock. One step is one event or one process's due timers, and the checker looks at every
//! region the step touched.
//!
//! The host side lives in submodules: `regions` (entities, stops, bounces, death watch),
//! `coordinators` (store, lease, restore checks), `wire` (sending and delivering),
//! `hosts` (the driver host traits the machines run on),
//! `actions` (what scenarios do to the cluster) and `judge` (convergence and the report).

mod actions;
mod coordinators;
mod hosts;
mod judge;
mod loads;
mod regions;
mod wire;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::coordinator::{Coordinator, CoordinatorConfig, CoordinatorInput, PersistentState};
use crate::hashing::pekko_shard_id;
use crate::host::InMemoryLease;
use crate::host::InMemoryStore;
use crate::host::{CoordinatorDriver, RegionDriver};
use crate::model::Address;
use crate::model::Version;
use crate::model::{ClusterView, Member, MemberStatus};
use crate::protocol::{Envelope, ShardId};
use crate::region::ExtractorDoc;
use crate::region::{Region, RegionConfig, RegionInput};
use crate::replay::{Header, Recorder, RegionStep};
use crate::strategy::StrategyConfig;
use crate::Result;

use super::checker::{Checker, RegionKey};
use super::clock::{Clocks, Proc};
use super::metrics::{CoordinatorStats, FaultStats, HandOffStats, MessageStats, Series};
use super::network::{Agenda, NetFaults, Network};
use super::rng::Rng;
use coordinators::Decisions;

pub(crate) use judge::ReportHeader;
pub(crate) use loads::REPORT_EVERY_MS;

#[derive(Debug, Clone)]
pub(crate) struct WorldConfig {
    pub coordinator: CoordinatorConfig,
    pub region: RegionConfig,
    pub strategy: StrategyConfig,
    pub nodes: usize,
    pub shards: u32,
    pub coordinators: usize,
    /// Entity messages per simulated second, cluster-wide.
    pub rate: f64,
    pub lease_ttl_ms: u64,
    pub net: NetFaults,
    /// Random process-level faults (clock jumps, lease expiry, crashes, store failures)
    /// while faults are on.
    pub chaos: bool,
    pub zones: usize,
    pub sample_ms: u64,
    pub seed: u64,
    /// Log everything that touches this shard to stderr.
    pub trace: Option<String>,
    /// Stop (with a violation) after this many steps.
    pub max_steps: u64,
}

#[derive(Debug, Clone)]
enum Dest {
    Coordinator { k: usize, incarnation: u32 },
    Region(String),
}

#[derive(Debug)]
enum Event {
    Deliver {
        to: Dest,
        env: Envelope,
    },
    StopDone {
        region: String,
        shard: ShardId,
    },
    Traffic,
    Storm {
        shard: u32,
    },
    MemberUp {
        node: usize,
        incarnation: u32,
    },
    Reachability {
        node: usize,
        reachable: bool,
    },
    Removed {
        node: usize,
        incarnation: u32,
    },
    CoordinatorChanged,
    CoordinatorRestart {
        k: usize,
    },
    Rejoin {
        node: usize,
    },
    Chaos,
    Sample,
    /// Every live region reports its shards' loads (load-shift scenario).
    ReportLoads,
    /// Death watch: a region stopped; watchers hear of it reliably, a moment later.
    Terminated {
        region: String,
    },
    /// A coordinator restored its state and watches every region in it (Pekko
    /// `watchStateActors`); those already dead are reported terminated at once.
    WatchState {
        k: usize,
        incarnation: u32,
    },
    /// An undeliverable message travelling back to a region that routes it again.
    Bounce {
        to: String,
        shard: ShardId,
        entity: crate::protocol::EntityId,
        payload: Vec<u8>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeState {
    Joining,
    Up,
    Leaving,
    Crashed,
    Gone,
}

#[derive(Debug)]
pub(crate) struct NodeSlot {
    pub address: String,
    pub zone: usize,
    pub version: Version,
    pub incarnation: u32,
    pub state: NodeState,
    member: Option<Member>,
    unreachable: bool,
    region: Option<String>,
    /// The region that crashed with the node, announced as terminated once it is removed.
    dead_region: Option<String>,
}

struct RegionSlot {
    driver: RegionDriver,
    clock: hosts::ProcessClock,
    node: usize,
    key: RegionKey,
    leaving: bool,
    /// When its graceful shutdown finished.
    done: Option<u64>,
}

impl RegionSlot {
    fn region(&self) -> &Region {
        self.driver.region()
    }
}

struct CoordSlot {
    address: Address,
    incarnation: u32,
    /// The incarnation's name in a recorded trace.
    name: String,
    driver: Option<CoordinatorDriver>,
    clock: hosts::ProcessClock,
    check_restore: bool,
}

impl CoordSlot {
    fn c(&self) -> Option<&Coordinator> {
        self.driver.as_ref().map(CoordinatorDriver::coordinator)
    }
}

/// For traces only.
#[derive(Debug)]
#[allow(dead_code)]
struct ShardStopped<'a> {
    shard: &'a str,
}

enum Target {
    Coordinator(usize),
    Region(String),
}

pub(crate) struct World {
    cfg: WorldConfig,
    pub now: u64,
    agenda: Agenda<Event>,
    clocks: Clocks,
    net: Network,
    rng: Rng,
    traffic_rng: Rng,
    chaos_rng: Rng,
    lease: InMemoryLease,
    store: InMemoryStore,
    /// The store's contents applied event by event: what any coordinator must agree with.
    reference: PersistentState,
    coords: Vec<CoordSlot>,
    pub nodes: Vec<NodeSlot>,
    regions: BTreeMap<String, RegionSlot>,
    region_keys: HashMap<String, RegionKey>,
    /// Regions that are gone: true if crashed, false if they left.
    gone: HashMap<String, bool>,
    /// Regions whose node was removed: the transport quarantines them, as Pekko's remoting
    /// quarantines a removed incarnation, so nothing they sent arrives any more.
    quarantined: BTreeSet<String>,
    /// Per shard, entity names that map to it.
    entities: Vec<Vec<String>>,
    requested: BTreeSet<ShardId>,
    pub checker: Checker,
    touched: Vec<String>,
    bounce_origin: Option<String>,
    traffic_on: bool,
    chaos_on: bool,
    /// Set when a fault outside the lease's timing model happened (backward clock jump,
    /// lease lost server-side): two active coordinators are then possible, and fencing is
    /// what keeps regions safe.
    model_broken: bool,
    two_active: bool,
    pub steady: bool,
    pub measuring: bool,
    pub slow_stop_fraction: f64,
    loads: loads::LoadModel,
    failover_probe: Option<Decisions>,
    failover_pending: bool,
    membership_gen: u64,
    next_up_number: i32,
    rebalance_moves: u64,
    last_action: u64,
    last_change: u64,
    rounds_since_action: u64,
    steps: u64,
    /// What the hosts of the machines share with the world: injected faults, the effects
    /// of the last call, the trace being recorded.
    host: hosts::Shared,
    // ---- report counters ----
    messages: MessageStats,
    handoffs: HandOffStats,
    coordinator_stats: CoordinatorStats,
    injected: FaultStats,
    directives_refused: u64,
    shards_moved: u64,
    allocations: u64,
    /// Shards per region when measuring began, to bound the moves of the whole run.
    initial_placement: Vec<(String, usize)>,
    moves_at_steady: u64,
    max_moves_per_round: u64,
    pub series: Series,
}

fn node_address(i: usize) -> String {
    format!("pekko://sim@n{i}:2552")
}

fn payload_id(payload: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(payload.get(..8)?.try_into().ok()?))
}

impl World {
    pub fn new(cfg: WorldConfig, strict_hosting: bool) -> Result<World> {
        cfg.strategy.build()?;
        cfg.coordinator.validate()?;
        cfg.region.validate()?;
        let mut root = Rng::new(cfg.seed);
        let net = Network::new(cfg.net.clone(), root.fork(1));
        let rng = root.fork(2);
        let traffic_rng = root.fork(3);
        let chaos_rng = root.fork(4);
        let entities = Self::entity_pool(cfg.shards)?;
        let lease = InMemoryLease::new("lease-template", cfg.lease_ttl_ms);
        let mut w = World {
            now: 0,
            agenda: Agenda::default(),
            clocks: Clocks::default(),
            net,
            rng,
            traffic_rng,
            chaos_rng,
            lease,
            store: InMemoryStore::new(),
            // No strategy reads the store's table, so any node does.
            reference: PersistentState::new(
                cfg.coordinator.remember_entities,
                ClusterView::new(Address::parse("pekko://sim@store:2552")?),
            ),
            coords: Vec::new(),
            nodes: Vec::new(),
            regions: BTreeMap::new(),
            region_keys: HashMap::new(),
            gone: HashMap::new(),
            quarantined: BTreeSet::new(),
            entities,
            requested: BTreeSet::new(),
            checker: Checker::new(strict_hosting),
            touched: Vec::new(),
            bounce_origin: None,
            traffic_on: false,
            chaos_on: false,
            model_broken: false,
            two_active: false,
            steady: false,
            measuring: false,
            slow_stop_fraction: 0.0,
            loads: loads::LoadModel::default(),
            failover_probe: None,
            failover_pending: false,
            membership_gen: 0,
            next_up_number: 1,
            rebalance_moves: 0,
            last_action: 0,
            last_change: 0,
            rounds_since_action: 0,
            steps: 0,
            host: hosts::Shared::default(),
            messages: MessageStats::default(),
            handoffs: HandOffStats::default(),
            coordinator_stats: CoordinatorStats::default(),
            injected: FaultStats::default(),
            directives_refused: 0,
            shards_moved: 0,
            allocations: 0,
            initial_placement: Vec::new(),
            moves_at_steady: 0,
            max_moves_per_round: 0,
            series: Series::default(),
            cfg,
        };
        for k in 0..w.cfg.coordinators {
            let address = Address::parse(&format!("pekko://sim@c{k}:2552"))?;
            w.coords.push(CoordSlot {
                address,
                incarnation: 0,
                name: String::new(),
                driver: None,
                clock: hosts::ProcessClock::default(),
                check_restore: false,
            });
        }
        Ok(w)
    }

    /// Records every call on a machine from now on (before [`World::boot`]).
    pub fn record(&mut self, recorded_by: serde_json::Value) {
        let header = Header::new(
            self.cfg.strategy.clone(),
            self.cfg.coordinator.clone(),
            self.cfg.region.clone(),
            ExtractorDoc::Pekko {
                number_of_shards: self.cfg.shards as i32,
            },
            recorded_by,
        );
        self.host.lock().recorder = Some(Recorder::new(&header));
    }

    /// The recorded trace; None if not recording. The drivers take every output a call
    /// queues, so no machine has any left to hand over.
    pub fn finish_recording(&mut self) -> Option<String> {
        let r = self.host.lock().recorder.take()?;
        Some(r.finish())
    }

    /// Logs every notice of every machine from now on (before [`World::boot`]).
    pub fn log_events(&mut self) {
        self.host.lock().events = Some(String::new());
    }

    /// The event log, JSON lines; None if not logging.
    pub fn finish_events(&mut self) -> Option<String> {
        self.host.lock().events.take()
    }

    /// A few entity names per shard, found by hashing candidates the way Pekko's extractor
    /// does, so that traffic can reach every shard.
    fn entity_pool(shards: u32) -> Result<Vec<Vec<String>>> {
        let n =
            i32::try_from(shards).map_err(|_| crate::Error::invalid_argument("too many shards"))?;
        let mut pool: Vec<Vec<String>> = vec![Vec::new(); shards as usize];
        let mut missing = shards as usize * 3;
        let mut i = 0u64;
        while missing > 0 && i < u64::from(shards) * 400 {
            let e = format!("e{i}");
            let s: usize = pekko_shard_id(&e, n)?.parse().expect("numeric shard ids");
            if pool[s].len() < 3 {
                pool[s].push(e);
                missing -= 1;
            }
            i += 1;
        }
        if pool.iter().any(Vec::is_empty) {
            return Err(crate::Error::invalid_argument(
                "could not find entity ids for every shard",
            ));
        }
        Ok(pool)
    }

    /// Coordinator candidates and the initial nodes start at once; traffic starts.
    pub fn boot(&mut self) -> Result<()> {
        for k in 0..self.coords.len() {
            self.start_coordinator(k)?;
        }
        for _ in 0..self.cfg.nodes {
            self.add_node_quietly(Version::parse("1.0.0")?);
        }
        self.traffic_on = true;
        self.agenda.push(self.now + 1, Event::Traffic);
        if self.cfg.sample_ms > 0 {
            self.agenda.push(self.now, Event::Sample);
        }
        Ok(())
    }

    fn members(&self) -> Vec<(Member, bool)> {
        let mut v: Vec<(Member, bool)> = self
            .coords
            .iter()
            .map(|c| {
                let mut m = Member::new(c.address.clone());
                m.up_number = 0;
                (m, false)
            })
            .collect();
        v.extend(
            self.nodes
                .iter()
                .filter_map(|n| n.member.clone().map(|m| (m, n.unreachable))),
        );
        v
    }

    pub fn run_for(&mut self, ms: u64) {
        let until = self.now + ms;
        while self.step(until) {}
        self.now = self.now.max(until);
    }

    /// Runs until `done` holds (checked every `every_ms`) or `max_ms` passed; true if it held.
    pub fn run_until(
        &mut self,
        max_ms: u64,
        every_ms: u64,
        mut done: impl FnMut(&World) -> bool,
    ) -> bool {
        let end = self.now + max_ms;
        while self.now < end {
            if done(self) {
                return true;
            }
            self.run_for(every_ms.min(end - self.now).max(1));
        }
        done(self)
    }

    fn next_timer(&self) -> Option<(u64, Target)> {
        let mut best: Option<(u64, Target)> = None;
        for (k, slot) in self.coords.iter().enumerate() {
            if let Some(d) = slot.c().and_then(Coordinator::next_deadline) {
                let t = self.clocks.to_true(Proc::Coordinator(k), d, self.now);
                if best.as_ref().is_none_or(|(b, _)| t < *b) {
                    best = Some((t, Target::Coordinator(k)));
                }
            }
        }
        let mut best_region: Option<(u64, &str)> = None;
        for (id, slot) in &self.regions {
            if let Some(d) = slot.region().next_deadline() {
                let t = self.clocks.to_true(Proc::Node(slot.node), d, self.now);
                if best_region.is_none_or(|(b, _)| t < b) {
                    best_region = Some((t, id));
                }
            }
        }
        match (best, best_region) {
            (Some((t, c)), Some((r, _))) if t <= r => Some((t, c)),
            (_, Some((r, id))) => Some((r, Target::Region(id.to_owned()))),
            (b, None) => b,
        }
    }

    fn step(&mut self, limit: u64) -> bool {
        if self.steps >= self.cfg.max_steps {
            return false;
        }
        let timer = self.next_timer();
        let event_at = self.agenda.next_time();
        let timer_first = match (&timer, event_at) {
            (Some((t, _)), Some(e)) => *t <= e,
            (Some(_), None) => true,
            _ => false,
        };
        let at = if timer_first {
            timer.as_ref().map(|(t, _)| *t)
        } else {
            event_at
        };
        match at {
            Some(t) if t <= limit => self.now = self.now.max(t),
            _ => return false,
        }
        self.steps += 1;
        if self.steps == self.cfg.max_steps {
            self.checker.violate(
                self.now,
                "runaway",
                format!(
                    "the simulation took {} steps (a livelock?); stopped",
                    self.cfg.max_steps
                ),
            );
        }
        if timer_first {
            match timer.expect("checked").1 {
                Target::Coordinator(k) => self.coordinator_timeout(k),
                Target::Region(id) => {
                    self.region_do(&id, RegionStep::Timeout);
                }
            }
        } else {
            let (_, e) = self.agenda.pop().expect("peeked");
            self.event(e);
        }
        self.after_step();
        true
    }

    fn after_step(&mut self) {
        let touched = std::mem::take(&mut self.touched);
        for id in touched {
            let Some(slot) = self.regions.get(&id) else {
                continue;
            };
            let (key, running, hosted) = (
                slot.key,
                slot.region().running_shards(),
                slot.region().local_shards(),
            );
            self.checker.update_region(self.now, key, running, hosted);
        }
        let active = self
            .coords
            .iter()
            .filter(|c| c.c().is_some_and(Coordinator::is_active))
            .count();
        if active > 1 && !self.model_broken && !self.two_active {
            self.checker.violate(
                self.now,
                "two-active-coordinators",
                "two coordinators are active without any fault that breaks the lease's timing",
            );
        }
        self.two_active = active > 1;
    }

    fn event(&mut self, e: Event) {
        match e {
            Event::Deliver { to, env } => self.deliver(to, env),
            Event::StopDone { region, shard } => {
                self.trace("stop done", &(&region, ShardStopped { shard: &shard }));
                self.region_do(
                    &region,
                    RegionStep::Input(RegionInput::ShardStopped { shard }),
                );
            }
            Event::Traffic => {
                if self.traffic_on {
                    self.traffic();
                    let gap = (1_000.0 / self.cfg.rate.max(0.001)) as u64;
                    let next = self.now + self.traffic_rng.range(gap / 2, gap + gap / 2).max(1);
                    self.agenda.push(next, Event::Traffic);
                }
            }
            Event::Storm { shard } => match self.pick_sender() {
                Some(sender) => self.send_message(&sender, shard as usize, 0),
                // No region is up yet: the storm hits as soon as one is.
                None => self.agenda.push(self.now + 100, Event::Storm { shard }),
            },
            Event::MemberUp { node, incarnation } => {
                let n = &self.nodes[node];
                if n.incarnation == incarnation && n.state == NodeState::Joining {
                    self.nodes[node].state = NodeState::Up;
                    self.set_member_status(node, MemberStatus::Up);
                    self.start_region(node);
                }
            }
            Event::Reachability { node, reachable } => {
                if self.nodes[node].member.is_some() {
                    self.nodes[node].unreachable = !reachable;
                    let address = self.nodes[node].address.clone();
                    self.member_event(CoordinatorInput::Reachability { address, reachable });
                }
            }
            Event::Removed { node, incarnation } => self.removed(node, incarnation),
            Event::CoordinatorChanged => {
                let ids: Vec<String> = self.regions.keys().cloned().collect();
                for id in ids {
                    self.region_do(&id, RegionStep::Input(RegionInput::CoordinatorChanged));
                }
            }
            Event::CoordinatorRestart { k } => {
                if self.coords[k].driver.is_none() {
                    self.coords[k].incarnation += 1;
                    if let Err(e) = self.start_coordinator(k) {
                        self.checker.violate(
                            self.now,
                            "coordinator-error",
                            format!("restart: {e}"),
                        );
                    }
                }
            }
            Event::Rejoin { node } => {
                if self.nodes[node].state == NodeState::Gone {
                    let v = self.nodes[node].version.clone();
                    self.rejoin(node, v);
                }
            }
            Event::Chaos => {
                if self.chaos_on {
                    self.chaos();
                    let next = self.now + self.chaos_rng.range(5_000, 20_000);
                    self.agenda.push(next, Event::Chaos);
                }
            }
            Event::Terminated { region } => self.terminated(&region),
            Event::WatchState { k, incarnation } => self.watch_state(k, incarnation),
            Event::Bounce {
                to,
                shard,
                entity,
                payload,
            } => self.bounce_arrived(&to, shard, entity, payload),
            Event::Sample => {
                self.sample();
                self.agenda
                    .push(self.now + self.cfg.sample_ms, Event::Sample);
            }
            Event::ReportLoads => self.report_loads(),
        }
    }

    fn sample(&mut self) {
        let mut row = vec![0u32; self.nodes.len()];
        for slot in self.regions.values() {
            row[slot.node] = slot.region().running_shards().len() as u32;
        }
        self.series.samples.push((self.now, row));
    }
}
