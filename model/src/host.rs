//! The host around the machines, as the drivers in `shardline_core::host` carry out their
//! outputs: sends go into the network, lease requests to one lease, writes and loads to one
//! fenced store, in output order, a failed write dropping the rest of the queue. Unlike a
//! driver, everything here is a value, so each state of the model owns its own copy.

use std::collections::BTreeSet;
use std::fmt;
use std::hash::{Hash, Hasher};

use shardline_core::coordinator::{
    Coordinator, CoordinatorInput, CoordinatorNotice, CoordinatorOutput, LeaseGrant, LeaseRequest,
    Record, Snapshot, StoredState,
};
use shardline_core::protocol::{Envelope, FencingToken, Message};
use shardline_core::region::{Region, RegionInput, RegionOutput};

/// A message in flight, keyed by its text so the network is a sorted multiset: two states
/// with the same messages in flight are one state whatever order they were sent in.
#[derive(Clone)]
pub struct Packet {
    pub key: String,
    pub envelope: Envelope,
}

impl Packet {
    pub fn new(envelope: Envelope) -> Packet {
        let key = describe(&envelope);
        Packet { key, envelope }
    }

    /// Entity messages between regions ride the host's transport, which shardline asks to
    /// be reliable (it cannot re-send what it handed over); only control messages are lost
    /// or duplicated in the model.
    pub fn is_entity(&self) -> bool {
        matches!(self.envelope.message, Message::Forward(_))
    }
}

impl Hash for Packet {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.key.hash(h);
    }
}

impl fmt::Debug for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

/// One line per envelope: who, to whom, and the message as its wire JSON.
pub fn describe(e: &Envelope) -> String {
    let message = serde_json::to_string(&e.message).unwrap_or_else(|err| err.to_string());
    format!("{} -> {}: {message}", e.from, e.to)
}

/// Who holds a lease: a coordinator and its incarnation (a restarted process is a new owner).
pub type Owner = (usize, u32);

/// The one coordinator lease, as `InMemoryLease` keeps it, on the model's clock.
#[derive(Clone, Debug, Default, Hash)]
pub struct Lease {
    pub holder: Option<Owner>,
    pub token: u64,
    pub expires: u64,
}

/// The fenced state store, as `InMemoryStore` keeps it.
#[derive(Clone, Debug, Default, Hash)]
pub struct Store {
    pub highest: u64,
    pub snapshot: Option<Snapshot>,
    pub events: Vec<Record>,
}

/// What was done to which entity messages: `accepted` counts messages a region took from a
/// client (numbered from 0), `delivered` the numbers that reached an entity.
#[derive(Clone, Debug, Default, Hash)]
pub struct Ledger {
    pub accepted: u32,
    pub delivered: BTreeSet<u32>,
    pub undeliverable: u32,
}

/// Breaches seen while a step was carried out, which a state alone cannot show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Breach {
    /// A directive sent, or a write the store took, from a coordinator not holding the lease.
    Unfenced,
    /// An entity message delivered twice.
    Duplicate,
    /// A machine returned an error: a host mistake or a stored state it cannot use.
    MachineError,
}

/// Things the model has done at least once, so `sometimes` properties show it is not vacuous.
#[derive(Clone, Debug, Default, Hash)]
pub struct Seen {
    pub handoff_completed: bool,
    pub failover: bool,
}

#[derive(Clone, Debug, Default, Hash)]
pub struct Host {
    pub now: u64,
    pub lease_ttl_ms: u64,
    pub net: Vec<Packet>,
    pub lease: Lease,
    pub store: Store,
    pub ledger: Ledger,
    pub seen: Seen,
    pub breaches: Vec<(Breach, String)>,
}

impl Host {
    pub fn send(&mut self, envelope: Envelope) {
        let p = Packet::new(envelope);
        let at = self.net.partition_point(|q| q.key <= p.key);
        self.net.insert(at, p);
    }

    pub fn breach(&mut self, kind: Breach, detail: String) {
        self.breaches.push((kind, detail));
    }

    /// Whether `owner` holds the lease under `token` now.
    fn holds(&self, owner: Owner, token: FencingToken) -> bool {
        self.lease.holder == Some(owner)
            && self.lease.token == token.0
            && self.now < self.lease.expires
    }

    fn fenced_check(&mut self, owner: Owner, token: FencingToken, what: &str) {
        if !self.holds(owner, token) {
            self.breach(
                Breach::Unfenced,
                format!(
                    "c{} (token {}) {what} at {} ms, but the lease is {:?}",
                    owner.0, token.0, self.now, self.lease
                ),
            );
        }
    }

    fn acquire(&mut self, owner: Owner) -> CoordinatorInput {
        let free = match self.lease.holder {
            None => true,
            Some(h) => self.now >= self.lease.expires || h == owner,
        };
        if !free {
            return CoordinatorInput::LeaseDenied;
        }
        self.lease.token += 1;
        self.lease.holder = Some(owner);
        self.lease.expires = self.now + self.lease_ttl_ms;
        CoordinatorInput::LeaseGranted(LeaseGrant {
            token: FencingToken(self.lease.token),
            valid_until_ms: self.lease.expires,
        })
    }

