//! The shard coordinator as a sans-IO state machine (Pekko `ShardCoordinator`, §2 of the
//! research notes), gated by a fenced lease.
//!
//! The host feeds [`CoordinatorInput`]s with its monotonic `now`, calls
//! [`Coordinator::on_timeout`] at [`Coordinator::next_deadline`], and carries out the
//! [`CoordinatorOutput`]s **in order**: a `Persist` or `SaveSnapshot` must be durable before
//! any later output is carried out, and if it fails the host drops the rest of the queue and
//! reports [`CoordinatorInput::StoreFailed`]. That is how "state changes become visible only
//! after they are stored" holds without the machine waiting.
//!
//! Differences from Pekko, all deliberate:
//! * every directive carries the lease's fencing token and the shard's version ([`Stamp`]);
//!   acks must echo them, so late or duplicated acks of an earlier hand-off are ignored;
//! * a hand-off timeout either keeps the owner (Pekko) or forces a re-allocation that is
//!   announced to every region ([`HandOffTimeoutPolicy`]);
//! * `BeginHandOff` / `HandOff` are re-sent to silent regions within the one hand-off deadline;
//! * a region's shards are re-allocated eagerly when it terminates (Pekko's persistent mode);
//! * on re-registration of a known region, `HostShard` is re-sent for its shards, so a region
//!   that lost them comes back with them instead of silently not hosting.

mod config;
#[cfg(feature = "model-check")]
mod fork;
mod handoff;
pub(crate) mod json;
mod lease;
pub mod loads;
mod state;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::metrics::Metric;
use crate::model::Address;
use crate::model::AllocationState;
use crate::model::Amount;
use crate::model::Timers;
use crate::model::{ClusterView, Member, MemberStatus};
use crate::protocol::{
    check_loads, region_name, Command, Directive, Endpoint, EntityId, Envelope, FencingToken,
    Message, RegionId, RegionName, RegionOffer, ShardHome, ShardId, Stamp,
};
use crate::strategy::{Allocation, AllocationStrategy, Explanation, InProgress};
use crate::{Error, Result};

pub use config::{CoordinatorConfig, HandOffTimeoutPolicy};
use handoff::{HandOff, Step};
pub use json::phase_name;
pub use lease::LeaseGrant;
pub(crate) use lease::LeaseHolder;
pub use state::{
    Event, PersistentState, Record, Snapshot, SnapshotProxy, SnapshotRegion, StoredState,
};

#[derive(Debug, Clone, PartialEq)]
pub enum CoordinatorInput {
    /// A message from a region or proxy.
    Receive(Envelope),
    /// A cluster member joined or changed (status, version, data center).
    // Boxed, as is `StateLoaded`'s state: both are rare and the largest inputs, and inline
    // they would make every input as large, which each step copies.
    Member(Box<Member>),
    /// A member left the cluster: its regions and proxies are treated as terminated (after
    /// the removal margin).
    MemberRemoved {
        address: String,
    },
    Reachability {
        address: String,
        reachable: bool,
    },
    /// A region or proxy stopped or crashed while its node stays in the cluster.
    RegionTerminated {
        region: RegionId,
    },
    LeaseGranted(LeaseGrant),
    LeaseDenied,
    LeaseRenewed {
        token: FencingToken,
        valid_until_ms: u64,
    },
    LeaseRenewFailed {
        token: FencingToken,
    },
    LeaseLost {
        token: FencingToken,
    },
    StateLoaded(Box<StoredState>),
    /// `fenced`: the store has seen a larger token, so another coordinator has taken over.
    StateLoadFailed {
        fenced: bool,
    },
    StoreFailed {
        fenced: bool,
    },
    /// Full-cluster shutdown is coming: no more rebalancing.
    PreparingForShutdown,
    /// Stop coordinating and release the lease.
    Stop,
    /// A planned shutdown of `region` is coming: it takes no new shards, and rebalance rounds
    /// move its shards away within the movement budget. Stored, so a successor keeps
    /// draining. Only strategies that read region profiles (`least-load`) drain; with any
    /// other the input is an error (the region's graceful shutdown hands everything off at
    /// once instead).
    Drain {
        region: RegionId,
    },
    /// Ends a [`CoordinatorInput::Drain`]: the region takes shards again.
    Undrain {
        region: RegionId,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LeaseRequest {
    Acquire,
    Renew { token: FencingToken },
    Release { token: FencingToken },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "CoordinatorOutput")
)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CoordinatorOutput {
    Send(
        #[serde(with = "crate::protocol::nested::envelope")]
        #[cfg_attr(
            feature = "schema",
            schemars(with = "crate::protocol::nested::envelope::In")
        )]
        Envelope,
    ),
    /// Write-ahead: durable before any later output.
    Persist { token: FencingToken, record: Record },
    SaveSnapshot {
        token: FencingToken,
        // Boxed: rare, and inline it would size every output.
        snapshot: Box<Snapshot>,
    },
    Lease(
        #[serde(with = "json::nested::lease_request")]
        #[cfg_attr(feature = "schema", schemars(with = "json::nested::lease_request::In"))]
        LeaseRequest,
    ),
    /// Load the stored state with this token (fencing older writers), then feed
    /// [`CoordinatorInput::StateLoaded`] or [`CoordinatorInput::StateLoadFailed`].
    LoadState { token: FencingToken },
    Notice(
        #[serde(with = "json::nested::notice")]
        #[cfg_attr(feature = "schema", schemars(with = "json::nested::notice::In"))]
        CoordinatorNotice,
    ),
}

