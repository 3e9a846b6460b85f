//! Reserving a worker id, as a sans-IO state machine: it says which registry request to make
//! or how long to wait, and is told what came back.
//!
//! List once; try the free ids in policy order, each with one exclusive create; drop an id on
//! conflict and try the next; list again, after a jittered backoff, only when the local
//! candidates are used up. An ambiguous create is resolved by reading the id back: our own
//! claim is adopted, anything else is not success. Claims of ours that a listing turns up
//! (left by a create whose answer was lost) are adopted, or deleted if we already hold one.

use std::collections::VecDeque;
use std::fmt;

use super::policy::{Backoff, Jitter, Policy};
use super::record::{Claim, Fence, Identity, Listing, Slot, Version};
use super::registry::{Created, Failure, Registry, RegistryError, RegistryResult};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReserveConfig {
    /// Worker ids are `0 .. 2^worker_bits`.
    pub worker_bits: u8,
    pub policy: Policy,
    pub backoff: Backoff,
    /// Consecutive registry failures tolerated before giving up.
    pub max_failures: u32,
}

impl Default for ReserveConfig {
    fn default() -> Self {
        ReserveConfig {
            worker_bits: 10,
            policy: Policy::Lowest,
            backoff: Backoff::default(),
            max_failures: 8,
        }
    }
}

impl ReserveConfig {
    pub fn validate(&self) -> crate::Result<()> {
        if !(1..=16).contains(&self.worker_bits) {
            return Err(crate::Error::invalid_argument(format!(
                "worker bits must be in 1..=16, got {}",
                self.worker_bits
            )));
        }
        if let Policy::Spread { window: 0 } = self.policy {
            return Err(crate::Error::invalid_argument(
                "spread window must be at least 1",
            ));
        }
        Ok(())
    }

    pub fn worker_count(&self) -> u32 {
        1 << self.worker_bits
    }
}

/// A worker id we hold, with the fence as written when we took it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub id: u32,
    pub claim: Claim,
    pub fence: Fence,
    pub fence_version: Version,
}

impl Reservation {
    pub fn epoch(&self) -> u64 {
        self.claim.epoch
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReserveError {
    /// Every id in `0..total` has a live claim.
    Exhausted {
        total: u32,
    },
    /// The registry kept failing. `maybe_orphan`: a create whose outcome is unknown may have
    /// left a claim of ours; it ends with our session, or the next reservation adopts it.
    Unavailable {
        failures: u32,
        last: RegistryError,
        maybe_orphan: bool,
    },
    Corrupt(String),
}

impl fmt::Display for ReserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReserveError::Exhausted { total } => {
                write!(f, "all {total} worker ids are reserved by live instances")
            }
            ReserveError::Unavailable { failures, last, .. } => {
                write!(f, "registry unavailable after {failures} failures: {last}")
            }
            ReserveError::Corrupt(m) => write!(f, "registry holds unreadable data: {m}"),
        }
    }
}

impl std::error::Error for ReserveError {}

