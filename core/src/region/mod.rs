//! A shard region (or proxy) as a sans-IO state machine: routes entity messages to the local
//! shard, to the shard's remote home, or into a bounded buffer while the home is unknown or a
//! hand-off is under way, and takes part in the coordinator's hand-off protocol.
//!
//! Fencing: the region remembers the largest coordinator token it has seen and, per shard, the
//! largest [`Stamp`]. Any directive below those is refused, so a deposed coordinator cannot
//! steer it and a delayed `HostShard` / `ShardHome` can never bring back a shard that has
//! moved on. A directive naming another home with a newer stamp stops a local copy at once.
//!
//! Unlike Pekko, buffered messages are never dropped at `HandOff`: they wait for the new home
//! and leave in arrival order. When the buffer is full the caller gets its message back.

mod buffer;
mod extractor;
#[cfg(feature = "model-check")]
mod fork;
pub(crate) mod json;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::metrics::Metric;
use crate::model::Amount;
use crate::model::Timers;
use crate::model::{IdKey, IdMap};
use crate::protocol::{
    check_loads, Command, Directive, Endpoint, EntityId, Envelope, FencingToken, Forward, Message,
    Payload, RegionId, RegionName, RegionOffer, ShardHome, ShardId, Stamp,
};
use crate::{Error, Result};

pub use buffer::Buffered;
pub use extractor::{ExtractorDoc, ShardExtractor, ShardName};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RegionConfig {
    /// Messages held for all shards together before callers get theirs back.
    pub buffer_capacity: usize,
    /// `retry-interval`: re-registration and re-asking for homes of buffered shards.
    pub retry_interval_ms: u64,
    /// A proxy routes but never hosts shards.
    pub proxy: bool,
    /// Tell the coordinator which entities start and which are passivated.
    pub remember_entities: bool,
    /// Capacity, tags and shard cap, sent with every registration (least-load reads them);
    /// absent: what every Pekko region offers.
    #[serde(skip_serializing_if = "RegionOffer::is_default")]
    pub offer: RegionOffer,
}

impl Default for RegionConfig {
    fn default() -> Self {
        RegionConfig {
            buffer_capacity: 100_000,
            retry_interval_ms: 2_000,
            proxy: false,
            remember_entities: false,
            offer: RegionOffer::default(),
        }
    }
}

impl RegionConfig {
    pub fn from_json(value: &serde_json::Value) -> Result<RegionConfig> {
        let c = RegionConfig::deserialize(value)
            .map_err(|e| Error::invalid_argument(format!("region config: {e}")))?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<()> {
        if self.buffer_capacity == 0 || self.retry_interval_ms == 0 {
            return Err(Error::invalid_argument(
                "region config: bufferCapacity and retryIntervalMs must be > 0",
            ));
        }
        self.offer
            .check()
            .map_err(|e| e.context("region config: offer"))?;
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum RegionInput {
    Receive(Envelope),
    /// The coordinator moved (or may have): register again.
    CoordinatorChanged,
    /// Another region died: forget the homes it had.
    RegionTerminated {
        region: RegionId,
    },
    /// The host finished stopping a shard's entities after [`RegionOutput::StopShard`].
    ShardStopped {
        shard: ShardId,
    },
    /// An entity was passivated on purpose (remember-entities forgets it).
    EntityPassivated {
        shard: ShardId,
        entity: EntityId,
    },
    /// Hand every shard off, then stop.
    GracefulShutdown,
    /// The host measured its shards' loads (see [`check_loads`]); they go to the
    /// coordinator, which smooths them. Malformed loads are refused whole, with a notice.
    ReportLoads {
        loads: BTreeMap<ShardId, Amount>,
    },
    /// The region's offer changed: kept for later registrations and sent now.
    UpdateOffer {
        offer: RegionOffer,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum RegionOutput {
    Send(
        #[serde(with = "crate::protocol::nested::envelope")]
        #[cfg_attr(
            feature = "schema",
            schemars(with = "crate::protocol::nested::envelope::In")
        )]
        Envelope,
    ),
    /// Start hosting a shard, with the entities to start right away (remember-entities).
    StartShard {
        shard: ShardId,
        entities: Vec<EntityId>,
    },
    /// More remembered entities for a shard already running.
    StartEntities {
        shard: ShardId,
        entities: Vec<EntityId>,
    },
    Deliver {
        shard: ShardId,
        entity: EntityId,
        #[serde(with = "crate::protocol::payload")]
        #[cfg_attr(
            feature = "schema",
            schemars(with = "crate::protocol::payload::Schema")
        )]
        payload: Payload,
    },
    /// Stop every entity of the shard, then report [`RegionInput::ShardStopped`].
    StopShard { shard: ShardId },
    /// A message forwarded here by another region that could not be kept.
    Undeliverable {
        shard: ShardId,
        entity: EntityId,
        #[serde(with = "crate::protocol::payload")]
        #[cfg_attr(
            feature = "schema",
            schemars(with = "crate::protocol::payload::Schema")
        )]
        payload: Payload,
        reason: String,
    },
    /// Graceful shutdown finished: nothing hosted, nothing buffered.
    Stopped,
    Notice(
        #[serde(with = "json::nested::notice")]
        #[cfg_attr(feature = "schema", schemars(with = "json::nested::notice::In"))]
        RegionNotice,
    ),
}