/// Things worth logging or asserting on; carrying them out is optional.
/// The variants marked `x-severity: warning` report something refused, failed or lost; the
/// schema carries the mark, so every language's logging bridge logs the same ones as warnings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "CoordinatorNotice")
)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CoordinatorNotice {
    Active {
        token: FencingToken,
    },
    #[cfg_attr(feature = "schema", schemars(extend("x-severity" = "warning")))]
    SteppedDown {
        token: FencingToken,
        reason: String,
    },
    #[cfg_attr(feature = "schema", schemars(extend("x-severity" = "warning")))]
    RegisterRefused {
        region: RegionId,
        reason: String,
    },
    HandOffStarted {
        shard: ShardId,
        from: RegionId,
        rebalance: bool,
    },
    HandOffCompleted {
        shard: ShardId,
        from: RegionId,
    },
    #[cfg_attr(feature = "schema", schemars(extend("x-severity" = "warning")))]
    HandOffTimedOut {
        shard: ShardId,
        from: RegionId,
        policy: HandOffTimeoutPolicy,
    },
    #[cfg_attr(feature = "schema", schemars(extend("x-severity" = "warning")))]
    AllocationFailed {
        shard: ShardId,
        reason: String,
    },
    /// A shard got a home: its first, or a new one after a hand-off. With `decisionEvents`.
    Allocated {
        shard: ShardId,
        region: RegionId,
        /// The region that asked; absent when the coordinator allocated on its own.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        requester: Option<RegionId>,
        // Boxed here and in `RebalanceRound`: inline it would make every output (a
        // `ShardHome` answer too) as large as an explanation, copied on each push and poll.
        explanation: Box<Explanation>,
    },
    /// One rebalance round: the shards it hands off (none when it skipped) and why. With
    /// `decisionEvents`.
    RebalanceRound {
        shards: Vec<ShardId>,
        explanation: Box<Explanation>,
    },
    /// A region's command was malformed and ignored as a whole (`reportLoads`,
    /// `updateOffer`).
    #[cfg_attr(feature = "schema", schemars(extend("x-severity" = "warning")))]
    CommandRefused {
        region: RegionId,
        command: String,
        reason: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(rename = "CoordinatorPhase", rename_all = "camelCase")
)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub enum Phase {
    /// Created, [`Coordinator::start`] not called yet.
    Idle,
    /// Waiting for the lease (requested, or retrying after a refusal).
    AcquiringLease,
    /// Holding the lease, waiting for the stored state.
    Loading,
    /// Holding the lease with the state loaded: allocating and rebalancing.
    Active,
    /// After the stop input: the lease is released and nothing more is done.
    Stopped,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Timer {
    LeaseExpiry,
    LeaseRenew,
    LeaseRetry,
    LoadRetry,
    Rebalance,
    HandOffTimeout(ShardId),
    HandOffResend(ShardId),
    HostShard(ShardId),
    DelayedTermination(RegionId),
}

pub struct Coordinator {
    config: CoordinatorConfig,
    strategy: Box<dyn AllocationStrategy>,
    self_address: Address,
    phase: Phase,
    lease: LeaseHolder,
    /// Also the allocation map the strategies read; rebuilt on every (re)start.
    state: PersistentState,
    // ---- volatile, lost on step-down (Pekko §2.3) ----
    alive: HashSet<RegionId>,
    all_regions_registered: bool,
    handoffs: HashMap<ShardId, HandOff>,
    graceful: BTreeSet<RegionId>,
    terminating: BTreeSet<RegionId>,
    /// HostShard sent, ShardStarted not yet seen: shard -> (region, stamp sent).
    unacked: HashMap<ShardId, (RegionId, Stamp), foldhash::fast::RandomState>,
    preparing_for_shutdown: bool,
    /// Terminations reported while not coordinating; applied on the next restore.
    terminated_while_inactive: BTreeSet<RegionId>,
    timers: Timers<Timer>,
    out: VecDeque<CoordinatorOutput>,
    now: u64,
    counters: Counters,
}

/// Totals since creation, for [`Coordinator::metrics`]; never read by decisions.
#[derive(Debug, Clone, Default)]
struct Counters {
    allocations: u64,
    allocation_failures: u64,
    rebalance_rounds: u64,
    rebalance_moves: u64,
    handoffs_started: u64,
    handoffs_completed: u64,
    handoffs_timed_out: u64,
    /// When each shard without a home was first asked for, until it gets one (volatile).
    asked_at: HashMap<ShardId, u64>,
    allocation_latency: Latency,
    /// When each hand-off in progress started (volatile, as the hand-offs).
    handoff_started_at: HashMap<ShardId, u64>,
    handoff_duration: Latency,
}

/// Durations in host milliseconds, exported as Prometheus-summary-style `.sum`, `.count`
/// and `.max`: a step decides synchronously, so what an operator waits on is the time
/// between a request and its answer, which only host time measures.
#[derive(Debug, Clone, Copy, Default)]
struct Latency {
    sum_ms: u64,
    count: u64,
    max_ms: u64,
}

impl Latency {
    fn record(&mut self, ms: u64) {
        self.sum_ms = self.sum_ms.saturating_add(ms);
        self.count += 1;
        self.max_ms = self.max_ms.max(ms);
    }

    fn metrics(&self, name: &str, what: &str) -> [Metric; 3] {
        [
            Metric::counter(
                &format!("{name}.sum"),
                self.sum_ms,
                &format!("{what}, summed"),
            ),
            Metric::counter(
                &format!("{name}.count"),
                self.count,
                &format!("{what}: how many"),
            ),
            Metric::gauge(
                &format!("{name}.max"),
                self.max_ms,
                &format!("{what}: the longest"),
            ),
        ]
    }
}

impl std::fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinator")
            .field("phase", &self.phase)
            .field("token", &self.lease.token())
            .field("strategy", &self.strategy.name())
            .field("regions", &self.state.allocation().region_count())
            .field("shards", &self.state.shard_count())
            .field("handoffs", &self.handoffs.len())
            .finish()
    }
}

impl Coordinator {
    /// `self_address` is the node the coordinator runs on (Pekko's self address: a region
    /// there may register without being an Up member, and counts as local).
    pub fn new(
        config: CoordinatorConfig,
        strategy: Box<dyn AllocationStrategy>,
        self_address: Address,
    ) -> Result<Coordinator> {
        config.validate()?;
        let remember = config.remember_entities;
        Ok(Coordinator {
            config,
            strategy,
            state: PersistentState::new(remember, ClusterView::new(self_address.clone())),
            self_address,
            phase: Phase::Idle,
            lease: LeaseHolder::default(),
            alive: HashSet::new(),
            all_regions_registered: false,
            handoffs: HashMap::new(),
            graceful: BTreeSet::new(),
            terminating: BTreeSet::new(),
            unacked: HashMap::default(),
            preparing_for_shutdown: false,
            terminated_while_inactive: BTreeSet::new(),
            timers: Timers::default(),
            out: VecDeque::new(),
            now: 0,
            counters: Counters::default(),
        })
    }