    fn renew(&mut self, owner: Owner, token: FencingToken) -> CoordinatorInput {
        if self.holds(owner, token) {
            self.lease.expires = self.now + self.lease_ttl_ms;
            CoordinatorInput::LeaseRenewed {
                token,
                valid_until_ms: self.lease.expires,
            }
        } else {
            CoordinatorInput::LeaseLost { token }
        }
    }

    /// `Some(fenced input)` when the store refuses the writer.
    fn write(&mut self, owner: Owner, token: FencingToken, what: &str) -> Option<CoordinatorInput> {
        if token.0 < self.store.highest {
            return Some(CoordinatorInput::StoreFailed { fenced: true });
        }
        self.store.highest = token.0;
        self.fenced_check(owner, token, what);
        None
    }

    /// Carries out a coordinator's outputs in order; returns whether it became active (the
    /// host then tells every region the coordinator changed).
    pub fn carry_out_coordinator(&mut self, c: &mut Coordinator, owner: Owner) -> bool {
        let mut activated = false;
        while let Some(o) = c.poll_output() {
            let feed = match o {
                CoordinatorOutput::Send(env) => {
                    if let Message::Directive(d) = &env.message {
                        self.fenced_check(owner, d.token(), "sent a directive");
                    }
                    self.send(env);
                    None
                }
                CoordinatorOutput::Persist { token, record } => {
                    let refused = self.write(owner, token, "had an event stored");
                    if refused.is_none() {
                        let last = self.store.events.last().map(|r| r.seq);
                        let last = last.or(self.store.snapshot.as_ref().map(|s| s.seq));
                        if record.seq != last.unwrap_or(0) + 1 {
                            self.breach(
                                Breach::MachineError,
                                format!("event {} does not follow event {last:?}", record.seq),
                            );
                        }
                        self.store.events.push(record);
                    }
                    refused
                }
                CoordinatorOutput::SaveSnapshot { token, snapshot } => {
                    let refused = self.write(owner, token, "had a snapshot stored");
                    if refused.is_none() {
                        self.store.events.retain(|r| r.seq > snapshot.seq);
                        self.store.snapshot = Some(*snapshot);
                    }
                    refused
                }
                CoordinatorOutput::LoadState { token } => Some(if token.0 < self.store.highest {
                    CoordinatorInput::StateLoadFailed { fenced: true }
                } else {
                    self.store.highest = token.0;
                    CoordinatorInput::StateLoaded(Box::new(StoredState {
                        snapshot: self.store.snapshot.clone(),
                        events: self.store.events.clone(),
                    }))
                }),
                CoordinatorOutput::Lease(LeaseRequest::Acquire) => Some(self.acquire(owner)),
                CoordinatorOutput::Lease(LeaseRequest::Renew { token }) => {
                    Some(self.renew(owner, token))
                }
                CoordinatorOutput::Lease(LeaseRequest::Release { token }) => {
                    if self.lease.holder == Some(owner) && self.lease.token == token.0 {
                        self.lease.holder = None;
                    }
                    None
                }
                CoordinatorOutput::Notice(n) => {
                    match n {
                        CoordinatorNotice::Active { token } => {
                            activated = true;
                            self.seen.failover |= token.0 >= 2;
                        }
                        CoordinatorNotice::HandOffCompleted { .. } => {
                            self.seen.handoff_completed = true
                        }
                        _ => {}
                    }
                    None
                }
            };
            if let Some(input) = feed {
                if matches!(input, CoordinatorInput::StoreFailed { .. }) {
                    while c.poll_output().is_some() {}
                }
                if let Err(e) = c.handle(self.now, input) {
                    self.breach(Breach::MachineError, format!("c{}: {e}", owner.0));
                }
            }
        }
        activated
    }

    /// Carries out a region's outputs in order. Its host stops a shard's entities at once.
    pub fn carry_out_region(&mut self, r: &mut Region) {
        while let Some(o) = r.poll_output() {
            match o {
                RegionOutput::Send(env) => self.send(env),
                RegionOutput::Deliver { payload, .. } => {
                    let id = message_id(&payload);
                    if !self.ledger.delivered.insert(id) {
                        self.breach(
                            Breach::Duplicate,
                            format!("message {id} delivered again in {}", r.id()),
                        );
                    }
                }
                RegionOutput::StopShard { shard } => {
                    r.handle(self.now, RegionInput::ShardStopped { shard });
                }
                RegionOutput::Undeliverable { .. } => self.ledger.undeliverable += 1,
                RegionOutput::StartShard { .. }
                | RegionOutput::StartEntities { .. }
                | RegionOutput::Stopped
                | RegionOutput::Notice(_) => {}
            }
        }
    }
}

/// Entity messages carry their number as their payload.
pub fn payload(id: u32) -> Vec<u8> {
    id.to_be_bytes().to_vec()
}

fn message_id(payload: &[u8]) -> u32 {
    payload
        .try_into()
        .map(u32::from_be_bytes)
        .unwrap_or(u32::MAX)
}