/// Things worth logging; as with the coordinator's notices, the variants marked
/// `x-severity: warning` report something refused and are logged as warnings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum RegionNotice {
    Registered {
        token: FencingToken,
    },
    /// A directive older than what the region has seen was ignored.
    #[cfg_attr(feature = "schema", schemars(extend("x-severity" = "warning")))]
    DirectiveRefused {
        directive: String,
        shard: Option<ShardId>,
        token: FencingToken,
        seen: Option<Stamp>,
    },
    /// An input was malformed and ignored (`reportLoads`, `updateOffer`).
    #[cfg_attr(feature = "schema", schemars(extend("x-severity" = "warning")))]
    InputRefused {
        input: String,
        reason: String,
    },
}

/// Why a message was handed back to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejectReason {
    BufferFull { capacity: usize },
    ShutDown,
}

/// A message the region could not accept, returned with its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub reason: RejectReason,
    pub shard: ShardId,
    pub entity: EntityId,
    pub payload: Payload,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            RejectReason::BufferFull { capacity } => write!(
                f,
                "message for entity {:?} (shard {:?}) refused: the region buffer is full ({capacity} messages wait for shard homes)",
                self.entity, self.shard
            ),
            RejectReason::ShutDown => write!(
                f,
                "message for entity {:?} (shard {:?}) refused: the region has shut down",
                self.entity, self.shard
            ),
        }
    }
}

impl std::error::Error for Rejected {}

impl From<Rejected> for Error {
    fn from(r: Rejected) -> Error {
        Error::invalid_state(r.to_string())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "model-check", derive(Hash))]
enum Status {
    Running,
    /// `BeginHandOff` seen: new messages wait.
    HandingOff,
    /// The host is stopping the entities. `ack`: the `HandOff` stamp to answer with;
    /// `restart`: a newer `HostShard` that arrived meanwhile.
    Stopping {
        ack: Option<Stamp>,
        restart: Option<Restart>,
    },
}

/// A copy to start once the stopping one has stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct Restart {
    stamp: Stamp,
    entities: Vec<EntityId>,
    /// A hand-off began after the restart was asked for, and its `BeginHandOff` was
    /// acknowledged: a promise to deliver nothing more, which a force-reallocate timeout acts
    /// on by giving the shard away. The new copy keeps it by starting as handing off.
    handing_off: bool,
}

#[derive(Debug, Clone)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct LocalShard {
    status: Status,
    /// Entities started here (routed to, with remember-entities, or listed by the coordinator).
    entities: BTreeSet<EntityId>,
}

/// Terminated regions remembered for routing; old enough ones cannot come back late.
const MAX_DEAD_REGIONS: usize = 4_096;