    // ---- queries ------------------------------------------------------------------------

    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn is_active(&self) -> bool {
        self.phase == Phase::Active
    }
    pub fn token(&self) -> Option<FencingToken> {
        self.lease.token()
    }
    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }
    /// The persistent state as of the last event.
    pub fn state(&self) -> &PersistentState {
        &self.state
    }
    /// The allocation map the strategy sees (eligibility reflects graceful shutdowns and
    /// terminations in progress).
    pub fn allocation(&self) -> &AllocationState {
        self.state.allocation()
    }
    /// Shards being handed off, sorted.
    pub fn handoffs_in_progress(&self) -> Vec<ShardId> {
        let mut v: Vec<ShardId> = self.handoffs.keys().cloned().collect();
        v.sort();
        v
    }
    pub fn is_alive(&self, region: &str) -> bool {
        self.alive.contains(region)
    }

    /// What a host exports: state now (gauges) and totals since creation (counters). Shards
    /// per region come from the persistent state, so a standby reports what it last loaded.
    pub fn metrics(&self) -> Vec<Metric> {
        let c = &self.counters;
        let mut m = vec![
            Metric::gauge(
                "shardline.coordinator.active",
                u64::from(self.is_active()),
                "1 while this coordinator holds the lease and decides",
            ),
            Metric::gauge(
                "shardline.coordinator.fencing_token",
                self.token().map_or(0, |t| t.0),
                "the fencing token of the lease held (0: none)",
            ),
            Metric::gauge(
                "shardline.coordinator.regions",
                self.state.regions().count() as u64,
                "registered regions",
            ),
            Metric::gauge(
                "shardline.coordinator.handoffs.in_progress",
                self.handoffs.len() as u64,
                "hand-offs started and not yet finished",
            ),
            Metric::counter(
                "shardline.coordinator.handoffs.started",
                c.handoffs_started,
                "hand-offs started",
            ),
            Metric::counter(
                "shardline.coordinator.handoffs.completed",
                c.handoffs_completed,
                "hand-offs whose shard stopped at its old home",
            ),
            Metric::counter(
                "shardline.coordinator.handoffs.timed_out",
                c.handoffs_timed_out,
                "hand-offs that hit handoffTimeoutMs",
            ),
            Metric::counter(
                "shardline.coordinator.allocations",
                c.allocations,
                "shards given a home",
            ),
            Metric::counter(
                "shardline.coordinator.allocation_failures",
                c.allocation_failures,
                "allocations or rebalance rounds the strategy failed",
            ),
            Metric::counter(
                "shardline.coordinator.rebalance.rounds",
                c.rebalance_rounds,
                "rebalance rounds run",
            ),
            Metric::counter(
                "shardline.coordinator.rebalance.moves",
                c.rebalance_moves,
                "hand-offs rebalance rounds started",
            ),
        ];
        m.extend(c.allocation_latency.metrics(
            "shardline.coordinator.allocation.latency_ms",
            "ms from the first GetShardHome for a shard without a home to its allocation",
        ));
        m.extend(c.handoff_duration.metrics(
            "shardline.coordinator.handoffs.duration_ms",
            "ms from BeginHandOff to the hand-off's end (completed or timed out)",
        ));
        m.extend(self.state.regions().map(|(region, _, shards)| {
            Metric::gauge(
                "shardline.coordinator.shards",
                shards.len() as u64,
                "shards allocated to a region",
            )
            .with("shardline.region", region)
        }));
        m
    }

    // ---- driving ------------------------------------------------------------------------

    /// Starts contending for the lease; nothing else happens before it is granted.
    pub fn start(&mut self, now_ms: u64) {
        self.tick(now_ms);
        if self.phase == Phase::Idle {
            self.request_lease();
        }
    }

    // Inline: a host polls after every step, and out of line the output is copied once more
    // on its way to the host.
    #[inline]
    pub fn poll_output(&mut self) -> Option<CoordinatorOutput> {
        crate::model::outbox::poll(&mut self.out)
    }

    /// The output `poll_output` would take next, left in place.
    pub fn peek_output(&self) -> Option<&CoordinatorOutput> {
        self.out.front()
    }

    /// How many outputs wait to be polled.
    pub fn queued_outputs(&self) -> usize {
        self.out.len()
    }

    /// Everything queued so far, in order.
    pub fn drain_outputs(&mut self) -> Vec<CoordinatorOutput> {
        self.out.drain(..).collect()
    }

    pub fn next_deadline(&self) -> Option<u64> {
        self.timers.next_deadline()
    }

    pub fn on_timeout(&mut self, now_ms: u64) -> Result<()> {
        self.tick(now_ms);
        // Before any timer: a host calling late must not have timers due before the lease's
        // deadline act after it (found by the model checker: a rebalance round sent
        // BeginHandOff under an expired lease).
        self.stop_past_lease_deadline();
        while let Some(t) = self.timers.pop_due(self.now) {
            self.fire(t)?;
        }
        Ok(())
    }

    /// Errors are host mistakes (e.g. a lease token that does not grow) or a stored state
    /// that breaks its own preconditions; protocol anomalies are ignored, not errors.
    // Inline: small (the hot path, and a call for everything else), and in the host it reads
    // the input where the host has it instead of from a copy made for the call.
    #[inline]
    pub fn handle(&mut self, now_ms: u64, input: CoordinatorInput) -> Result<()> {
        self.tick(now_ms);
        // The local lease deadline binds even if the host has not called on_timeout yet.
        self.stop_past_lease_deadline();
        match input {
            // The hot path, as `receive` would take it: matched whole so that only the two ids
            // move out of the input, and kept apart from the other inputs, whose handling
            // would otherwise give every step their stack frame and copies.
            CoordinatorInput::Receive(Envelope {
                from: Endpoint::Region(from),
                to: to @ Endpoint::Coordinator,
                message: Message::Command(Command::GetShardHome { shard }),
            }) if self.is_active() => {
                // Dropped here, where it is known to own nothing; left in the input, it would
                // be dropped after the step, reading its variant again.
                drop(to);
                self.get_shard_home_request(shard, from)
            }
            input => self.handle_other(input),
        }
    }

    /// [`Self::handle`] for every input but an active coordinator's `GetShardHome`.
    #[inline(never)]
    fn handle_other(&mut self, input: CoordinatorInput) -> Result<()> {
        match input {
            CoordinatorInput::Receive(env) => self.receive(env),
            CoordinatorInput::Member(m) => {
                self.state.allocation_mut().upsert_member(*m);
                Ok(())
            }
            CoordinatorInput::MemberRemoved { address } => self.member_removed(&address),
            CoordinatorInput::Reachability { address, reachable } => {
                self.state
                    .allocation_mut()
                    .set_reachable(&address, reachable);
                Ok(())
            }
            CoordinatorInput::RegionTerminated { region } => {
                if self.is_active() {
                    self.region_terminated(&region, false)
                } else {
                    self.terminated_while_inactive.insert(region);
                    Ok(())
                }
            }
            CoordinatorInput::LeaseGranted(g) => self.lease_granted(g),
            CoordinatorInput::LeaseDenied => {
                if self.phase == Phase::AcquiringLease {
                    self.timers.set(
                        Timer::LeaseRetry,
                        self.now + self.config.lease_retry_interval_ms,
                    );
                }
                Ok(())
            }
            CoordinatorInput::LeaseRenewed {
                token,
                valid_until_ms,
            } => {
                if self.lease.renewed(token, valid_until_ms) {
                    self.arm_lease_timers();
                }
                Ok(())
            }
            CoordinatorInput::LeaseRenewFailed { token } => {
                // Keep trying until the local deadline; never extend without a renewal.
                if self.lease.token() == Some(token) {
                    self.arm_lease_timers();
                }
                Ok(())
            }
            CoordinatorInput::LeaseLost { token } => {
                if self.lease.token() == Some(token) {
                    self.step_down("the lease was lost", false);
                }
                Ok(())
            }
            CoordinatorInput::StateLoaded(stored) => {
                if self.phase != Phase::Loading {
                    return Ok(());
                }
                self.timers.cancel(&Timer::LoadRetry);
                if let Err(e) = self.restore(*stored) {
                    self.step_down(&format!("the stored state is unusable: {e}"), true);
                    return Err(e);
                }
                Ok(())
            }
            CoordinatorInput::StateLoadFailed { fenced } => {
                if self.phase == Phase::Loading {
                    if fenced {
                        self.step_down("the store has a newer coordinator", true);
                    } else {
                        self.timers.set(
                            Timer::LoadRetry,
                            self.now + self.config.lease_retry_interval_ms,
                        );
                    }
                }
                Ok(())
            }
            CoordinatorInput::StoreFailed { fenced } => {
                if fenced {
                    self.step_down("a state write was fenced by a newer coordinator", true);
                } else if self.is_active() {
                    // What the store holds is unknown: forget everything volatile and reload.
                    self.reset_volatile();
                    self.begin_loading();
                }
                Ok(())
            }
            CoordinatorInput::PreparingForShutdown => {
                self.preparing_for_shutdown = true;
                self.timers.cancel(&Timer::Rebalance);
                Ok(())
            }
            CoordinatorInput::Stop => {
                self.step_down("stopped", true);
                self.timers.clear();
                self.phase = Phase::Stopped;
                Ok(())
            }
            CoordinatorInput::Drain { region } => self.set_draining(&region, true),
            CoordinatorInput::Undrain { region } => self.set_draining(&region, false),
        }
    }

    // Inline, as is the next: both run in every step, which hosts inline (see `handle`).
    #[inline]
    fn tick(&mut self, now_ms: u64) {
        // Time never goes backwards for the machine, whatever the host passes.
        self.now = self.now.max(now_ms);
    }

    #[inline]
    fn stop_past_lease_deadline(&mut self) {
        if self.lease.grant().is_some() && !self.lease.is_valid(self.now) {
            self.step_down("the lease's local deadline passed", false);
        }
    }

    fn fire(&mut self, t: Timer) -> Result<()> {
        match t {
            Timer::LeaseExpiry => self.stop_past_lease_deadline(),
            Timer::LeaseRenew => {
                if let Some(token) = self.lease.token() {
                    self.out
                        .push_back(CoordinatorOutput::Lease(LeaseRequest::Renew { token }));
                    // Re-armed when the answer comes; if none comes, try again.
                    self.arm_lease_timers();
                }
            }
            Timer::LeaseRetry => {
                if self.phase == Phase::AcquiringLease {
                    self.request_lease();
                }
            }
            Timer::LoadRetry => {
                if self.phase == Phase::Loading {
                    self.begin_loading();
                }
            }
            Timer::Rebalance => self.rebalance_tick()?,
            Timer::HandOffTimeout(shard) => self.handoff_timed_out(&shard)?,
            Timer::HandOffResend(shard) => {
                if let Some(h) = self.handoffs.get(&shard) {
                    for (to, d) in h.resend() {
                        self.send(&to, d);
                    }
                    let at = self.now + self.config.handoff_resend_interval_ms;
                    self.timers.set(Timer::HandOffResend(shard), at);
                }
            }
            Timer::HostShard(shard) => {
                if let Some((region, _)) = self.unacked.get(&shard).cloned() {
                    if self.state.home_of(&shard) == Some(region.as_str()) {
                        self.host_shard(&shard, &region);
                    } else {
                        self.unacked.remove(&shard);
                    }
                }
            }
            Timer::DelayedTermination(region) => {
                if self.is_active() {
                    self.terminate_region(&region)?;
                }
            }
        }
        Ok(())
    }

    // ---- lease gating -------------------------------------------------------------------

    fn request_lease(&mut self) {
        self.phase = Phase::AcquiringLease;
        self.out
            .push_back(CoordinatorOutput::Lease(LeaseRequest::Acquire));
        // Also a guard against an answer that never comes.
        self.timers.set(
            Timer::LeaseRetry,
            self.now + self.config.lease_retry_interval_ms,
        );
    }

    fn lease_granted(&mut self, g: LeaseGrant) -> Result<()> {
        if self.phase != Phase::AcquiringLease {
            // Not asked for (any more): give it back so no one waits for a lease nobody uses.
            if self.lease.token() != Some(g.token) {
                self.out
                    .push_back(CoordinatorOutput::Lease(LeaseRequest::Release {
                        token: g.token,
                    }));
            }
            return Ok(());
        }
        if g.valid_until_ms <= self.now {
            self.out
                .push_back(CoordinatorOutput::Lease(LeaseRequest::Release {
                    token: g.token,
                }));
            self.timers.set(
                Timer::LeaseRetry,
                self.now + self.config.lease_retry_interval_ms,
            );
            return Ok(());
        }
        self.lease.granted(g)?;
        self.timers.cancel(&Timer::LeaseRetry);
        self.arm_lease_timers();
        self.begin_loading();
        Ok(())
    }

    fn arm_lease_timers(&mut self) {
        let Some(until) = self.lease.valid_until() else {
            return;
        };
        self.timers.set(Timer::LeaseExpiry, until);
        // Renew with a third of the remaining validity gone, so two more attempts fit.
        let renew = self.now + (until.saturating_sub(self.now) / 3).max(1);
        if renew < until {
            self.timers.set(Timer::LeaseRenew, renew);
        }
    }

    fn begin_loading(&mut self) {
        let Some(token) = self.lease.token() else {
            return;
        };
        self.phase = Phase::Loading;
        self.out.push_back(CoordinatorOutput::LoadState { token });
    }

    /// Stops acting: everything volatile is dropped, the lease is (optionally) released and
    /// re-acquired after the retry interval.
    fn step_down(&mut self, reason: &str, release: bool) {
        if let Some(token) = self.lease.lose(None) {
            self.out
                .push_back(CoordinatorOutput::Notice(CoordinatorNotice::SteppedDown {
                    token,
                    reason: reason.to_owned(),
                }));
            if release {
                self.out
                    .push_back(CoordinatorOutput::Lease(LeaseRequest::Release { token }));
            }
        }
        self.reset_volatile();
        self.timers.clear();
        if matches!(
            self.phase,
            Phase::Loading | Phase::Active | Phase::AcquiringLease
        ) {
            self.phase = Phase::AcquiringLease;
            self.timers.set(
                Timer::LeaseRetry,
                self.now + self.config.lease_retry_interval_ms,
            );
        }
    }

    fn reset_volatile(&mut self) {
        self.counters.asked_at.clear();
        self.counters.handoff_started_at.clear();
        self.alive.clear();
        self.all_regions_registered = false;
        self.handoffs.clear();
        self.graceful.clear();
        self.terminating.clear();
        self.unacked.clear();
        self.timers.retain(|t| {
            matches!(
                t,
                Timer::LeaseExpiry | Timer::LeaseRenew | Timer::LeaseRetry | Timer::LoadRetry
            )
        });
    }

    // ---- restore ------------------------------------------------------------------------

    fn restore(&mut self, stored: StoredState) -> Result<()> {
        let remember = self.config.remember_entities;
        let cluster = self.state.allocation().cluster().clone();
        let mut st = match &stored.snapshot {
            Some(s) => PersistentState::from_snapshot(s, remember, cluster)?,
            None => PersistentState::new(remember, cluster),
        };
        for r in &stored.events {
            if r.seq > st.seq() {
                st.recover(r)?;
            }
        }
        // After a failed write this coordinator reloads under the same token: the volatile
        // version bumps it already sent out must not be undercut, or regions refuse every
        // later directive for those shards (found by the simulator).
        st.raise_versions(&self.state);
        st.rebuild_allocation()?;
        self.state = st;
        self.reset_volatile();
        self.phase = Phase::Active;
        let token = self.lease.token().expect("loading requires the lease");
        self.out
            .push_back(CoordinatorOutput::Notice(CoordinatorNotice::Active {
                token,
            }));

        // Pekko watchStateActors: whatever lived on a node that is gone is terminated now.
        let gone = |node: &str| {
            node != self.self_address.as_str()
                && self.state.allocation().cluster().member(node).is_none()
        };
        let reported = std::mem::take(&mut self.terminated_while_inactive);
        let dead_regions: Vec<RegionId> = self
            .state
            .regions()
            .filter(|(r, n, _)| gone(n) || reported.contains(*r))
            .map(|(r, _, _)| r.clone())
            .collect();
        let dead_proxies: Vec<RegionId> = self
            .state
            .proxies()
            .filter(|(p, n)| gone(n) || reported.contains(*p))
            .map(|(p, _)| p.clone())
            .collect();
        for p in dead_proxies {
            self.persist(Event::ShardRegionProxyTerminated { proxy: p })?;
        }
        for r in dead_regions {
            self.terminate_region(&r)?;
        }
        // Pekko stateInitialized: every standing allocation is (re)announced to its region.
        // Their re-send timers share one deadline and go in as one batch (one by one, they
        // were a quarter of recovering a million shards).
        let hosted: Vec<(ShardId, RegionId)> = self
            .state
            .regions()
            .flat_map(|(r, _, shards)| shards.map(move |s| (ShardId::from(&**s), r.clone())))
            .collect();
        self.unacked.reserve(hosted.len());
        let mut timers = Vec::with_capacity(hosted.len());
        for (s, r) in hosted {
            self.announce(&s, &r);
            timers.push(Timer::HostShard(s));
        }
        self.timers
            .set_all(timers, self.now + self.config.shard_start_timeout_ms);
        self.arm_rebalance();
        Ok(())
    }

    // ---- messages -----------------------------------------------------------------------

    fn receive(&mut self, env: Envelope) -> Result<()> {
        if !self.is_active() || env.to != Endpoint::Coordinator {
            // Not coordinating: regions retry registration and GetShardHome on their own.
            return Ok(());
        }
        // Taken apart field by field rather than as a tuple, which would copy the message once
        // more on the hot path.
        let Endpoint::Region(from) = env.from else {
            return Ok(());
        };
        let Message::Command(cmd) = env.message else {
            return Ok(());
        };
        match cmd {
            Command::Register { node, offer } => self.register(&from, &node, Some(*offer)),
            Command::RegisterProxy { node } => self.register(&from, &node, None),
            Command::ReportLoads { loads } => self.report_loads(&from, loads),
            Command::UpdateOffer { offer } => {
                if !self.state.has_region(&from) {
                    return Ok(());
                }
                if let Err(e) = offer.check() {
                    self.refuse_command(&from, "updateOffer", e.to_string());
                    return Ok(());
                }
                self.set_offer(&from, *offer)
            }
            Command::GetShardHome { shard } => self.get_shard_home_request(shard, from),
            Command::ShardStarted { shard, stamp } => {
                if let Some((r, sent)) = self.unacked.get(&shard) {
                    if **r == *from && stamp >= *sent {
                        self.unacked.remove(&shard);
                        self.timers.cancel(&Timer::HostShard(shard));
                    }
                }
                Ok(())
            }
            Command::BeginHandOffAck { shard, stamp } => {
                let step = match self.handoffs.get_mut(&shard) {
                    Some(h) => h.acked(&from, stamp),
                    None => Step::Nothing,
                };
                self.apply_step(&shard, step)
            }
            Command::ShardStopped { shard, stamp } => {
                let step = match self.handoffs.get_mut(&shard) {
                    Some(h) => h.stopped(&from, stamp),
                    None => Step::Nothing,
                };
                self.apply_step(&shard, step)
            }
            Command::GracefulShutdownReq => self.graceful_shutdown(&from),
            Command::RegionStopped => self.region_terminated(&from, false),
            Command::EntityStarted { shard, entity } => self.entity_started(&from, shard, entity),
            Command::EntityPassivated { shard, entity } => {
                if self.config.remember_entities
                    && self.state.home_of(&shard) == Some(&*from)
                    && self.state.is_remembered(&shard, &entity)
                {
                    self.persist(Event::EntityForgotten { shard, entity })?;
                }
                Ok(())
            }
        }
    }

    fn is_member(&self, node: &str) -> bool {
        node == self.self_address.as_str()
            || self
                .state
                .allocation()
                .cluster()
                .member(node)
                .is_some_and(|m| m.status == MemberStatus::Up)
    }

    /// `offer` is `None` for a proxy.
    fn register(&mut self, region: &str, node: &str, offer: Option<RegionOffer>) -> Result<()> {
        let proxy = offer.is_none();
        let refuse = |s: &mut Self, why: String| {
            s.out.push_back(CoordinatorOutput::Notice(
                CoordinatorNotice::RegisterRefused {
                    region: region.to_owned(),
                    reason: why,
                },
            ));
            Ok(())
        };
        let Ok(address) = Address::parse(node) else {
            return refuse(self, format!("{node:?} is not an address"));
        };
        if !self.is_member(address.as_str()) {
            return refuse(self, format!("{node} is not an Up member"));
        }
        let known_node = if proxy {
            self.state.proxy_node(region)
        } else {
            self.state.region_node(region)
        }
        .map(str::to_owned);
        if let Some(n) = &known_node {
            if n != address.as_str() {
                // #948: never let a registration take over another node's identity.
                return refuse(self, format!("{region} is registered from {n}"));
            }
        }
        let clash = if proxy {
            self.state.has_region(region)
        } else {
            self.state.has_proxy(region)
        };
        if clash {
            return refuse(self, format!("{region} is registered in the other role"));
        }
        if let Some(Err(e)) = offer.as_ref().map(RegionOffer::check) {
            return refuse(self, format!("offer: {e}"));
        }
        let token = self.lease.token().expect("active");
        if proxy {
            self.send_shard_homes(region);
            if known_node.is_none() {
                self.persist(Event::ShardRegionProxyRegistered {
                    proxy: region.to_owned(),
                    node: address.as_str().to_owned(),
                })?;
            }
            self.send(region, Directive::RegisterAck { token });
            return Ok(());
        }
        self.alive.insert(region.to_owned());
        if !self.all_regions_registered && self.alive.len() >= self.config.min_members {
            self.all_regions_registered = true;
        }
        if known_node.is_some() {
            // A region that re-registers may come with a new offer.
            self.set_offer(region, offer.unwrap_or_default())?;
            self.send(region, Directive::RegisterAck { token });
            self.send_shard_homes(region);
            let own: Vec<ShardId> = self
                .state
                .shards_of(region)
                .map(|s| ShardId::from(&**s))
                .collect();
            for s in own {
                if !self.handoffs.contains_key(&s) {
                    self.host_shard(&s, region);
                }
            }
        } else {
            self.graceful.remove(region);
            self.send_shard_homes(region);
            self.persist(Event::ShardRegionRegistered {
                region: region.to_owned(),
                node: address.as_str().to_owned(),
            })?;
            self.set_offer(region, offer.unwrap_or_default())?;
            self.send(region, Directive::RegisterAck { token });
        }
        self.allocate_remembered()
    }

    /// Stores a registered region's offer when it differs from the one known.
    fn set_offer(&mut self, region: &str, offer: RegionOffer) -> Result<()> {
        if self.state.region_offer(region) == Some(&offer) {
            return Ok(());
        }
        self.persist(Event::ShardRegionOfferChanged {
            region: region.to_owned(),
            offer,
        })
    }

    fn refuse_command(&mut self, region: &str, command: &str, reason: String) {
        self.out.push_back(CoordinatorOutput::Notice(
            CoordinatorNotice::CommandRefused {
                region: region.to_owned(),
                command: command.to_owned(),
                reason,
            },
        ));
    }

    /// Smooths a region's report (see [`loads`]) and stores what changed. Only loads of
    /// shards the sender hosts count: a report may cross a hand-off. A malformed report is
    /// refused whole, so what is taken is always a whole report.
    fn report_loads(&mut self, from: &str, reported: BTreeMap<ShardId, Amount>) -> Result<()> {
        if !self.state.has_region(from) {
            return Ok(());
        }
        let checked = check_loads(&reported)
            .and_then(|()| loads::check_dimensions(&reported, self.state.offers().map(|(_, o)| o)));
        if let Err(e) = checked {
            self.refuse_command(from, "reportLoads", e.to_string());
            return Ok(());
        }
        let changed: BTreeMap<ShardId, Amount> = reported
            .into_iter()
            .filter(|(s, _)| self.state.home_of(s) == Some(from))
            .filter_map(|(s, sample)| {
                let old = self.state.loads().get(&s);
                let new = loads::smooth(old, &sample);
                (old != Some(&new)).then_some((s, new))
            })
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        self.persist(Event::ShardLoadsSmoothed { loads: changed })
    }

    fn set_draining(&mut self, region: &str, draining: bool) -> Result<()> {
        let what = if draining { "drain" } else { "undrain" };
        if !self.strategy.drains() {
            return Err(Error::invalid_state(format!(
                "{what}: strategy {} does not drain regions (least-load does); a region's \
                 graceful shutdown hands its shards off with any strategy",
                self.strategy.name()
            )));
        }
        if !self.is_active() {
            return Err(Error::invalid_state(format!(
                "{what}: this coordinator is {}, not active; send it to the active one",
                phase_name(self.phase)
            )));
        }
        if !self.state.has_region(region) {
            return Err(Error::invalid_argument(format!(
                "{what}: region {region:?} is not registered"
            )));
        }
        if self.state.is_draining(region) == draining {
            return Ok(());
        }
        self.persist(Event::ShardRegionDrainingChanged {
            region: region.to_owned(),
            draining,
        })
    }

    /// Pekko batches of `ShardHomes`, skipping shards in hand-off, shards of terminating
    /// regions, and the receiver's own shards (it gets `HostShard` for those).
    fn send_shard_homes(&mut self, to: &str) {
        let token = self.lease.token().expect("active");
        let mut batches: Vec<Vec<ShardHome>> = Vec::new();
        let mut cur = Vec::new();
        'outer: for (region, _, shards) in self.state.regions() {
            if region == to || self.terminating.contains(region) {
                continue;
            }
            let name = region_name(&self.state.shared_id(region).expect("a listed region"));
            for s in shards {
                if self.handoffs.contains_key(&**s) {
                    continue;
                }
                cur.push(ShardHome {
                    shard: ShardId::from(&**s),
                    region: name.clone(),
                    stamp: Stamp {
                        token,
                        version: crate::protocol::ShardVersion(self.state.version(s)),
                    },
                });
                if cur.len() == self.config.shard_homes_batch {
                    batches.push(std::mem::take(&mut cur));
                    if batches.len() == self.config.shard_homes_max_batches {
                        break 'outer;
                    }
                }
            }
        }
        if !cur.is_empty() && batches.len() < self.config.shard_homes_max_batches {
            batches.push(cur);
        }
        for homes in batches {
            self.send(to, Directive::ShardHomes { token, homes });
        }
    }

    /// [`Self::get_shard_home`] for a region's request, with the common case (allocated, not
    /// moving) answered by moving the request's ids into the reply instead of copying them:
    /// this is the coordinator's hot path.
    #[inline(always)]
    fn get_shard_home_request(&mut self, shard: ShardId, from: RegionName) -> Result<()> {
        // Emptiness first, here and for the terminating regions: usually no shard moves and
        // no region terminates, and the lookups are calls.
        let moving = !self.handoffs.is_empty() && self.handoffs.contains_key(&shard);
        if self.all_regions_registered && !moving {
            if let Some((owner, version)) = self.state.home_and_version(&shard) {
                if self.terminating.is_empty() || !self.terminating.contains(&**owner) {
                    let home = ShardHome {
                        region: region_name(owner),
                        stamp: Stamp {
                            token: self.lease.token().unwrap_or_default(),
                            version: crate::protocol::ShardVersion(version),
                        },
                        shard,
                    };
                    self.out.push_back(CoordinatorOutput::Send(Envelope {
                        from: Endpoint::Coordinator,
                        to: Endpoint::Region(from),
                        message: Message::Directive(Directive::ShardHome(home)),
                    }));
                }
                return Ok(());
            }
        }
        self.get_shard_home_unanswered(shard, from)
    }

    /// [`Self::get_shard_home_request`] when the request is not answered at once; apart so
    /// that the answered case stays small enough to inline into [`Self::handle`].
    #[inline(never)]
    fn get_shard_home_unanswered(&mut self, shard: ShardId, from: RegionName) -> Result<()> {
        self.get_shard_home(&shard, Some(&from))
    }

    fn get_shard_home(&mut self, shard: &str, requester: Option<&str>) -> Result<()> {
        let unanswered = self.state.home_of(shard).is_none() || self.handoffs.contains_key(shard);
        if requester.is_some() && unanswered && !self.counters.asked_at.contains_key(shard) {
            self.counters.asked_at.insert(shard.into(), self.now);
        }
        if let Some(h) = self.handoffs.get_mut(shard) {
            if let Some(r) = requester {
                h.defer(r);
            }
            return Ok(());
        }
        if !self.all_regions_registered {
            return Ok(());
        }
        if let Some((owner, _)) = self.state.home_and_version(shard) {
            if !self.terminating.contains(&**owner) {
                if let Some(r) = requester {
                    let owner = region_name(owner);
                    self.send_home(r, shard, owner);
                }
            }
            return Ok(());
        }
        self.allocate(shard, requester)
    }

    fn allocate(&mut self, shard: &str, requester: Option<&str>) -> Result<()> {
        if self.state.allocation().regions().all(|r| !r.is_eligible()) {
            return Ok(());
        }
        let mut explanation = self.config.decision_events.then(Explanation::default);
        let decision = self.strategy.allocate(
            self.state.allocation(),
            requester,
            shard,
            explanation.as_mut(),
        );
        let chosen = match decision {
            Ok(Allocation::Region(r)) => r,
            Ok(Allocation::Pending) => return Ok(()),
            Err(e) => {
                self.allocation_failed(CoordinatorNotice::AllocationFailed {
                    shard: shard.into(),
                    reason: e.to_string(),
                });
                return Ok(());
            }
        };
        // Pekko re-checks the answer: only registered regions not shutting down or terminating.
        if !self
            .state
            .allocation()
            .region(&chosen)
            .is_some_and(|r| r.is_eligible())
        {
            self.allocation_failed(CoordinatorNotice::AllocationFailed {
                shard: shard.into(),
                reason: format!("the strategy chose {chosen}, which cannot take shards"),
            });
            return Ok(());
        }
        let version = self.state.version(shard) + 1;
        self.persist(Event::ShardHomeAllocated {
            shard: shard.into(),
            region: chosen.to_string(),
            version,
        })?;
        self.host_shard(shard, &chosen);
        self.counters.allocations += 1;
        if let Some(asked) = self.counters.asked_at.remove(shard) {
            self.counters
                .allocation_latency
                .record(self.now.saturating_sub(asked));
        }
        if let Some(explanation) = explanation {
            self.out
                .push_back(CoordinatorOutput::Notice(CoordinatorNotice::Allocated {
                    shard: shard.into(),
                    region: chosen.to_string(),
                    requester: requester.map(str::to_owned),
                    explanation: Box::new(explanation),
                }));
        }
        if let Some(r) = requester {
            self.send_home(r, shard, region_name(&chosen));
        }
        Ok(())
    }

    fn allocation_failed(&mut self, notice: CoordinatorNotice) {
        self.counters.allocation_failures += 1;
        self.out.push_back(CoordinatorOutput::Notice(notice));
    }

    fn allocate_remembered(&mut self) -> Result<()> {
        if !self.config.remember_entities {
            return Ok(());
        }
        let pending: Vec<ShardId> = self
            .state
            .unallocated()
            .filter(|s| !self.handoffs.contains_key(*s))
            .cloned()
            .collect();
        for s in pending {
            self.get_shard_home(&s, None)?;
        }
        Ok(())
    }

    fn entity_started(&mut self, from: &str, shard: ShardId, entity: EntityId) -> Result<()> {
        if self.config.remember_entities
            && self.state.home_of(&shard) == Some(from)
            && !self.state.is_remembered(&shard, &entity)
        {
            self.persist(Event::EntityRemembered { shard, entity })?;
        }
        Ok(())
    }

    // ---- rebalance and hand-off ---------------------------------------------------------

    fn arm_rebalance(&mut self) {
        if !self.preparing_for_shutdown && self.config.rebalance_enabled {
            self.timers.set(
                Timer::Rebalance,
                self.now + self.config.rebalance_interval_ms,
            );
        }
    }

    fn rebalance_tick(&mut self) -> Result<()> {
        self.arm_rebalance();
        if !self.is_active()
            || self.preparing_for_shutdown
            || !self.all_regions_registered
            || self.state.allocation().region_count() == 0
        {
            return Ok(());
        }
        let in_progress: InProgress = self
            .handoffs
            .keys()
            .map(|s| Arc::from(s.as_str()))
            .collect();
        let mut explanation = self.config.decision_events.then(Explanation::default);
        let shards = match self.strategy.rebalance(
            self.state.allocation(),
            &in_progress,
            explanation.as_mut(),
        ) {
            Ok(s) => s,
            Err(e) => {
                self.allocation_failed(CoordinatorNotice::AllocationFailed {
                    shard: ShardId::default(),
                    reason: format!("rebalance: {e}"),
                });
                return Ok(());
            }
        };
        self.counters.rebalance_rounds += 1;
        if let Some(explanation) = explanation {
            self.out.push_back(CoordinatorOutput::Notice(
                CoordinatorNotice::RebalanceRound {
                    shards: shards.iter().map(|s| ShardId::from(&**s)).collect(),
                    explanation: Box::new(explanation),
                },
            ));
        }
        for s in shards {
            if self.handoffs.contains_key(&*s) {
                continue;
            }
            if let Some(from) = self.state.home_of(&s).map(str::to_owned) {
                self.counters.rebalance_moves += 1;
                self.start_handoff(&s, &from, true)?;
            }
        }
        Ok(())
    }

    fn start_handoff(&mut self, shard: &str, from: &str, is_rebalance: bool) -> Result<()> {
        let token = self.lease.token().expect("active");
        let stamp = Stamp {
            token,
            version: crate::protocol::ShardVersion(self.state.bump_version(shard)),
        };
        self.unacked.remove(shard);
        self.timers.cancel(&Timer::HostShard(shard.into()));
        let mut targets: Vec<RegionId> = self.state.regions().map(|(r, _, _)| r.clone()).collect();
        targets.extend(self.state.proxies().map(|(p, _)| p.clone()));
        let deadline = self.now + self.config.handoff_timeout_ms;
        let mut h = HandOff::new(
            shard.into(),
            from.to_owned(),
            stamp,
            targets.iter().cloned(),
        );
        for t in &targets {
            self.send(t, h.begin());
        }
        self.counters.handoffs_started += 1;
        self.counters
            .handoff_started_at
            .insert(shard.into(), self.now);
        self.out.push_back(CoordinatorOutput::Notice(
            CoordinatorNotice::HandOffStarted {
                shard: shard.into(),
                from: from.to_owned(),
                rebalance: is_rebalance,
            },
        ));
        self.timers
            .set(Timer::HandOffTimeout(shard.into()), deadline);
        if self.config.handoff_resend_interval_ms > 0 {
            self.timers.set(
                Timer::HandOffResend(shard.into()),
                self.now + self.config.handoff_resend_interval_ms,
            );
        }
        let step = h.start();
        self.handoffs.insert(shard.into(), h);
        self.apply_step(shard, step)
    }

    fn apply_step(&mut self, shard: &str, step: Step) -> Result<()> {
        match step {
            Step::Nothing => Ok(()),
            Step::SendHandOff => {
                let h = &self.handoffs[shard];
                let (to, d) = (h.from.clone(), h.hand_off());
                self.send(&to, d);
                Ok(())
            }
            Step::Completed => self.handoff_completed(shard),
        }
    }

    fn end_handoff(&mut self, shard: &str) -> Option<HandOff> {
        self.timers.cancel(&Timer::HandOffTimeout(shard.into()));
        self.timers.cancel(&Timer::HandOffResend(shard.into()));
        if let Some(started) = self.counters.handoff_started_at.remove(shard) {
            self.counters
                .handoff_duration
                .record(self.now.saturating_sub(started));
        }
        self.handoffs.remove(shard)
    }

    /// Pekko `RebalanceDone(ok = true)`.
    fn handoff_completed(&mut self, shard: &str) -> Result<()> {
        let Some(h) = self.end_handoff(shard) else {
            return Ok(());
        };
        self.counters.handoffs_completed += 1;
        self.out.push_back(CoordinatorOutput::Notice(
            CoordinatorNotice::HandOffCompleted {
                shard: shard.into(),
                from: h.from.clone(),
            },
        ));
        if self.state.home_of(shard).is_some() {
            let version = self.state.version(shard) + 1;
            self.persist(Event::ShardHomeDeallocated {
                shard: shard.into(),
                version,
            })?;
        }
        // Waiting regions first, so the first of them is the requester the strategy sees;
        // then the eager re-allocation for shards nobody is waiting for.
        for r in &h.deferred {
            self.get_shard_home(shard, Some(r))?;
        }
        self.allocate_remembered()?;
        self.get_shard_home(shard, None)
    }

    /// Pekko `RebalanceDone(ok = false)`, or actor-ts's forced move.
    fn handoff_timed_out(&mut self, shard: &str) -> Result<()> {
        let Some(h) = self.end_handoff(shard) else {
            return Ok(());
        };
        let policy = self.config.handoff_timeout_policy;
        self.counters.handoffs_timed_out += 1;
        self.out.push_back(CoordinatorOutput::Notice(
            CoordinatorNotice::HandOffTimedOut {
                shard: shard.into(),
                from: h.from.clone(),
                policy,
            },
        ));
        let still_owner = self.state.home_of(shard) == Some(h.from.as_str());
        // An owner that acknowledged BeginHandOff buffers instead of delivering, so moving
        // the shard cannot run it twice. One that never answered may still be running it:
        // forcing then would give the shard two live copies until the owner hears of the
        // move (found by the simulator), so it keeps the shard, as under KeepOwner, until it
        // answers a later hand-off or its node is removed.
        let owner_quiesced = h.phase == handoff::Phase::Stopping || !h.remaining.contains(&h.from);
        if policy == HandOffTimeoutPolicy::ForceReallocate && owner_quiesced {
            if still_owner {
                let version = self.state.version(shard) + 1;
                self.persist(Event::ShardHomeDeallocated {
                    shard: shard.into(),
                    version,
                })?;
            }
            for r in &h.deferred {
                self.get_shard_home(shard, Some(r))?;
            }
            self.get_shard_home(shard, None)?;
            self.announce_forced_move(shard, &h.from);
            return Ok(());
        }
        if still_owner {
            if self.graceful.remove(&h.from) && !self.terminating.contains(&h.from) {
                self.state.allocation_mut().set_eligible(&h.from, true)?;
            }
            // Regions forgot the home at BeginHandOff and the owner may have stopped the
            // shard: a newer stamp re-establishes both.
            self.state.bump_version(shard);
            self.host_shard(shard, &h.from);
        }
        for r in &h.deferred {
            self.get_shard_home(shard, Some(r))?;
        }
        Ok(())
    }

    /// After a forced move every region and proxy hears the new home with a newer stamp, and
    /// the old owner additionally gets a `HandOff` with that stamp: whichever arrives first
    /// makes it stop its copy, and neither can be undone by an older directive.
    fn announce_forced_move(&mut self, shard: &str, old_owner: &str) {
        let token = self.lease.token().expect("active");
        let stamp = Stamp {
            token,
            version: crate::protocol::ShardVersion(self.state.version(shard)),
        };
        let new_home = self.state.home_of(shard).map(str::to_owned);
        if new_home.as_deref() != Some(old_owner) {
            self.send(
                old_owner,
                Directive::HandOff {
                    shard: shard.into(),
                    stamp,
                },
            );
        }
        if let Some(home) = new_home {
            let shared = self.state.shared_id(&home).expect("a home is registered");
            let mut targets: Vec<RegionId> =
                self.state.regions().map(|(r, _, _)| r.clone()).collect();
            targets.extend(self.state.proxies().map(|(p, _)| p.clone()));
            for t in targets {
                if t != home {
                    self.send(
                        &t,
                        Directive::ShardHome(ShardHome {
                            shard: shard.into(),
                            region: region_name(&shared),
                            stamp,
                        }),
                    );
                }
            }
        }
    }

    // ---- shutdown and termination -------------------------------------------------------

    fn graceful_shutdown(&mut self, region: &str) -> Result<()> {
        if self.graceful.contains(region) || !self.state.has_region(region) {
            return Ok(());
        }
        self.graceful.insert(region.to_owned());
        let shards = self.withdraw(region)?;
        for s in shards {
            if !self.handoffs.contains_key(&s) {
                self.start_handoff(&s, region, false)?;
            }
        }
        Ok(())
    }

    fn member_removed(&mut self, address: &str) -> Result<()> {
        self.state.allocation_mut().remove_member(address);
        if !self.is_active() {
            return Ok(());
        }
        let on_node: Vec<RegionId> = self
            .state
            .regions()
            .filter(|(_, n, _)| *n == address)
            .map(|(r, _, _)| r.clone())
            .chain(
                self.state
                    .proxies()
                    .filter(|(_, n)| *n == address)
                    .map(|(p, _)| p.clone()),
            )
            .collect();
        for r in on_node {
            self.region_terminated(&r, true)?;
        }
        Ok(())
    }

    /// Pekko `Terminated(region)`: with a removal margin, a failed node's regions are only
    /// fenced off (no allocations to them, no homes given out) until the margin has passed.
    fn region_terminated(&mut self, region: &str, node_failed: bool) -> Result<()> {
        if self.state.has_proxy(region) {
            self.persist(Event::ShardRegionProxyTerminated {
                proxy: region.to_owned(),
            })?;
            return self.notify_handoffs_of_termination(region);
        }
        if !self.state.has_region(region) {
            return self.notify_handoffs_of_termination(region);
        }
        if node_failed && self.config.removal_margin_ms > 0 && self.alive.contains(region) {
            if self.terminating.insert(region.to_owned()) {
                self.state.allocation_mut().set_eligible(region, false)?;
                self.timers.set(
                    Timer::DelayedTermination(region.to_owned()),
                    self.now + self.config.removal_margin_ms,
                );
            }
            return Ok(());
        }
        self.terminate_region(region)
    }

    /// Takes the region out of the strategy's candidates and lists its shards, oldest first.
    fn withdraw(&mut self, region: &str) -> Result<Vec<ShardId>> {
        self.state.allocation_mut().set_eligible(region, false)?;
        Ok(self
            .state
            .shards_of(region)
            .map(|s| ShardId::from(&**s))
            .collect())
    }

    fn terminate_region(&mut self, region: &str) -> Result<()> {
        self.timers
            .cancel(&Timer::DelayedTermination(region.to_owned()));
        if !self.state.has_region(region) {
            return Ok(());
        }
        // Ineligible and unallocated before any hand-off hears of it, so nothing completing
        // below can place a shard back on the dead region.
        self.terminating.insert(region.to_owned());
        let shards = self.withdraw(region)?;
        self.persist(Event::ShardRegionTerminated {
            region: region.to_owned(),
        })?;
        self.graceful.remove(region);
        self.terminating.remove(region);
        self.alive.remove(region);
        for s in &shards {
            if self.unacked.get(s).is_some_and(|(r, _)| r == region) {
                self.unacked.remove(s);
                self.timers.cancel(&Timer::HostShard(s.clone()));
            }
        }
        self.notify_handoffs_of_termination(region)?;
        self.allocate_remembered()?;
        for s in shards {
            self.get_shard_home(&s, None)?;
        }
        Ok(())
    }

    fn notify_handoffs_of_termination(&mut self, region: &str) -> Result<()> {
        let mut shards: Vec<ShardId> = self.handoffs.keys().cloned().collect();
        shards.sort();
        for s in shards {
            let step = match self.handoffs.get_mut(&s) {
                Some(h) => h.region_terminated(region),
                None => Step::Nothing,
            };
            self.apply_step(&s, step)?;
        }
        Ok(())
    }

    // ---- effects ------------------------------------------------------------------------

    fn stamp(&self, shard: &str) -> Stamp {
        Stamp {
            token: self.lease.token().unwrap_or_default(),
            version: crate::protocol::ShardVersion(self.state.version(shard)),
        }
    }

    fn send(&mut self, to: &str, d: Directive) {
        self.out.push_back(CoordinatorOutput::Send(Envelope {
            from: Endpoint::Coordinator,
            to: Endpoint::Region(to.into()),
            message: Message::Directive(d),
        }));
    }

    fn send_home(&mut self, to: &str, shard: &str, owner: RegionName) {
        let stamp = self.stamp(shard);
        self.send(
            to,
            Directive::ShardHome(ShardHome {
                shard: shard.into(),
                region: owner,
                stamp,
            }),
        );
    }

    /// Sends `HostShard` and re-sends it every `shard-start-timeout` until `ShardStarted`.
    fn host_shard(&mut self, shard: &str, region: &str) {
        self.announce(shard, region);
        self.timers.set(
            Timer::HostShard(shard.into()),
            self.now + self.config.shard_start_timeout_ms,
        );
    }

    /// [`host_shard`](Self::host_shard) without arming its re-send timer.
    fn announce(&mut self, shard: &str, region: &str) {
        let stamp = self.stamp(shard);
        let entities = self.state.remembered(shard);
        self.send(
            region,
            Directive::HostShard {
                shard: shard.into(),
                stamp,
                entities,
            },
        );
        self.unacked
            .insert(shard.into(), (region.to_owned(), stamp));
    }

    /// Checks the event's precondition, applies it to the state and the allocation map, and
    /// queues the write (and a snapshot when one is due).
    fn persist(&mut self, event: Event) -> Result<()> {
        let token = self
            .lease
            .token()
            .ok_or_else(|| Error::invalid_state("persisting without the lease"))?;
        self.state.apply(&event)?;
        let seq = self.state.seq();
        self.out.push_back(CoordinatorOutput::Persist {
            token,
            record: Record { seq, event },
        });
        if self.config.snapshot_after > 0 && seq.is_multiple_of(self.config.snapshot_after) {
            self.out.push_back(CoordinatorOutput::SaveSnapshot {
                token,
                snapshot: Box::new(self.state.snapshot()),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod serde_shape {
    use super::*;

    #[test]
    fn nested_outputs_keep_both_tags() {
        let out = CoordinatorOutput::Lease(LeaseRequest::Renew {
            token: FencingToken(3),
        });
        let text = serde_json::to_string(&out).unwrap();
        assert_eq!(
            text,
            r#"{"type":"lease","request":{"type":"renew","token":3}}"#
        );
        assert_eq!(
            serde_json::from_str::<CoordinatorOutput>(&text).unwrap(),
            out
        );
        let out = CoordinatorOutput::Notice(CoordinatorNotice::Active {
            token: FencingToken(1),
        });
        let text = serde_json::to_string(&out).unwrap();
        assert_eq!(
            text,
            r#"{"type":"notice","notice":{"type":"active","token":1}}"#
        );
        assert_eq!(
            serde_json::from_str::<CoordinatorOutput>(&text).unwrap(),
            out
        );
    }
}
