//! One cluster node: a shard region, a standby coordinator and a worker-id holder in one
//! process, over TCP on loopback and etcd, driven by the core's synchronous drivers on one
//! thread.
//!
//! What the node does for the state machines is what the simulator's hosts do (see
//! `shardline_core::sim`), with real IO:
//! * outputs are carried out in order by the drivers; coordinator-bound messages go to every
//!   member's coordinator (the standby ones ignore them);
//! * membership comes from etcd ([`crate::membership`]); a removed member is told to the
//!   coordinator (`MemberRemoved`, then `RegionTerminated` for its region) and to the region
//!   (death watch), and its region id is quarantined: nothing it sent is handled afterwards;
//! * a coordinator that becomes active tells every region (`CoordinatorChanged`) and, once
//!   the membership view is newer than its activation, reports every region of its restored
//!   state that is no longer a member as terminated (Pekko's `watchStateActors`);
//! * a message a region cannot keep goes back to the region that forwarded it, to be routed
//!   again;
//! * the node fences itself when its membership deadline passes: it exits before touching an
//!   entity again (see [`crate::membership`]).
//!
//! Entities are the history: starting a shard, delivering a message and stopping a shard
//! each append a line to the node's history file, which the checker reads. Entities may take
//! a while to stop (`--stop-delay-file`), long enough for a hand-off to time out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::json;
use shardline_core::coordinator::{
    Coordinator, CoordinatorConfig, CoordinatorNotice, HandOffTimeoutPolicy,
};
use shardline_core::host::{Clock, CoordinatorDriver, EntityHost, RegionDriver, Transport};
use shardline_core::model::{Address, Member};
use shardline_core::protocol::{Endpoint, EntityId, Envelope, Message, Payload};
use shardline_core::region::{Region, RegionConfig, RegionNotice, ShardExtractor};
use shardline_core::strategy::StrategyConfig;
use shardline_core::workerid::snowflake::{self, Layout};
use shardline_core::workerid::{Identity, Policy, ReserveConfig, TenureConfig, WorkerIdHolder};
use shardline_etcd::Etcd;

use crate::history::History;
use crate::membership::{mono_ms, MemberInfo, Membership};
use crate::wire::{read_frame, write_frame, Frame};

#[derive(Debug, Clone)]
pub struct NodeConfig {
    pub name: String,
    /// Tells this process from earlier ones of the same node; part of the region id.
    pub incarnation: u64,
    pub listen: SocketAddr,
    pub endpoints: Vec<String>,
    pub namespace: String,
    pub history_dir: PathBuf,
    pub shards: u32,
    /// Membership session, coordinator lease and worker-id tenure all live this long.
    pub ttl_ms: u64,
    pub worker_bits: u8,
    pub rebalance_interval_ms: u64,
    pub handoff_timeout_policy: HandOffTimeoutPolicy,
    /// Read at every shard stop: how many ms the entities take to stop (absent, empty or 0:
    /// at once). The campaign writes it to make hand-offs outlast their timeout.
    pub stop_delay_file: Option<PathBuf>,
}

/// The hand-off timeout of every node: a stop slower than this times the hand-off out.
pub const HANDOFF_TIMEOUT_MS: u64 = 10_000;