impl From<ReserveError> for crate::Error {
    fn from(e: ReserveError) -> crate::Error {
        match e {
            ReserveError::Exhausted { .. } => crate::Error::no_candidates(e.to_string()),
            _ => crate::Error::invalid_state(e.to_string()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    List,
    Read {
        id: u32,
    },
    Create {
        id: u32,
        claim: Claim,
        fence: Fence,
        expect: Version,
    },
    Delete {
        id: u32,
        claim: Claim,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Listing(Listing),
    Slot(Slot),
    Created(Created),
    Deleted(bool),
}

impl Request {
    /// Carries the request out on `registry`.
    pub fn perform(&self, registry: &mut dyn Registry) -> RegistryResult<Reply> {
        match self {
            Request::List => registry.list().map(Reply::Listing),
            Request::Read { id } => registry.read(*id).map(Reply::Slot),
            Request::Create {
                id,
                claim,
                fence,
                expect,
            } => registry
                .create_exclusive(*id, claim, fence, *expect)
                .map(Reply::Created),
            Request::Delete { id, claim } => registry.delete(*id, claim).map(Reply::Deleted),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Send(Request),
    /// Call [`Reserver::wake`] once the monotonic clock reads at least this.
    WaitUntil(u64),
    Reserved(Reservation),
    Failed(ReserveError),
}

/// Counters for one reservation, for tests and for the retry measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReserveStats {
    pub lists: u32,
    pub creates: u32,
    /// Creates that lost to another claim.
    pub conflicts: u32,
    /// Requests whose outcome was unknown.
    pub ambiguous: u32,
    pub orphans_adopted: u32,
    pub orphans_deleted: u32,
}

#[derive(Debug, Clone)]
enum Then {
    List,
    Resolve(u32),
}

#[derive(Debug, Clone)]
enum State {
    Idle,
    Listing,
    Creating { id: u32, claim: Claim, fence: Fence },
    Resolving { id: u32 },
    Waiting { until: u64, then: Then },
    CleaningUp { held: Reservation },
    Done,
}

#[derive(Debug, Clone)]
pub struct Reserver {
    config: ReserveConfig,
    me: Identity,
    rng: Jitter,
    state: State,
    candidates: VecDeque<u32>,
    /// The listing the candidates came from, for their fences.
    listing: Listing,
    /// The host's id clock when the reservation started.
    ready_by_ms: u64,
    rounds: u32,
    failures: u32,
    ambiguous_create: bool,
    orphans: Vec<(u32, Claim)>,
    stats: ReserveStats,
}

impl Reserver {
    /// `seed` feeds the backoff jitter and the spread policy; give each contender its own.
    pub fn new(config: ReserveConfig, me: Identity, seed: u64) -> crate::Result<Reserver> {
        config.validate()?;
        Ok(Reserver {
            config,
            me,
            rng: Jitter::new(seed),
            state: State::Idle,
            candidates: VecDeque::new(),
            listing: Listing::default(),
            ready_by_ms: 0,
            rounds: 0,
            failures: 0,
            ambiguous_create: false,
            orphans: Vec::new(),
            stats: ReserveStats::default(),
        })
    }

    pub fn identity(&self) -> &Identity {
        &self.me
    }

    pub fn stats(&self) -> ReserveStats {
        self.stats
    }

    /// Starts (or, after a result, restarts) a reservation. `ready_by_ms`: on the host's id
    /// clock (the one its Snowflake ids are stamped with), the latest fence a holder would
    /// accept without a long wait; a holder passes its clock plus one budget lookahead, the
    /// furthest a holder in step with it ever fences. Free ids fenced at or before it are tried
    /// first, in the policy's order: an id fenced further ahead (its last holder's clock ran
    /// ahead, or ours jumped back) issues nothing until the clock passes the fence, so taking
    /// it would strand the holder. With clocks in step every free id is ready, so the order is
    /// the policy's (lowest free, for ShardingSphere's).
    pub fn start(&mut self, ready_by_ms: u64) -> Step {
        self.ready_by_ms = ready_by_ms;
        self.rounds = 1;
        self.failures = 0;
        self.list()
    }

    /// The host's answer to the last [`Step::Send`].
    pub fn on_reply(&mut self, reply: RegistryResult<Reply>, now_ms: u64) -> Step {
        let state = std::mem::replace(&mut self.state, State::Idle);
        match (state, reply) {
            (State::Listing, Ok(Reply::Listing(l))) => {
                self.failures = 0;
                self.on_listing(l, now_ms)
            }
            (State::Listing, Err(e)) => self.failed(e, Then::List, now_ms),
            (State::Creating { id, claim, fence }, Ok(Reply::Created(c))) => {
                self.failures = 0;
                match c {
                    Created::Won(v) => self.done(Reservation {
                        id,
                        claim,
                        fence,
                        fence_version: v,
                    }),
                    Created::Lost(slot) => self.on_slot(slot, now_ms),
                }
            }
            (State::Creating { id, .. }, Err(e)) => {
                if e.failure == Failure::Corrupt {
                    return self.fail(ReserveError::Corrupt(e.message));
                }
                self.stats.ambiguous += 1;
                self.ambiguous_create = true;
                self.resolve(id)
            }
            (State::Resolving { .. }, Ok(Reply::Slot(slot))) => {
                self.failures = 0;
                self.on_slot(slot, now_ms)
            }
            (State::Resolving { id }, Err(e)) => self.failed(e, Then::Resolve(id), now_ms),
            (State::CleaningUp { held }, reply) => {
                // A claim we failed to delete is bound to our own session and ends with it.
                if matches!(reply, Ok(Reply::Deleted(true))) {
                    self.stats.orphans_deleted += 1;
                }
                self.clean_up(held)
            }
            (state, reply) => {
                self.state = state;
                self.fail(ReserveError::Corrupt(format!(
                    "reply {reply:?} does not answer the pending request"
                )))
            }
        }
    }

    /// The host's wake-up after a [`Step::WaitUntil`].
    pub fn wake(&mut self, now_ms: u64) -> Step {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Waiting { until, then } if now_ms < until => {
                self.state = State::Waiting { until, then };
                Step::WaitUntil(until)
            }
            State::Waiting {
                then: Then::List, ..
            } => self.list(),
            State::Waiting {
                then: Then::Resolve(id),
                ..
            } => self.resolve(id),
            other => {
                self.state = other;
                Step::WaitUntil(now_ms)
            }
        }
    }

    fn list(&mut self) -> Step {
        self.stats.lists += 1;
        self.state = State::Listing;
        Step::Send(Request::List)
    }

    fn resolve(&mut self, id: u32) -> Step {
        self.state = State::Resolving { id };
        Step::Send(Request::Read { id })
    }

    fn on_listing(&mut self, listing: Listing, now_ms: u64) -> Step {
        let mut mine = listing
            .slots
            .iter()
            .filter(|s| s.claim.as_ref().is_some_and(|c| c.is_from(&self.me)));
        if let Some(first) = mine.next() {
            let held = match adopt(first) {
                Ok(r) => r,
                Err(e) => return self.fail(e),
            };
            self.orphans = mine
                .map(|s| (s.id, s.claim.clone().expect("filtered on claim")))
                .collect();
            self.stats.orphans_adopted += 1;
            return self.clean_up(held);
        }
        let total = self.config.worker_count();
        let mut taken = vec![false; total as usize];
        for (id, _) in listing.live().filter(|(id, _)| *id < total) {
            taken[id as usize] = true;
        }
        let free: Vec<u32> = (0..total).filter(|id| !taken[*id as usize]).collect();
        if free.is_empty() {
            return self.fail(ReserveError::Exhausted { total });
        }
        self.listing = listing;
        let (usable, ahead): (VecDeque<u32>, VecDeque<u32>) = self
            .config
            .policy
            .order(free, &mut self.rng)
            .into_iter()
            .partition(|id| self.fence_for(*id).1.hwm_ms <= self.ready_by_ms);
        self.candidates = usable;
        self.candidates.extend(ahead);
        self.try_next(now_ms)
    }

    /// A slot read back after a lost create or an ambiguous one.
    fn on_slot(&mut self, slot: Slot, now_ms: u64) -> Step {
        match &slot.claim {
            Some(c) if c.is_from(&self.me) => match adopt(&slot) {
                Ok(held) => {
                    if self.ambiguous_create {
                        self.stats.orphans_adopted += 1;
                    }
                    self.done(held)
                }
                Err(e) => self.fail(e),
            },
            Some(_) => {
                self.stats.conflicts += 1;
                self.try_next(now_ms)
            }
            None => {
                // Nobody holds it: our create was not applied (or the fence moved under us).
                // Retry the same id against the fence as it is now.
                let id = slot.id;
                self.remember(slot);
                self.create(id)
            }
        }
    }

    fn try_next(&mut self, now_ms: u64) -> Step {
        match self.candidates.pop_front() {
            Some(id) => self.create(id),
            None => {
                let delay = self.config.backoff.delay(self.rounds, &mut self.rng);
                self.rounds += 1;
                self.wait(now_ms + delay, Then::List)
            }
        }
    }

    fn create(&mut self, id: u32) -> Step {
        let (expect, old) = self.fence_for(id);
        let epoch = old.epoch + 1;
        let claim = Claim {
            owner: self.me.owner.clone(),
            incarnation: self.me.incarnation,
            epoch,
        };
        // Whatever the previous holders could stamp ends at their budget: that becomes our
        // floor, and our own budget starts empty until the tenure extends it.
        let fence = Fence {
            epoch,
            floor_ms: old.hwm_ms,
            hwm_ms: old.hwm_ms,
        };
        self.stats.creates += 1;
        self.state = State::Creating {
            id,
            claim: claim.clone(),
            fence,
        };
        Step::Send(Request::Create {
            id,
            claim,
            fence,
            expect,
        })
    }

    fn fence_for(&self, id: u32) -> (Version, Fence) {
        self.listing
            .slot(id)
            .and_then(|s| s.fence)
            .map_or((Version::ABSENT, Fence::default()), |(f, v)| (v, f))
    }

    fn remember(&mut self, slot: Slot) {
        match self.listing.slots.binary_search_by_key(&slot.id, |s| s.id) {
            Ok(i) => self.listing.slots[i] = slot,
            Err(i) => self.listing.slots.insert(i, slot),
        }
    }

    fn clean_up(&mut self, held: Reservation) -> Step {
        match self.orphans.pop() {
            Some((id, claim)) => {
                self.state = State::CleaningUp { held };
                Step::Send(Request::Delete { id, claim })
            }
            None => self.done(held),
        }
    }

    fn failed(&mut self, e: RegistryError, then: Then, now_ms: u64) -> Step {
        if e.failure == Failure::Corrupt {
            return self.fail(ReserveError::Corrupt(e.message));
        }
        self.failures += 1;
        if matches!(e.failure, Failure::Ambiguous) {
            self.stats.ambiguous += 1;
        }
        if self.failures > self.config.max_failures {
            let maybe_orphan = matches!(then, Then::Resolve(_));
            return self.fail(ReserveError::Unavailable {
                failures: self.failures,
                last: e,
                maybe_orphan,
            });
        }
        let delay = self.config.backoff.delay(self.failures, &mut self.rng);
        self.wait(now_ms + delay, then)
    }

    fn wait(&mut self, until: u64, then: Then) -> Step {
        self.state = State::Waiting { until, then };
        Step::WaitUntil(until)
    }

    fn done(&mut self, held: Reservation) -> Step {
        self.state = State::Done;
        self.ambiguous_create = false;
        Step::Reserved(held)
    }

    fn fail(&mut self, e: ReserveError) -> Step {
        self.state = State::Done;
        Step::Failed(e)
    }
}

/// Our own claim found in the registry, as a reservation.
fn adopt(slot: &Slot) -> Result<Reservation, ReserveError> {
    let claim = slot.claim.clone().expect("adopting a claimed slot");
    match slot.fence {
        Some((fence, version)) if fence.epoch == claim.epoch => Ok(Reservation {
            id: slot.id,
            claim,
            fence,
            fence_version: version,
        }),
        _ => Err(ReserveError::Corrupt(format!(
            "worker id {}: claim epoch {} has no matching fence",
            slot.id, claim.epoch
        ))),
    }
}