/// Region ids kept for `homes` before unused ones are looked for.
const MIN_NAMES_LIMIT: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "model-check", derive(Hash))]
enum Shutdown {
    No,
    Graceful,
    Done,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Timer {
    Register,
    Retry,
}

pub struct Region {
    config: RegionConfig,
    /// Every envelope this region sends names it.
    id: RegionName,
    node: String,
    extractor: ShardExtractor,
    seen_token: FencingToken,
    registered: Option<FencingToken>,
    register_delay: u64,
    /// Remote homes. Shard ids inline and region ids shared (see [`Region::intern`]), so
    /// routing to a cached home touches little memory and a cached home costs a few words.
    homes: IdMap<RegionName>,
    /// The region ids `homes` refers to, one copy each.
    names: HashSet<RegionName>,
    /// `names` is pruned of ids no home refers to when it grows past this.
    names_limit: usize,
    local: IdMap<LocalShard>,
    latest: HashMap<ShardId, Stamp>,
    asked: HashSet<ShardId>,
    /// Regions reported terminated, most recent last: a late `ShardHome` naming one must not
    /// bring it back as a home. Region ids name incarnations, so they never return.
    dead: HashSet<RegionId>,
    dead_order: VecDeque<RegionId>,
    buffer: buffer::Buffer,
    shutdown: Shutdown,
    timers: Timers<Timer>,
    out: VecDeque<RegionOutput>,
    now: u64,
    counters: Counters,
}

/// Totals since creation, for [`Region::metrics`]; never read by routing.
#[derive(Debug, Clone, Default)]
struct Counters {
    delivered: u64,
    forwarded: u64,
    rejected_buffer_full: u64,
    rejected_shut_down: u64,
    directives_refused: u64,
}

impl fmt::Debug for Region {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Region")
            .field("id", &self.id)
            .field("registered", &self.registered)
            .field("local", &self.local.len())
            .field("buffered", &self.buffer.len())
            .finish()
    }
}

impl Region {
    /// `node` is this region's cluster address, as the coordinator's membership knows it.
    pub fn new(
        config: RegionConfig,
        id: &str,
        node: &str,
        extractor: ShardExtractor,
    ) -> Result<Region> {
        config.validate()?;
        if id.is_empty() {
            return Err(Error::invalid_argument("region id is empty"));
        }
        let first_retry = (config.retry_interval_ms / 8).max(100);
        Ok(Region {
            buffer: buffer::Buffer::new(config.buffer_capacity),
            register_delay: first_retry,
            config,
            id: id.into(),
            node: node.to_owned(),
            extractor,
            seen_token: FencingToken(0),
            registered: None,
            homes: IdMap::default(),
            names: HashSet::new(),
            names_limit: MIN_NAMES_LIMIT,
            local: IdMap::default(),
            latest: HashMap::new(),
            asked: HashSet::new(),
            dead: HashSet::new(),
            dead_order: VecDeque::new(),
            shutdown: Shutdown::No,
            timers: Timers::default(),
            out: VecDeque::new(),
            now: 0,
            counters: Counters::default(),
        })
    }

    // ---- queries ------------------------------------------------------------------------

    /// What a host exports: state now (gauges) and totals since creation (counters).
    pub fn metrics(&self) -> Vec<Metric> {
        let c = &self.counters;
        let region = |m: Metric| m.with("shardline.region", &self.id);
        vec![
            region(Metric::gauge(
                "shardline.region.registered",
                u64::from(self.is_registered()),
                "1 while the coordinator has acknowledged this region",
            )),
            region(Metric::gauge(
                "shardline.region.shards",
                self.local.len() as u64,
                "shards hosted here",
            )),
            region(Metric::gauge(
                "shardline.region.homes",
                self.homes.len() as u64,
                "remote shard homes known",
            )),
            region(Metric::gauge(
                "shardline.region.buffered",
                self.buffer.len() as u64,
                "messages waiting for a shard home or a hand-off",
            )),
            region(Metric::counter(
                "shardline.region.delivered",
                c.delivered,
                "messages delivered to local entities",
            )),
            region(Metric::counter(
                "shardline.region.forwarded",
                c.forwarded,
                "messages sent on to the shard's home",
            )),
            region(Metric::counter(
                "shardline.region.rejected",
                c.rejected_buffer_full,
                "messages refused",
            ))
            .with("shardline.reason", "buffer_full"),
            region(Metric::counter(
                "shardline.region.rejected",
                c.rejected_shut_down,
                "messages refused",
            ))
            .with("shardline.reason", "shut_down"),
            region(Metric::counter(
                "shardline.region.directives_refused",
                c.directives_refused,
                "directives older than one already seen, ignored (fencing)",
            )),
        ]
    }