/// The policy's name as the configuration spells it, for history lines.
pub fn policy_name(p: HandOffTimeoutPolicy) -> String {
    serde_json::to_value(p)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// What the stop-delay file asks for now; unreadable or malformed reads as no delay, since
/// the campaign writes it whole and a node must keep running whatever it holds.
fn stop_delay_ms(file: Option<&std::path::Path>) -> u64 {
    file.and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// The payload of a client message is its number in decimal.
pub fn message_id(payload: &[u8]) -> Option<u64> {
    std::str::from_utf8(payload).ok()?.parse().ok()
}

fn forward_id(env: &Envelope) -> Option<u64> {
    match &env.message {
        Message::Forward(f) => message_id(&f.payload),
        _ => None,
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every holder finishes its update before anything can panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

enum Event {
    /// A frame from a peer, a client (with the connection to answer on) or this node itself.
    Frame(Frame, Option<Arc<Mutex<TcpStream>>>),
}

struct MonoClock;

impl Clock for MonoClock {
    fn now_ms(&self) -> u64 {
        mono_ms()
    }
}

/// Exits the process once the membership deadline has passed: from then on other nodes may
/// already have taken this node's shards.
struct Fence {
    membership: Arc<Membership>,
    history: Arc<History>,
}

impl Fence {
    fn check(&self) {
        let until = self.membership.valid_until();
        let now = mono_ms();
        if now >= until {
            self.history
                .record("fenced", json!({"lateMs": now - until}));
            std::process::exit(3);
        }
    }
}

/// Where frames go: to this node's own queue, or to a peer's writer thread.
struct Router {
    me: String,
    loopback: Sender<Event>,
    members: BTreeMap<String, MemberInfo>,
    writers: HashMap<String, Sender<Frame>>,
    history: Arc<History>,
}

impl Router {
    fn send_to(&mut self, region: &str, frame: Frame) -> bool {
        if region == self.me {
            return self.loopback.send(Event::Frame(frame, None)).is_ok();
        }
        let Some(info) = self.members.get(region) else {
            return false;
        };
        let listen = info.listen.clone();
        let tx = self
            .writers
            .entry(region.to_owned())
            .or_insert_with(|| spawn_writer(listen));
        tx.send(frame).is_ok()
    }

    fn broadcast(&mut self, frame: &Frame) {
        let regions: Vec<String> = self.members.keys().cloned().collect();
        for r in regions {
            self.send_to(&r, frame.clone());
        }
    }
}

/// One connection per peer, in send order; a frame that cannot be written after a reconnect
/// is dropped (the peer is dead or cut off, which the protocol and the checker account for).
fn spawn_writer(addr: String) -> Sender<Frame> {
    let (tx, rx) = mpsc::channel::<Frame>();
    let spawned = std::thread::Builder::new()
        .name(format!("to {addr}"))
        .spawn(move || {
            let Ok(addr) = addr.parse::<SocketAddr>() else {
                eprintln!("node: peer address {addr:?} does not parse; dropping its frames");
                return;
            };
            let mut conn: Option<TcpStream> = None;
            for frame in rx {
                for _ in 0..2 {
                    if conn.is_none() {
                        conn = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok();
                        if let Some(c) = &conn {
                            let _ = c.set_nodelay(true);
                        }
                    }
                    let Some(c) = conn.as_mut() else { break };
                    if write_frame(c, &frame).is_ok() {
                        break;
                    }
                    conn = None;
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("node: cannot start a writer thread: {e}");
    }
    tx
}

struct NodeWire(Arc<Mutex<Router>>);

impl Transport for NodeWire {
    fn send(&mut self, envelope: Envelope) -> shardline_core::Result<()> {
        let mut r = lock(&self.0);
        match envelope.to.clone() {
            Endpoint::Coordinator => r.broadcast(&Frame::Envelope { envelope }),
            Endpoint::Region(to) => {
                let m = forward_id(&envelope);
                if let Some(m) = m {
                    r.history.record("fwd", json!({"m": m, "to": to}));
                }
                if !r.send_to(&to, Frame::Envelope { envelope }) {
                    if let Some(m) = m {
                        r.history.record("fwd-nowhere", json!({"m": m, "to": to}));
                    }
                }
            }
        }
        Ok(())
    }
}

struct Entities {
    history: Arc<History>,
    fence: Arc<Fence>,
    router: Arc<Mutex<Router>>,
    /// The region whose message is being handled, for sending back what cannot be kept.
    origin: Arc<Mutex<Option<String>>>,
    stop_delay_file: Option<PathBuf>,
    /// Stops under way: when each finishes (monotonic ms), for the node's loop to report.
    stopping: Arc<Mutex<Vec<(u64, String)>>>,
}

impl EntityHost for Entities {
    fn start_shard(&mut self, shard: &str, entities: &[EntityId]) -> shardline_core::Result<()> {
        self.fence.check();
        self.history
            .record("start", json!({"s": shard, "entities": entities.len()}));
        Ok(())
    }

    fn deliver(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
    ) -> shardline_core::Result<()> {
        self.fence.check();
        self.history.record(
            "deliver",
            json!({"s": shard, "e": entity, "m": message_id(&payload)}),
        );
        Ok(())
    }

    fn stop_shard(&mut self, shard: &str) -> shardline_core::Result<bool> {
        let ms = stop_delay_ms(self.stop_delay_file.as_deref());
        if ms == 0 {
            self.history.record("stop", json!({"s": shard}));
            return Ok(true);
        }
        self.history.record("stop", json!({"s": shard, "ms": ms}));
        lock(&self.stopping).push((mono_ms() + ms, shard.to_owned()));
        Ok(false)
    }

    fn undeliverable(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
        reason: &str,
    ) -> shardline_core::Result<()> {
        let mut router = lock(&self.router);
        let origin = lock(&self.origin)
            .clone()
            .filter(|o| router.members.contains_key(o))
            .unwrap_or_else(|| router.me.clone());
        self.history.record(
            "bounce",
            json!({"m": message_id(&payload), "s": shard, "to": origin, "why": reason}),
        );
        let frame = Frame::Bounce {
            shard: shard.to_owned(),
            entity: entity.to_owned(),
            payload,
        };
        if !router.send_to(&origin, frame) {
            let me = router.me.clone();
            self.history
                .record("bounce-nowhere", json!({"to": origin, "me": me}));
        }
        Ok(())
    }
}

fn log_err(what: &str, r: shardline_core::Result<()>) {
    if let Err(e) = r {
        eprintln!("node: {what}: {e}");
    }
}

struct Node {
    me: String,
    history: Arc<History>,
    membership: Arc<Membership>,
    fence: Arc<Fence>,
    router: Arc<Mutex<Router>>,
    origin: Arc<Mutex<Option<String>>>,
    coordinator: CoordinatorDriver,
    region: RegionDriver,
    known: BTreeMap<String, (MemberInfo, i64)>,
    view_gen: u64,
    quarantined: BTreeSet<String>,
    /// After an activation: the restored regions to check once the view is at least this new.
    watch: Option<(u64, Vec<String>)>,
    stopping: Arc<Mutex<Vec<(u64, String)>>>,
}

/// Starts the node and runs it until the process is killed or fences itself.
pub fn run(cfg: NodeConfig) -> Result<(), String> {
    let me = format!("{}-{}", cfg.name, cfg.incarnation);
    std::fs::create_dir_all(&cfg.history_dir)
        .map_err(|e| format!("--history {}: {e}", cfg.history_dir.display()))?;
    let history = Arc::new(
        History::open(&cfg.history_dir.join(format!("{me}.jsonl")), &me)
            .map_err(|e| format!("--history {}: {e}", cfg.history_dir.display()))?,
    );
    let listener =
        TcpListener::bind(cfg.listen).map_err(|e| format!("--listen {}: {e}", cfg.listen))?;
    let listen = listener
        .local_addr()
        .map_err(|e| format!("--listen {}: {e}", cfg.listen))?;
    // The system name carries the incarnation, so a restarted node is a new member even on
    // the same port, as Pekko's unique address is.
    let address = format!("pekko://{me}@{}:{}", listen.ip(), listen.port());
    let info = MemberInfo {
        node: cfg.name.clone(),
        region: me.clone(),
        address: address.clone(),
        listen: listen.to_string(),
    };
    history.record(
        "boot",
        json!({
            "address": address,
            "listen": listen.to_string(),
            "pid": std::process::id(),
            "policy": policy_name(cfg.handoff_timeout_policy),
        }),
    );
    let membership = Arc::new(Membership::join(
        cfg.endpoints.clone(),
        &cfg.namespace,
        info,
        cfg.ttl_ms,
    )?);
    let fence = Arc::new(Fence {
        membership: membership.clone(),
        history: history.clone(),
    });
    let (tx, rx) = mpsc::channel();
    spawn_listener(listener, tx.clone())?;
    spawn_worker_ids(&cfg, &me, history.clone())?;

    let router = Arc::new(Mutex::new(Router {
        me: me.clone(),
        loopback: tx,
        members: BTreeMap::new(),
        writers: HashMap::new(),
        history: history.clone(),
    }));
    let etcd = Etcd::connect_with_timeout(&cfg.endpoints, &cfg.namespace, Duration::from_secs(2))
        .map_err(|e| e.to_string())?;
    let strategy = StrategyConfig::from_json(&json!({"kind": "least-shard"}))
        .and_then(|s| s.build())
        .map_err(|e| e.to_string())?;
    let self_address = Address::parse(&address).map_err(|e| e.to_string())?;
    let config = CoordinatorConfig {
        rebalance_interval_ms: cfg.rebalance_interval_ms,
        handoff_timeout_ms: HANDOFF_TIMEOUT_MS,
        handoff_timeout_policy: cfg.handoff_timeout_policy,
        lease_retry_interval_ms: 1_000,
        ..CoordinatorConfig::default()
    };
    let coordinator =
        Coordinator::new(config, strategy, self_address.clone()).map_err(|e| e.to_string())?;
    let coordinator = CoordinatorDriver::new(
        coordinator,
        Box::new(NodeWire(router.clone())),
        Box::new(MonoClock),
        Box::new(etcd.lease("coordinator", &me, cfg.ttl_ms)),
        Box::new(etcd.store_bound_to_lease("coordinator", "coordinator")),
    );
    let extractor = ShardExtractor::pekko(cfg.shards as i32).map_err(|e| e.to_string())?;
    let region = Region::new(
        RegionConfig {
            retry_interval_ms: 500,
            ..RegionConfig::default()
        },
        &me,
        &address,
        extractor,
    )
    .map_err(|e| e.to_string())?;
    let origin = Arc::new(Mutex::new(None));
    let stopping = Arc::new(Mutex::new(Vec::new()));
    let region = RegionDriver::new(
        region,
        Box::new(NodeWire(router.clone())),
        Box::new(MonoClock),
        Box::new(Entities {
            history: history.clone(),
            fence: fence.clone(),
            router: router.clone(),
            origin: origin.clone(),
            stop_delay_file: cfg.stop_delay_file.clone(),
            stopping: stopping.clone(),
        }),
    );
    let mut node = Node {
        me,
        history,
        membership,
        fence,
        router,
        origin,
        coordinator,
        region,
        known: BTreeMap::new(),
        view_gen: 0,
        quarantined: BTreeSet::new(),
        watch: None,
        stopping,
    };
    node.sync_members();
    let r = node.coordinator.start();
    log_err("coordinator start", r);
    node.coordinator_notices();
    let r = node.region.start();
    log_err("region start", r);
    node.run(rx);
}

fn spawn_listener(listener: TcpListener, tx: Sender<Event>) -> Result<(), String> {
    std::thread::Builder::new()
        .name("listener".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let tx = tx.clone();
                let spawned = std::thread::Builder::new()
                    .name("reader".into())
                    .spawn(move || read_connection(stream, tx));
                if let Err(e) = spawned {
                    eprintln!("node: cannot start a reader thread: {e}");
                }
            }
        })
        .map(drop)
        .map_err(|e| format!("cannot start the listener thread: {e}"))
}

fn read_connection(mut stream: TcpStream, tx: Sender<Event>) {
    let _ = stream.set_nodelay(true);
    let reply = stream.try_clone().ok().map(|s| {
        let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
        Arc::new(Mutex::new(s))
    });
    let peer = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    loop {
        match read_frame(&mut stream) {
            Ok(Some(frame)) => {
                let reply = matches!(frame, Frame::Route { .. })
                    .then(|| reply.clone())
                    .flatten();
                if tx.send(Event::Frame(frame, reply)).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::ConnectionReset {
                    eprintln!("node: connection from {peer}: {e}");
                }
                return;
            }
        }
    }
}

/// Real time for the worker-id holder.
struct SystemClock;

impl snowflake::Clock for SystemClock {
    fn wall_ms(&mut self) -> u64 {
        crate::history::wall_us() / 1_000
    }
    fn monotonic_ms(&mut self) -> u64 {
        mono_ms()
    }
    fn sleep_until(&mut self, at: u64) {
        let now = mono_ms();
        if at > now {
            std::thread::sleep(Duration::from_millis(at - now));
        }
    }
}

/// Holds a worker id and issues a Snowflake id every 50 ms, recording each; when the id is
/// lost it records that and reserves again.
fn spawn_worker_ids(cfg: &NodeConfig, me: &str, history: Arc<History>) -> Result<(), String> {
    let etcd = Etcd::connect_with_timeout(&cfg.endpoints, &cfg.namespace, Duration::from_secs(2))
        .map_err(|e| e.to_string())?;
    let (ttl_ms, bits, me, incarnation) =
        (cfg.ttl_ms, cfg.worker_bits, me.to_owned(), cfg.incarnation);
    std::thread::Builder::new()
        .name("worker-id".into())
        .spawn(move || {
            let mut clock = SystemClock;
            let mut attempt = 0u64;
            loop {
                attempt += 1;
                let config = ReserveConfig {
                    worker_bits: bits,
                    policy: Policy::Lowest,
                    ..ReserveConfig::default()
                };
                let who = Identity {
                    owner: me.clone(),
                    incarnation: incarnation * 1_000 + attempt,
                };
                let held = WorkerIdHolder::acquire(
                    etcd.registry(ttl_ms),
                    config,
                    TenureConfig::for_ttl(ttl_ms),
                    Layout::default(),
                    who,
                    incarnation ^ attempt,
                    &mut clock,
                );
                let mut holder = match held {
                    Ok(h) => h,
                    Err(e) => {
                        history.record("worker-failed", json!({"why": e.to_string()}));
                        std::thread::sleep(Duration::from_secs(1));
                        continue;
                    }
                };
                let w = holder.worker_id();
                history.record("worker", json!({"w": w, "epoch": holder.epoch()}));
                loop {
                    std::thread::sleep(Duration::from_millis(50));
                    match holder.next_id(&mut clock) {
                        Ok(id) => history.record("id", json!({"w": w, "id": id})),
                        Err(e) => {
                            history.record("worker-lost", json!({"w": w, "why": e.to_string()}));
                            // Whatever the cause, back off before reserving again rather
                            // than churn the registry.
                            std::thread::sleep(Duration::from_secs(1));
                            break;
                        }
                    }
                }
            }
        })
        .map(drop)
        .map_err(|e| format!("cannot start the worker-id thread: {e}"))
}

impl Node {
    fn run(&mut self, rx: Receiver<Event>) -> ! {
        loop {
            self.fence.check();
            self.sync_members();
            self.run_watch();
            let now = mono_ms();
            let due = [
                self.coordinator.next_deadline(),
                self.region.next_deadline(),
                lock(&self.stopping).iter().map(|(at, _)| *at).min(),
            ]
            .into_iter()
            .flatten()
            .min();
            let wait = due.map_or(50, |d| d.saturating_sub(now)).min(50);
            match rx.recv_timeout(Duration::from_millis(wait)) {
                Ok(Event::Frame(frame, reply)) => {
                    self.fence.check();
                    self.handle(frame, reply);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    // The router holds a sender for as long as the node lives.
                    unreachable!("the node's own queue closed")
                }
            }
            self.finish_stops();
            let now = mono_ms();
            if self.coordinator.next_deadline().is_some_and(|d| d <= now) {
                let r = self.coordinator.poll().map(drop);
                log_err("coordinator timer", r);
                self.coordinator_notices();
            }
            if self.region.next_deadline().is_some_and(|d| d <= now) {
                let r = self.region.poll().map(drop);
                log_err("region timer", r);
                self.region_notices();
            }
        }
    }

    /// Tells the region about slow stops that have finished.
    fn finish_stops(&mut self) {
        let now = mono_ms();
        let done: Vec<String> = {
            let mut stopping = lock(&self.stopping);
            let (done, later) = stopping.drain(..).partition(|(at, _)| *at <= now);
            *stopping = later;
            done.into_iter().map(|(_, s)| s).collect()
        };
        for shard in done {
            self.fence.check();
            self.history.record("stopped", json!({"s": shard}));
            let r = self.region.shard_stopped(&shard);
            log_err("shard stopped", r);
            self.region_notices();
        }
    }

    fn handle(&mut self, frame: Frame, reply: Option<Arc<Mutex<TcpStream>>>) {
        match frame {
            Frame::Envelope { envelope } => self.envelope(envelope),
            Frame::CoordinatorChanged => {
                let r = self.region.coordinator_changed();
                log_err("coordinator changed", r);
                self.region_notices();
            }
            Frame::Bounce {
                shard,
                entity,
                payload,
            } => {
                let m = message_id(&payload);
                if let Err(e) = self.region.route_to_shard(&shard, &entity, payload) {
                    self.history
                        .record("bounce-refused", json!({"m": m, "why": e.to_string()}));
                }
                self.region_notices();
            }
            Frame::Route { entity, message } => {
                let shard = self.region.region().shard_of(&entity).ok();
                self.history
                    .record("accept", json!({"m": message, "s": shard, "e": entity}));
                let accepted = match self
                    .region
                    .try_route(&entity, message.to_string().into_bytes())
                {
                    Ok(r) => {
                        log_err("route", r);
                        true
                    }
                    Err(rejected) => {
                        self.history.record(
                            "reject",
                            json!({"m": message, "why": format!("{:?}", rejected.reason)}),
                        );
                        false
                    }
                };
                self.region_notices();
                if let Some(reply) = reply {
                    let ack = Frame::Ack {
                        message,
                        accepted,
                        region: self.me.clone(),
                    };
                    let _ = write_frame(&mut *lock(&reply), &ack);
                }
            }
            Frame::Ack { .. } => {}
        }
    }

    fn envelope(&mut self, envelope: Envelope) {
        if let Endpoint::Region(from) = &envelope.from {
            if self.quarantined.contains(&**from) {
                if let Some(m) = forward_id(&envelope) {
                    self.history
                        .record("quarantined", json!({"m": m, "from": from}));
                }
                return;
            }
        }
        match envelope.to.clone() {
            Endpoint::Coordinator => {
                let r = self.coordinator.receive(envelope);
                log_err("coordinator receive", r);
                self.coordinator_notices();
            }
            Endpoint::Region(to) if *to == *self.me => {
                *lock(&self.origin) = match &envelope.from {
                    Endpoint::Region(r) => Some(r.to_string()),
                    Endpoint::Coordinator => None,
                };
                let r = self.region.receive(envelope);
                *lock(&self.origin) = None;
                log_err("region receive", r);
                self.region_notices();
            }
            Endpoint::Region(to) => {
                // For an earlier incarnation of this node.
                if let Some(m) = forward_id(&envelope) {
                    self.history.record("stale", json!({"m": m, "to": to}));
                }
            }
        }
    }

    fn coordinator_notices(&mut self) {
        for n in self.coordinator.take_notices() {
            match n {
                CoordinatorNotice::Active { token } => {
                    self.history.record("active", json!({"token": token.0}));
                    lock(&self.router).broadcast(&Frame::CoordinatorChanged);
                    let restored = self
                        .coordinator
                        .coordinator()
                        .state()
                        .regions()
                        .map(|(r, _, _)| r.clone())
                        .collect();
                    self.watch = Some((self.membership.gen() + 2, restored));
                }
                CoordinatorNotice::SteppedDown { token, reason } => {
                    self.history
                        .record("stepped-down", json!({"token": token.0, "why": reason}));
                }
                CoordinatorNotice::HandOffTimedOut {
                    shard,
                    from,
                    policy,
                } => {
                    // Where the shard went tells the checker whether the move was forced.
                    let to = self.coordinator.coordinator().state().home_of(&shard);
                    self.history.record(
                        "handoff-timeout",
                        json!({"s": shard, "from": from, "to": to, "policy": policy_name(policy)}),
                    );
                }
                _ => {}
            }
        }
    }

    fn region_notices(&mut self) {
        for n in self.region.take_notices() {
            if let RegionNotice::DirectiveRefused { .. } = n {
                self.history.record("directive-refused", json!({}));
            }
        }
    }

    /// Death watch for a restored state, once the membership view postdates the activation.
    fn run_watch(&mut self) {
        let Some((gen, _)) = &self.watch else { return };
        if self.membership.gen() < *gen {
            return;
        }
        let Some((_, restored)) = self.watch.take() else {
            return;
        };
        if !self.coordinator.coordinator().is_active() {
            return;
        }
        let view = self.membership.view();
        for region in restored {
            if !view.members.contains_key(&region) {
                self.history.record("watch-dead", json!({"r": region}));
                let r = self.coordinator.region_terminated(&region);
                log_err("region terminated", r);
            }
        }
        self.coordinator_notices();
    }

    fn sync_members(&mut self) {
        let view = self.membership.view();
        if view.gen == self.view_gen {
            return;
        }
        self.view_gen = view.gen;
        let added: Vec<(MemberInfo, i64)> = view
            .members
            .iter()
            .filter(|(r, _)| !self.known.contains_key(*r))
            .map(|(_, m)| m.clone())
            .collect();
        let removed: Vec<MemberInfo> = self
            .known
            .iter()
            .filter(|(r, _)| !view.members.contains_key(*r))
            .map(|(_, (m, _))| m.clone())
            .collect();
        {
            let mut router = lock(&self.router);
            router.members = view
                .members
                .iter()
                .map(|(r, (m, _))| (r.clone(), m.clone()))
                .collect();
            for m in &removed {
                router.writers.remove(&m.region);
            }
        }
        for (m, revision) in added {
            let Ok(address) = Address::parse(&m.address) else {
                eprintln!(
                    "node: member {} has a bad address {:?}",
                    m.region, m.address
                );
                continue;
            };
            let mut member = Member::new(address);
            member.up_number = i32::try_from(revision).unwrap_or(i32::MAX);
            let r = self.coordinator.member(member);
            log_err("member", r);
        }
        for m in removed {
            self.history.record("removed", json!({"r": m.region}));
            self.quarantined.insert(m.region.clone());
            let r = self.coordinator.member_removed(&m.address);
            log_err("member removed", r);
            let r = self.coordinator.region_terminated(&m.region);
            log_err("region terminated", r);
            let r = self.region.region_terminated(&m.region);
            log_err("region terminated", r);
            self.region_notices();
        }
        self.coordinator_notices();
        self.known = view.members;
    }
}