    pub fn id(&self) -> &str {
        &self.id
    }
    pub fn is_registered(&self) -> bool {
        self.registered.is_some()
    }
    /// Shards hosted here (in any state), sorted.
    pub fn local_shards(&self) -> Vec<ShardId> {
        let mut v: Vec<ShardId> = self.local.keys().map(|s| s.as_str().into()).collect();
        v.sort();
        v
    }
    /// Shards hosted here and accepting messages.
    pub fn running_shards(&self) -> Vec<ShardId> {
        let mut v: Vec<ShardId> = self
            .local
            .iter()
            .filter(|(_, l)| l.status == Status::Running)
            .map(|(s, _)| s.as_str().into())
            .collect();
        v.sort();
        v
    }
    pub fn home_of(&self, shard: &str) -> Option<&str> {
        if self
            .local
            .get(shard)
            .is_some_and(|l| l.status == Status::Running)
        {
            return Some(&self.id);
        }
        self.homes.get(shard).map(|r| &**r)
    }
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }
    pub fn buffered_for(&self, shard: &str) -> usize {
        self.buffer.shard_len(shard)
    }
    pub fn latest_stamp(&self, shard: &str) -> Option<Stamp> {
        self.latest.get(shard).copied()
    }
    pub fn shard_of(&self, entity: &str) -> Result<ShardId> {
        self.extractor.shard_of(entity)
    }

    // ---- driving ------------------------------------------------------------------------

    pub fn start(&mut self, now_ms: u64) {
        self.tick(now_ms);
        self.register_now();
        self.timers
            .set(Timer::Retry, self.now + self.config.retry_interval_ms);
    }

    pub fn poll_output(&mut self) -> Option<RegionOutput> {
        crate::model::outbox::poll(&mut self.out)
    }

    /// How many outputs wait to be polled.
    pub fn queued_outputs(&self) -> usize {
        self.out.len()
    }

    pub fn drain_outputs(&mut self) -> Vec<RegionOutput> {
        self.out.drain(..).collect()
    }

    pub fn next_deadline(&self) -> Option<u64> {
        self.timers.next_deadline()
    }

    pub fn on_timeout(&mut self, now_ms: u64) {
        self.tick(now_ms);
        while let Some(t) = self.timers.pop_due(self.now) {
            match t {
                Timer::Register => {
                    if self.registered.is_none() && self.shutdown != Shutdown::Done {
                        self.send_register();
                        self.register_delay =
                            (self.register_delay * 2).min(self.config.retry_interval_ms);
                        self.timers
                            .set(Timer::Register, self.now + self.register_delay);
                    }
                }
                Timer::Retry => self.retry(),
            }
        }
    }

    /// Routes a message from a local sender. On `Err` nothing was queued.
    pub fn route(
        &mut self,
        now_ms: u64,
        entity: &str,
        payload: Payload,
    ) -> std::result::Result<(), Rejected> {
        let shard = match self.extractor.shard_name(entity) {
            Ok(s) => s,
            Err(e) => {
                // Only a custom extractor could get here, and it cannot fail; keep the message.
                debug_assert!(false, "{e}");
                return Err(Rejected {
                    reason: RejectReason::ShutDown,
                    shard: ShardId::default(),
                    entity: entity.into(),
                    payload,
                });
            }
        };
        self.route_to_shard(now_ms, shard.as_str(), entity, payload)
    }

    /// Routes a message whose shard the caller already knows.
    pub fn route_to_shard(
        &mut self,
        now_ms: u64,
        shard: &str,
        entity: &str,
        payload: Payload,
    ) -> std::result::Result<(), Rejected> {
        self.tick(now_ms);
        self.route_inner(
            shard,
            Buffered {
                entity: entity.into(),
                payload,
            },
        )
        .map_err(|(reason, m)| {
            match reason {
                RejectReason::BufferFull { .. } => self.counters.rejected_buffer_full += 1,
                RejectReason::ShutDown => self.counters.rejected_shut_down += 1,
            }
            Rejected {
                reason,
                shard: shard.into(),
                entity: m.entity,
                payload: m.payload,
            }
        })
    }

    pub fn handle(&mut self, now_ms: u64, input: RegionInput) {
        self.tick(now_ms);
        match input {
            RegionInput::Receive(env) => self.receive(env),
            RegionInput::CoordinatorChanged => {
                self.registered = None;
                self.register_delay = (self.config.retry_interval_ms / 8).max(100);
                self.register_now();
            }
            RegionInput::RegionTerminated { region } => {
                self.homes.retain(|_, r| **r != *region);
                self.names.remove(region.as_str());
                if self.dead.insert(region.clone()) {
                    self.dead_order.push_back(region);
                    if self.dead_order.len() > MAX_DEAD_REGIONS {
                        if let Some(oldest) = self.dead_order.pop_front() {
                            self.dead.remove(&oldest);
                        }
                    }
                }
            }
            RegionInput::ShardStopped { shard } => self.shard_stopped(&shard),
            RegionInput::EntityPassivated { shard, entity } => {
                if let Some(l) = self.local.get_mut(shard.as_str()) {
                    if l.entities.remove(&entity) && self.config.remember_entities {
                        self.tell_coordinator(Command::EntityPassivated { shard, entity });
                    }
                }
            }
            RegionInput::GracefulShutdown => {
                if self.shutdown == Shutdown::No {
                    self.shutdown = Shutdown::Graceful;
                    self.tell_coordinator(Command::GracefulShutdownReq);
                    self.check_shutdown_done();
                }
            }
            RegionInput::ReportLoads { loads } => {
                if let Err(e) = check_loads(&loads) {
                    return self.refuse_input("reportLoads", e.to_string());
                }
                if !self.config.proxy && self.shutdown != Shutdown::Done {
                    self.tell_coordinator(Command::ReportLoads { loads });
                }
            }
            RegionInput::UpdateOffer { offer } => {
                if let Err(e) = offer.check() {
                    return self.refuse_input("updateOffer", e.to_string());
                }
                if offer != self.config.offer {
                    self.config.offer = offer.clone();
                    if self.registered.is_some() && !self.config.proxy {
                        self.tell_coordinator(Command::UpdateOffer {
                            offer: Box::new(offer),
                        });
                    }
                }
            }
        }
    }

    fn refuse_input(&mut self, input: &str, reason: String) {
        self.out
            .push_back(RegionOutput::Notice(RegionNotice::InputRefused {
                input: input.to_owned(),
                reason,
            }));
    }

    fn tick(&mut self, now_ms: u64) {
        self.now = self.now.max(now_ms);
    }

    // ---- registration -------------------------------------------------------------------

    fn register_now(&mut self) {
        if self.shutdown == Shutdown::Done {
            return;
        }
        self.send_register();
        self.timers
            .set(Timer::Register, self.now + self.register_delay);
    }

    fn send_register(&mut self) {
        let node = self.node.clone();
        self.tell_coordinator(if self.config.proxy {
            Command::RegisterProxy { node }
        } else {
            Command::Register {
                node,
                offer: Box::new(self.config.offer.clone()),
            }
        });
    }

    fn retry(&mut self) {
        self.timers
            .set(Timer::Retry, self.now + self.config.retry_interval_ms);
        if self.shutdown == Shutdown::Done {
            return;
        }
        if self.registered.is_none() {
            self.send_register();
        }
        self.ask_for_buffered(true);
        // A shard paused by BeginHandOff waits for a HandOff that a coordinator may never
        // send (it failed over, or its announcement of a forced move was dropped with a
        // failed write). Whatever it answers now ends the wait: a newer home elsewhere stops
        // the copy, our own id resumes it, a hand-off still running defers the answer.
        // Found by the simulator: a leaving region waited forever.
        let mut paused: Vec<ShardId> = self
            .local
            .iter()
            .filter(|(s, l)| l.status == Status::HandingOff && !self.buffer.has(s.as_str()))
            .map(|(s, _)| s.as_str().into())
            .collect();
        paused.sort();
        for shard in paused {
            self.tell_coordinator(Command::GetShardHome { shard });
        }
        if self.shutdown == Shutdown::Graceful {
            self.tell_coordinator(Command::GracefulShutdownReq);
        }
    }

    /// GetShardHome for every shard with waiting messages and no usable home.
    fn ask_for_buffered(&mut self, again: bool) {
        for shard in self.buffer.shards() {
            if again || !self.asked.contains(&shard) {
                self.asked.insert(shard.clone());
                self.tell_coordinator(Command::GetShardHome { shard });
            }
        }
    }

    // ---- routing ------------------------------------------------------------------------

    fn route_inner(
        &mut self,
        shard: &str,
        msg: Buffered,
    ) -> std::result::Result<(), (RejectReason, Buffered)> {
        if self.shutdown == Shutdown::Done {
            return Err((RejectReason::ShutDown, msg));
        }
        // Nothing overtakes a message already waiting for this shard.
        if !self.buffer.has(shard) {
            if let Some(l) = self.local.get_mut(shard) {
                if l.status == Status::Running {
                    // Only remember-entities needs to know which entities have started:
                    // without it routing searches no set and memory does not grow with every
                    // entity ever seen. Known entities (nearly every message) cost no copy.
                    let started = self.config.remember_entities
                        && !l.entities.contains(&msg.entity)
                        && l.entities.insert(msg.entity.clone());
                    self.deliver_local(shard, msg, started);
                    return Ok(());
                }
            }
            if let Some(home) = self.homes.get(shard) {
                let to = home.clone();
                self.forward(to, shard, msg);
                return Ok(());
            }
        }
        let capacity = self.buffer.capacity();
        self.buffer
            .push(shard, msg)
            .map_err(|m| (RejectReason::BufferFull { capacity }, m))?;
        if !self.asked.contains(shard) {
            self.asked.insert(shard.into());
            self.tell_coordinator(Command::GetShardHome {
                shard: shard.into(),
            });
        }
        Ok(())
    }

    /// `started`: the entity is new to the shard (only ever with remember-entities).
    fn deliver_local(&mut self, shard: &str, msg: Buffered, started: bool) {
        self.counters.delivered += 1;
        if started {
            let entity = msg.entity.clone();
            self.tell_coordinator(Command::EntityStarted {
                shard: shard.into(),
                entity,
            });
        }
        self.out.push_back(RegionOutput::Deliver {
            shard: shard.into(),
            entity: msg.entity,
            payload: msg.payload,
        });
    }

    fn forward(&mut self, to: RegionName, shard: &str, msg: Buffered) {
        self.counters.forwarded += 1;
        self.out.push_back(RegionOutput::Send(Envelope {
            from: Endpoint::Region(self.id.clone()),
            to: Endpoint::Region(to),
            message: Message::Forward(Forward {
                shard: shard.into(),
                entity: msg.entity,
                payload: msg.payload,
            }),
        }));
    }

    /// Re-routes a shard's waiting messages in arrival order; if the home is still unknown
    /// they go straight back into the buffer, in the same order.
    fn flush(&mut self, shard: &str) {
        if !self.buffer.has(shard) {
            return;
        }
        let usable = self.homes.contains_key(shard)
            || self
                .local
                .get(shard)
                .is_some_and(|l| l.status == Status::Running);
        if !usable {
            return;
        }
        for m in self.buffer.take(shard) {
            if let Err((_, m)) = self.route_inner(shard, m) {
                // Cannot happen: the queue's own slots were just freed.
                self.out.push_back(RegionOutput::Undeliverable {
                    shard: shard.into(),
                    entity: m.entity,
                    payload: m.payload,
                    reason: "buffer full while flushing".into(),
                });
            }
        }
        self.check_shutdown_done();
    }

    // ---- directives ---------------------------------------------------------------------

    fn receive(&mut self, env: Envelope) {
        if !matches!(&env.to, Endpoint::Region(to) if *to == self.id) {
            return;
        }
        match (env.from, env.message) {
            (Endpoint::Coordinator, Message::Directive(d)) => self.directive(d),
            (Endpoint::Region(_), Message::Forward(f)) => {
                let shard = f.shard.clone();
                let msg = Buffered {
                    entity: f.entity,
                    payload: f.payload,
                };
                if let Err((reason, m)) = self.route_inner(&shard, msg) {
                    self.out.push_back(RegionOutput::Undeliverable {
                        shard,
                        entity: m.entity,
                        payload: m.payload,
                        reason: format!("{reason:?}"),
                    });
                }
            }
            _ => {}
        }
    }

    fn directive(&mut self, d: Directive) {
        let token = d.token();
        if token < self.seen_token {
            self.refuse(&d, None);
            return;
        }
        self.seen_token = token;
        if let Directive::RegisterAck { token } = d {
            self.registered = Some(token);
            self.timers.cancel(&Timer::Register);
            self.register_delay = (self.config.retry_interval_ms / 8).max(100);
            self.out
                .push_back(RegionOutput::Notice(RegionNotice::Registered { token }));
            self.ask_for_buffered(true);
            return;
        }
        if self.registered.is_some_and(|t| t < token) {
            // A newer coordinator is talking to us: make sure it knows we are alive.
            self.registered = None;
            self.register_now();
        }
        match d {
            Directive::RegisterAck { .. } => unreachable!("handled above"),
            Directive::ShardHome(h) => self.shard_home(h),
            Directive::ShardHomes { homes, .. } => {
                for h in homes {
                    self.shard_home(h);
                }
            }
            Directive::HostShard {
                shard,
                stamp,
                entities,
            } => {
                if !self.admit("HostShard", &shard, stamp) || self.config.proxy {
                    return;
                }
                if self.shutdown != Shutdown::No {
                    self.tell_coordinator(Command::GracefulShutdownReq);
                    return;
                }
                self.host(&shard, stamp, entities, true, false);
            }
            Directive::BeginHandOff { shard, stamp } => {
                if !self.admit("BeginHandOff", &shard, stamp) {
                    return;
                }
                self.homes.remove(shard.as_str());
                self.asked.remove(&shard);
                if let Some(l) = self.local.get_mut(shard.as_str()) {
                    match &mut l.status {
                        Status::Running => l.status = Status::HandingOff,
                        Status::Stopping {
                            restart: Some(r), ..
                        } => r.handing_off = true,
                        _ => {}
                    }
                }
                self.tell_coordinator(Command::BeginHandOffAck { shard, stamp });
            }
            Directive::HandOff { shard, stamp } => {
                if !self.admit("HandOff", &shard, stamp) {
                    return;
                }
                self.homes.remove(shard.as_str());
                match self.local.get_mut(shard.as_str()) {
                    None => self.tell_coordinator(Command::ShardStopped { shard, stamp }),
                    Some(l) => match &mut l.status {
                        Status::Stopping { ack, restart } => {
                            *ack = Some(stamp);
                            *restart = None;
                        }
                        _ => {
                            l.status = Status::Stopping {
                                ack: Some(stamp),
                                restart: None,
                            };
                            self.out.push_back(RegionOutput::StopShard { shard });
                        }
                    },
                }
            }
        }
    }

    fn refuse(&mut self, d: &Directive, shard: Option<&str>) {
        let name = match d {
            Directive::RegisterAck { .. } => "RegisterAck",
            Directive::ShardHome(_) => "ShardHome",
            Directive::ShardHomes { .. } => "ShardHomes",
            Directive::HostShard { .. } => "HostShard",
            Directive::BeginHandOff { .. } => "BeginHandOff",
            Directive::HandOff { .. } => "HandOff",
        };
        self.counters.directives_refused += 1;
        self.out
            .push_back(RegionOutput::Notice(RegionNotice::DirectiveRefused {
                directive: name.into(),
                shard: shard.map(ShardId::from),
                token: d.token(),
                seen: shard.and_then(|s| self.latest.get(s).copied()),
            }));
    }

    /// True (and the stamp recorded) unless the shard has seen a newer one.
    fn admit(&mut self, name: &str, shard: &str, stamp: Stamp) -> bool {
        if let Some(seen) = self.latest.get(shard) {
            if stamp < *seen {
                let seen = *seen;
                self.counters.directives_refused += 1;
                self.out
                    .push_back(RegionOutput::Notice(RegionNotice::DirectiveRefused {
                        directive: name.into(),
                        shard: Some(shard.into()),
                        token: stamp.token,
                        seen: Some(seen),
                    }));
                return false;
            }
        }
        self.latest.insert(shard.into(), stamp);
        true
    }

    fn shard_home(&mut self, h: ShardHome) {
        if !self.admit("ShardHome", &h.shard, h.stamp) {
            return;
        }
        self.asked.remove(&h.shard);
        if *h.region == *self.id {
            if !self.config.proxy && self.shutdown == Shutdown::No {
                self.host(&h.shard, h.stamp, Vec::new(), false, false);
            }
            return;
        }
        if self.dead.contains(&*h.region) {
            // A home the coordinator has not yet replaced, or a late duplicate (found by the
            // simulator: it sent messages back to a stopped region until they bounced out).
            // Keep waiting and ask again.
            if self.buffer.has(&h.shard) {
                self.asked.insert(h.shard.clone());
                self.tell_coordinator(Command::GetShardHome {
                    shard: h.shard.clone(),
                });
            }
        } else {
            let home = self.intern(h.region);
            self.homes.insert(IdKey::new(&h.shard), home);
        }
        if let Some(l) = self.local.get_mut(h.shard.as_str()) {
            match &mut l.status {
                Status::Running | Status::HandingOff => {
                    // Superseded (a forced move): stop our copy now.
                    l.status = Status::Stopping {
                        ack: None,
                        restart: None,
                    };
                    self.out.push_back(RegionOutput::StopShard {
                        shard: h.shard.clone(),
                    });
                }
                Status::Stopping { restart, .. } => *restart = None,
            }
        }
        self.flush(&h.shard);
    }

    /// The one copy of a region id, for `homes` (ids too long to be held inline are then
    /// shared). Ids of regions that died without being reported are dropped once no home
    /// names them, whenever the set has doubled.
    fn intern(&mut self, region: RegionName) -> RegionName {
        if let Some(name) = self.names.get(&region) {
            return name.clone();
        }
        if self.names.len() >= self.names_limit {
            let named: HashSet<&str> = self.homes.values().map(RegionName::as_str).collect();
            self.names.retain(|n| named.contains(n.as_str()));
            self.names_limit = (2 * self.names.len()).max(MIN_NAMES_LIMIT);
        }
        self.names.insert(region.clone());
        region
    }

    /// `handing_off`: a copy that starts does so handing off (see [`Restart`]).
    fn host(
        &mut self,
        shard: &str,
        stamp: Stamp,
        entities: Vec<EntityId>,
        ack: bool,
        handing_off: bool,
    ) {
        self.homes.remove(shard);
        self.asked.remove(shard);
        match self.local.get_mut(shard) {
            None => {
                self.local.insert(
                    IdKey::new(shard),
                    LocalShard {
                        status: if handing_off {
                            Status::HandingOff
                        } else {
                            Status::Running
                        },
                        entities: entities.iter().cloned().collect(),
                    },
                );
                self.out.push_back(RegionOutput::StartShard {
                    shard: shard.into(),
                    entities,
                });
            }
            Some(l) => match &mut l.status {
                Status::Stopping { restart, .. } => {
                    // Answered once the host reports the old entities stopped.
                    *restart = Some(Restart {
                        stamp,
                        entities,
                        handing_off: false,
                    });
                    return;
                }
                status => {
                    *status = Status::Running;
                    let fresh: Vec<EntityId> = entities
                        .into_iter()
                        .filter(|e| l.entities.insert(e.clone()))
                        .collect();
                    if !fresh.is_empty() {
                        self.out.push_back(RegionOutput::StartEntities {
                            shard: shard.into(),
                            entities: fresh,
                        });
                    }
                }
            },
        }
        if ack {
            self.tell_coordinator(Command::ShardStarted {
                shard: shard.into(),
                stamp,
            });
        }
        self.flush(shard);
    }

    fn shard_stopped(&mut self, shard: &str) {
        let Some(l) = self.local.get(shard) else {
            return;
        };
        let Status::Stopping { ack, restart } = l.status.clone() else {
            return;
        };
        self.local.remove(shard);
        if let Some(stamp) = ack {
            self.tell_coordinator(Command::ShardStopped {
                shard: shard.into(),
                stamp,
            });
        }
        if let Some(r) = restart {
            if self.shutdown == Shutdown::No {
                self.host(shard, r.stamp, r.entities, true, r.handing_off);
                return;
            }
        }
        self.flush(shard);
        if self.buffer.has(shard) && !self.asked.contains(shard) {
            self.asked.insert(shard.into());
            self.tell_coordinator(Command::GetShardHome {
                shard: shard.into(),
            });
        }
        self.check_shutdown_done();
    }

    fn check_shutdown_done(&mut self) {
        if self.shutdown == Shutdown::Graceful && self.local.is_empty() && self.buffer.is_empty() {
            self.shutdown = Shutdown::Done;
            self.tell_coordinator(Command::RegionStopped);
            self.timers.clear();
            self.out.push_back(RegionOutput::Stopped);
        }
    }

    fn tell_coordinator(&mut self, cmd: Command) {
        self.out.push_back(RegionOutput::Send(Envelope {
            from: Endpoint::Region(self.id.clone()),
            to: Endpoint::Coordinator,
            message: Message::Command(cmd),
        }));
    }
}

#[cfg(test)]
mod tests;
