//! Worker-id reservation in deterministic simulation: an in-memory registry as the server,
//! per-node clocks with offsets and rate error, fault injection around each node's session,
//! and a scheduler driven by seeds. Every scenario is bounded in steps and simulated time.

use std::collections::{BTreeMap, BTreeSet};

use shardline_core::workerid::snowflake::{Layout, Next, Snowflake, SnowflakeError};
use shardline_core::workerid::{
    Claim, Created, Fence, Identity, InMemoryRegistry, InMemorySession, Listing, LossReason,
    Policy, Registry, RegistryError, RegistryResult, Reservation, ReserveConfig, ReserveError,
    Reserver, Slot, Step, Tenure, TenureConfig, TenureStep, Version,
};

const TTL: u64 = 3_000;
/// Wall clocks start here (a date after the Snowflake epoch).
const WALL0: u64 = 1_800_000_000_000;

/// A node's session as the network lets it through.
struct Faulty {
    inner: InMemorySession,
    partitioned: bool,
    /// Creates applied whose answer is lost.
    lose_create_replies: u32,
    /// Creates refused before reaching the server.
    refuse_creates: u32,
    fail_reads: u32,
}

impl Faulty {
    fn new(inner: InMemorySession) -> Faulty {
        Faulty {
            inner,
            partitioned: false,
            lose_create_replies: 0,
            refuse_creates: 0,
            fail_reads: 0,
        }
    }
    fn cut(&self) -> RegistryResult<()> {
        if self.partitioned {
            Err(RegistryError::ambiguous("partitioned"))
        } else {
            Ok(())
        }
    }
}

impl Registry for Faulty {
    fn list(&mut self) -> RegistryResult<Listing> {
        self.cut()?;
        self.inner.list()
    }
    fn read(&mut self, id: u32) -> RegistryResult<Slot> {
        self.cut()?;
        if self.fail_reads > 0 {
            self.fail_reads -= 1;
            return Err(RegistryError::ambiguous("read timed out"));
        }
        self.inner.read(id)
    }
    fn create_exclusive(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Created> {
        self.cut()?;
        if self.refuse_creates > 0 {
            self.refuse_creates -= 1;
            return Err(RegistryError::unavailable("connection refused"));
        }
        let r = self.inner.create_exclusive(id, claim, fence, expect);
        if self.lose_create_replies > 0 {
            self.lose_create_replies -= 1;
            return Err(RegistryError::ambiguous("create reply lost"));
        }
        r
    }
    fn compare_and_set(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Option<Version>> {
        self.cut()?;
        self.inner.compare_and_set(id, claim, fence, expect)
    }
    fn delete(&mut self, id: u32, claim: &Claim) -> RegistryResult<bool> {
        self.cut()?;
        self.inner.delete(id, claim)
    }
    fn keep_alive(&mut self) -> RegistryResult<Option<u64>> {
        self.cut()?;
        self.inner.keep_alive()
    }
}

/// A node's clocks as functions of true time: wall = WALL0 + offset + t, monotonic runs at
/// `rate_ppm` parts per million of true time.
#[derive(Clone, Copy)]
struct Clocks {
    wall_offset_ms: i64,
    rate_ppm: u64,
}

impl Clocks {
    const TRUE: Clocks = Clocks {
        wall_offset_ms: 0,
        rate_ppm: 1_000_000,
    };
    fn mono(&self, t: u64) -> u64 {
        t * self.rate_ppm / 1_000_000
    }
    /// The true time at which the monotonic clock reads `mono`.
    fn true_time_of(&self, mono: u64) -> u64 {
        (mono * 1_000_000).div_ceil(self.rate_ppm)
    }
    fn wall(&self, t: u64) -> u64 {
        (WALL0 as i64 + self.wall_offset_ms + t as i64) as u64
    }
}

fn me(i: usize) -> Identity {
    Identity {
        owner: format!("node-{i}"),
        incarnation: 1_000 + i as u64,
    }
}

fn config(bits: u8, policy: Policy) -> ReserveConfig {
    ReserveConfig {
        worker_bits: bits,
        policy,
        ..ReserveConfig::default()
    }
}

/// A contender in a race: its reserver, its pending step, and when it may next act.
struct Starter {
    reserver: Reserver,
    reg: Faulty,
    step: Step,
    wake_at: u64,
}

/// Runs starters to completion. Each scheduler turn lets one runnable starter make one
/// request; with `lockstep` the turns go round-robin (so every first listing happens before
/// any create), otherwise in a seeded random order. Returns each starter's outcome.
fn race(
    server: &InMemoryRegistry,
    starters: &mut [Starter],
    lockstep: bool,
    seed: u64,
) -> Vec<Result<Reservation, ReserveError>> {
    let n = starters.len();
    let mut rng = seed | 1;
    let mut out: Vec<Option<Result<Reservation, ReserveError>>> = vec![None; n];
    let mut t = 0u64;
    let mut turn = 0usize;
    for _ in 0..1_000_000 {
        let runnable: Vec<usize> = (0..n)
            .filter(|i| out[*i].is_none() && starters[*i].wake_at <= t)
            .collect();
        if runnable.is_empty() {
            let next = (0..n)
                .filter(|i| out[*i].is_none())
                .map(|i| starters[i].wake_at)
                .min();
            match next {
                Some(w) => {
                    t = w;
                    server.advance_to(t);
                    continue;
                }
                None => break,
            }
        }
        let i = if lockstep {
            turn += 1;
            runnable[turn % runnable.len()]
        } else {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            runnable[(rng % runnable.len() as u64) as usize]
        };
        let s = &mut starters[i];
        let step = std::mem::replace(&mut s.step, Step::WaitUntil(0));
        s.step = match step {
            Step::Send(req) => {
                let reply = req.perform(&mut s.reg);
                s.reserver.on_reply(reply, t)
            }
            Step::WaitUntil(_) => s.reserver.wake(t),
            done => done,
        };
        match &s.step {
            Step::WaitUntil(at) => s.wake_at = *at,
            Step::Reserved(r) => out[i] = Some(Ok(r.clone())),
            Step::Failed(e) => out[i] = Some(Err(e.clone())),
            Step::Send(_) => {}
        }
    }
    out.into_iter()
        .map(|o| o.expect("every starter finished within the step bound"))
        .collect()
}

fn starters(server: &InMemoryRegistry, n: usize, cfg: &ReserveConfig) -> Vec<Starter> {
    (0..n)
        .map(|i| {
            let mut reserver = Reserver::new(cfg.clone(), me(i), 0xC0FFEE + i as u64).unwrap();
            let step = reserver.start(WALL0);
            Starter {
                reserver,
                reg: Faulty::new(server.session(TTL)),
                step,
                wake_at: 0,
            }
        })
        .collect()
}

struct RaceReport {
    ids: BTreeSet<u32>,
    max_conflicts: u32,
    total_conflicts: u32,
    max_lists: u32,
}

fn run_race(policy: Policy, lockstep: bool, seed: u64) -> RaceReport {
    let server = InMemoryRegistry::new();
    let mut ss = starters(&server, 64, &config(10, policy));
    let results = race(&server, &mut ss, lockstep, seed);
    let ids: BTreeSet<u32> = results
        .iter()
        .map(|r| r.as_ref().expect("reserved").id)
        .collect();
    assert_eq!(ids.len(), 64, "every starter holds a distinct id");
    let live: BTreeSet<u32> = server.live_claims().into_iter().map(|(id, _)| id).collect();
    assert_eq!(
        live, ids,
        "the server agrees with what the starters believe"
    );
    let stats: Vec<_> = ss.iter().map(|s| s.reserver.stats()).collect();
    RaceReport {
        ids,
        max_conflicts: stats.iter().map(|s| s.conflicts).max().unwrap(),
        total_conflicts: stats.iter().map(|s| s.conflicts).sum(),
        max_lists: stats.iter().map(|s| s.lists).max().unwrap(),
    }
}

#[test]
fn sixty_four_simultaneous_starters_get_ids_0_to_63_with_bounded_retries() {
    let all: BTreeSet<u32> = (0..64).collect();
    let lockstep = run_race(Policy::Lowest, true, 1);
    assert_eq!(lockstep.ids, all);
    // Everyone lists once, then all race for id 0, the 63 losers for id 1, and so on.
    assert_eq!(lockstep.total_conflicts, (0..64).sum::<u32>());
    assert_eq!(lockstep.max_conflicts, 63);
    assert_eq!(lockstep.max_lists, 1, "nobody re-listed");
    for seed in 1..=20 {
        let r = run_race(Policy::Lowest, false, seed * 7919);
        assert_eq!(r.ids, all, "seed {seed}");
        assert!(r.max_conflicts <= 63, "seed {seed}: {}", r.max_conflicts);
        assert_eq!(r.max_lists, 1, "seed {seed}");
    }
}

#[test]
fn spread_policy_cuts_contention_among_simultaneous_starters() {
    let lowest = run_race(Policy::Lowest, true, 1);
    let spread = run_race(Policy::Spread { window: 64 }, true, 1);
    assert_eq!(
        spread.ids,
        (0..64).collect(),
        "spread stays within the 64 lowest ids"
    );
    assert!(
        spread.total_conflicts * 4 < lowest.total_conflicts,
        "spread {} vs lowest {} conflicts",
        spread.total_conflicts,
        lowest.total_conflicts
    );
    for seed in 1..=20 {
        let r = run_race(Policy::Spread { window: 64 }, false, seed * 104_729);
        assert!(r.ids.iter().all(|id| *id < 128), "seed {seed}: {:?}", r.ids);
    }
}

/// Prints the retry measurements quoted in the docs (run with `--nocapture`).
#[test]
fn retry_measurements_for_64_starters() {
    for (name, policy) in [
        ("lowest", Policy::Lowest),
        ("spread(64)", Policy::Spread { window: 64 }),
    ] {
        let lock = run_race(policy, true, 1);
        let (mut total, mut max) = (0, 0);
        for seed in 1..=20 {
            let r = run_race(policy, false, seed * 7919);
            total += r.total_conflicts;
            max = max.max(r.max_conflicts);
        }
        eprintln!(
            "workerid race, 64 starters, {name}: lockstep {} conflicts (max {} per starter); \
             random interleavings: mean {:.1} conflicts per run, max {} per starter",
            lock.total_conflicts,
            lock.max_conflicts,
            total as f64 / 20.0,
            max
        );
    }
}

/// The trivial clock for synchronous drivers: sleeping jumps.
struct JumpClock(u64);
impl shardline_core::workerid::snowflake::Clock for JumpClock {
    fn wall_ms(&mut self) -> u64 {
        WALL0 + self.0
    }
    fn monotonic_ms(&mut self) -> u64 {
        self.0
    }
    fn sleep_until(&mut self, at: u64) {
        self.0 = self.0.max(at);
    }
}

fn reserve_now(
    reg: &mut dyn Registry,
    who: Identity,
    bits: u8,
) -> Result<Reservation, ReserveError> {
    let mut r = Reserver::new(config(bits, Policy::Lowest), who, 9).unwrap();
    shardline_core::workerid::reserve(reg, &mut r, 0, &mut JumpClock(0))
}

#[test]
fn exhaustion_is_typed_and_a_freed_id_goes_to_the_waiting_instance() {
    let server = InMemoryRegistry::new();
    let mut holders: Vec<InMemorySession> = Vec::new();
    for i in 0..1024 {
        let mut s = server.session(TTL);
        if i < 16 {
            let r = reserve_now(&mut s, me(i), 10).unwrap();
            assert_eq!(r.id, i as u32, "lowest free id");
        } else {
            // The rest directly, to keep the setup cheap.
            let claim = Claim {
                owner: me(i).owner,
                incarnation: me(i).incarnation,
                epoch: 1,
            };
            let fence = Fence {
                epoch: 1,
                ..Fence::default()
            };
            let c = s.create_exclusive(i as u32, &claim, &fence, Version::ABSENT);
            assert!(matches!(c, Ok(Created::Won(_))));
        }
        holders.push(s);
    }
    let mut late = Faulty::new(server.session(TTL));
    let mut r = Reserver::new(config(10, Policy::Lowest), me(5000), 1).unwrap();
    let step = r.start(WALL0);
    let Step::Send(req) = step else { panic!() };
    let step = r.on_reply(req.perform(&mut late), 0);
    assert_eq!(step, Step::Failed(ReserveError::Exhausted { total: 1024 }));
    assert_eq!(r.stats().lists, 1);
    assert_eq!(
        r.stats().creates,
        0,
        "no create is attempted when nothing is free"
    );

    holders[517].close();
    let again = shardline_core::workerid::reserve(&mut late, &mut r, 0, &mut JumpClock(0)).unwrap();
    assert_eq!(again.id, 517);
    assert_eq!(
        again.epoch(),
        2,
        "epochs grow on every acquisition of an id"
    );
    assert_eq!(server.live_claims().len(), 1024);
}

#[test]
fn a_lost_create_reply_is_adopted_not_retried_elsewhere() {
    let server = InMemoryRegistry::new();
    let mut reg = Faulty::new(server.session(TTL));
    reg.lose_create_replies = 1;
    reg.fail_reads = 2;
    let mut r = Reserver::new(config(10, Policy::Lowest), me(1), 3).unwrap();
    let got = shardline_core::workerid::reserve(&mut reg, &mut r, 0, &mut JumpClock(0)).unwrap();
    assert_eq!(got.id, 0);
    let stats = r.stats();
    assert_eq!(
        stats.creates, 1,
        "the applied create was found, not repeated"
    );
    assert_eq!(stats.orphans_adopted, 1);
    assert_eq!(server.live_claims(), vec![(0, got.claim.clone())]);

    // A create that never reached the server is retried on the same id.
    let mut other = Faulty::new(server.session(TTL));
    other.refuse_creates = 1;
    let mut r2 = Reserver::new(config(10, Policy::Lowest), me(2), 4).unwrap();
    let got2 =
        shardline_core::workerid::reserve(&mut other, &mut r2, 0, &mut JumpClock(0)).unwrap();
    assert_eq!(got2.id, 1);
    assert_eq!(r2.stats().creates, 2);
    assert_eq!(server.live_claims().len(), 2);
}

#[test]
fn an_unresolved_create_is_never_reported_as_success_and_is_adopted_later() {
    let server = InMemoryRegistry::new();
    let mut reg = Faulty::new(server.session(TTL));
    reg.lose_create_replies = 1;
    reg.fail_reads = 1_000;
    let mut r = Reserver::new(config(10, Policy::Lowest), me(1), 3).unwrap();
    let err =
        shardline_core::workerid::reserve(&mut reg, &mut r, 0, &mut JumpClock(0)).unwrap_err();
    assert!(
        matches!(
            err,
            ReserveError::Unavailable {
                maybe_orphan: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.live_claims().len(), 1, "the create did apply");
    reg.fail_reads = 0;
    let got = shardline_core::workerid::reserve(&mut reg, &mut r, 0, &mut JumpClock(0)).unwrap();
    assert_eq!(got.id, 0, "the orphan found by listing is adopted");
    assert_eq!(server.live_claims().len(), 1);
}

#[test]
fn orphans_in_a_listing_are_adopted_lowest_first_and_the_rest_deleted() {
    let server = InMemoryRegistry::new();
    let mut others = server.session(TTL);
    reserve_now(&mut others, me(7), 10).unwrap();
    let mut reg = server.session(TTL);
    let who = me(1);
    for id in [5, 2] {
        let claim = Claim {
            owner: who.owner.clone(),
            incarnation: who.incarnation,
            epoch: 1,
        };
        let fence = Fence {
            epoch: 1,
            ..Fence::default()
        };
        let c = reg
            .create_exclusive(id, &claim, &fence, Version::ABSENT)
            .unwrap();
        assert!(matches!(c, Created::Won(_)));
    }
    let mut r = Reserver::new(config(10, Policy::Lowest), who, 3).unwrap();
    let got = shardline_core::workerid::reserve(&mut reg, &mut r, 0, &mut JumpClock(0)).unwrap();
    assert_eq!(got.id, 2);
    assert_eq!(r.stats().orphans_deleted, 1);
    let live: Vec<u32> = server.live_claims().into_iter().map(|(id, _)| id).collect();
    assert_eq!(live, vec![0, 2]);
}

// ---- holding, fencing, and Snowflake uniqueness across holders ----

struct SimHolder {
    clocks: Clocks,
    reg: Faulty,
    tenure: Tenure,
    gen: Snowflake,
    ids: Vec<u64>,
    acquired_at: u64,
    last_issue_at: Option<u64>,
    lost_at: Option<u64>,
    paused: bool,
}

impl SimHolder {
    fn try_acquire(
        server: &InMemoryRegistry,
        who: Identity,
        clocks: Clocks,
        t: u64,
        bits: u8,
    ) -> Result<SimHolder, ReserveError> {
        let mut reg = Faulty::new(server.session(TTL));
        let mono = clocks.mono(t);
        let mut r = Reserver::new(config(bits, Policy::Lowest), who, t).unwrap();
        let mut step = r.start(clocks.wall(t) + TenureConfig::for_ttl(TTL).lookahead_ms);
        let res = loop {
            step = match step {
                Step::Send(req) => r.on_reply(req.perform(&mut reg), mono),
                Step::WaitUntil(at) => r.wake(at),
                Step::Reserved(res) => break res,
                Step::Failed(e) => {
                    // A contender that gives up leaves no session behind.
                    reg.inner.close();
                    return Err(e);
                }
            };
        };
        let gen =
            Snowflake::fenced(Layout::default(), res.id.into(), Some(res.fence.floor_ms)).unwrap();
        let tenure = Tenure::new(res, TenureConfig::for_ttl(TTL), mono).unwrap();
        Ok(SimHolder {
            clocks,
            reg,
            tenure,
            gen,
            ids: Vec::new(),
            acquired_at: t,
            last_issue_at: None,
            lost_at: None,
            paused: false,
        })
    }

    /// Stops issuing and hands the id back with what was used of the budget.
    fn release(&mut self, t: u64) {
        self.gen.revoke();
        self.tenure.release(self.gen.last_timestamp_ms());
        loop {
            let (m, w) = (self.clocks.mono(t), self.clocks.wall(t));
            match self.tenure.poll(m, w) {
                TenureStep::Send(req) => self.tenure.perform(&req, &mut self.reg, m),
                _ => break,
            }
        }
    }

    fn upkeep(&mut self, t: u64) {
        if self.paused {
            return;
        }
        let (mono, wall) = (self.clocks.mono(t), self.clocks.wall(t));
        for _ in 0..16 {
            match self.tenure.poll(mono, wall) {
                TenureStep::Send(req) => self.tenure.perform(&req, &mut self.reg, mono),
                TenureStep::Lost(_) | TenureStep::Released => {
                    self.gen.revoke();
                    self.lost_at.get_or_insert(t);
                    return;
                }
                TenureStep::WaitUntil(_) => break,
            }
        }
        self.gen.extend_budget(self.tenure.budget_ms());
    }

    /// Up to `n` ids at true time `t`, through the tenure's validity check.
    fn generate(&mut self, t: u64, n: usize) {
        if self.paused {
            return;
        }
        if !self.tenure.is_valid(self.clocks.mono(t)) {
            self.gen.revoke();
            self.lost_at.get_or_insert(t);
            return;
        }
        self.generate_raw(t, n);
    }

    /// Straight from the generator, as a process that checked validity just before a pause
    /// would.
    fn generate_raw(&mut self, t: u64, n: usize) -> usize {
        let before = self.ids.len();
        for _ in 0..n {
            match self.gen.next(self.clocks.wall(t)) {
                Ok(Next::Id(id)) => {
                    self.ids.push(id);
                    self.last_issue_at = Some(t);
                }
                _ => break,
            }
        }
        self.ids.len() - before
    }

    fn max_ts(&self) -> Option<u64> {
        self.ids
            .iter()
            .map(|id| Layout::default().decompose(*id).unix_ms)
            .max()
    }

    fn min_ts(&self) -> Option<u64> {
        self.ids
            .iter()
            .map(|id| Layout::default().decompose(*id).unix_ms)
            .min()
    }
}

fn assert_unique(holders: &[&SimHolder]) -> usize {
    let mut seen = BTreeSet::new();
    for h in holders {
        for id in &h.ids {
            assert!(
                seen.insert(*id),
                "duplicate id {id} ({:?})",
                Layout::default().decompose(*id)
            );
        }
    }
    seen.len()
}

/// Id 1 is held by a bystander so that the contender can only ever get id 0.
fn bystander(server: &InMemoryRegistry) -> SimHolder {
    let h = SimHolder::try_acquire(server, me(99), Clocks::TRUE, 0, 1).unwrap();
    assert_eq!(h.tenure.id(), 1);
    h
}

struct Takeover {
    a: SimHolder,
    b: SimHolder,
}

/// A holds id 0 and issues ids every millisecond; at `cut` it is partitioned (or, with
/// `pause`, frozen, its wall clock frozen with it as in a suspended VM); B keeps trying to
/// reserve until it gets id 0, then issues ids. Runs until `end`.
fn takeover(a_clocks: Clocks, b_clocks: Clocks, pause: Option<u64>, end: u64) -> Takeover {
    let server = InMemoryRegistry::new();
    let mut a = SimHolder::try_acquire(&server, me(1), a_clocks, 0, 1).unwrap();
    assert_eq!(a.tenure.id(), 0);
    let mut c = bystander(&server);
    let mut b: Option<SimHolder> = None;
    let cut = 1_500;
    for t in 0..end {
        server.advance_to(t);
        if t == cut {
            match pause {
                Some(_) => a.paused = true,
                None => a.reg.partitioned = true,
            }
        }
        if let Some(resume) = pause {
            if t == resume {
                a.paused = false;
                a.clocks.wall_offset_ms -= (resume - cut) as i64;
            }
        }
        a.upkeep(t);
        a.generate(t, 3);
        c.upkeep(t);
        match &mut b {
            None if t >= 2_000 && t % 250 == 0 => {
                b = SimHolder::try_acquire(&server, me(2), b_clocks, t, 1).ok();
            }
            Some(b) => {
                b.upkeep(t);
                b.generate(t, 3);
            }
            None => {}
        }
    }
    Takeover {
        a,
        b: b.expect("B took over id 0"),
    }
}

#[test]
fn a_partitioned_holder_stops_at_its_deadline_and_the_next_holder_repeats_no_id() {
    for a_off in [-5_000i64, 0, 5_000] {
        for b_off in [-5_000i64, 0, 5_000] {
            for a_rate in [995_000u64, 1_000_000, 1_005_000] {
                let run = takeover(
                    Clocks {
                        wall_offset_ms: a_off,
                        rate_ppm: a_rate,
                    },
                    Clocks {
                        wall_offset_ms: b_off,
                        rate_ppm: 1_000_000,
                    },
                    None,
                    20_000,
                );
                let (a, b) = (&run.a, &run.b);
                let ctx = format!("A offset {a_off} rate {a_rate}, B offset {b_off}");
                assert!(a.lost_at.is_some(), "{ctx}: A noticed the loss");
                let a_last = a.last_issue_at.expect("A issued ids");
                let deadline = a.tenure.valid_until_ms().unwrap();
                assert!(
                    a.clocks.mono(a_last) < deadline,
                    "{ctx}: A issued at or after its deadline"
                );
                assert!(
                    a.clocks.true_time_of(deadline) <= b.acquired_at,
                    "{ctx}: A's deadline was not before B's acquisition"
                );
                assert_eq!(b.tenure.reservation().epoch(), 2, "{ctx}");
                assert!(!b.ids.is_empty(), "{ctx}: B issued ids");
                assert!(
                    b.min_ts() > a.max_ts(),
                    "{ctx}: B stamps above everything A used"
                );
                assert_unique(&[a, b]);
            }
        }
    }
}

#[test]
fn a_paused_holder_that_resumes_mid_operation_repeats_no_id() {
    let t = 30_000;
    let mut run = takeover(Clocks::TRUE, Clocks::TRUE, Some(u64::MAX), t);
    let (a, b) = (&mut run.a, &mut run.b);
    assert!(!b.ids.is_empty());
    // Suspended at 1500 with its wall clock, A resumes at `t` for ten times the TTL later.
    a.paused = false;
    a.clocks.wall_offset_ms -= (t - 1_500) as i64;
    // On resume, the tenure knows the deadline has passed...
    assert!(!a.tenure.is_valid(a.clocks.mono(t)));
    assert!(matches!(
        a.tenure.poll(a.clocks.mono(t), a.clocks.wall(t)),
        TenureStep::Lost(LossReason::Expired)
    ));
    // ...but a process that had already checked it goes straight to the generator, with a
    // wall clock that stood still while it was suspended: the budget is all that stops it.
    let before = a.ids.len();
    let mut issued = 0;
    for dt in 0..600 {
        issued += a.generate_raw(t + dt, 5);
    }
    assert!(
        issued > 0,
        "the scenario must let A stamp ids inside its old budget"
    );
    assert!(a.ids.len() > before);
    let budget = a.gen.budget_ms().unwrap();
    assert!(a.max_ts().unwrap() <= budget);
    assert!(
        b.tenure.floor_ms() >= budget,
        "B's floor covers A's whole budget"
    );
    assert!(b.min_ts() > a.max_ts());
    assert_unique(&[a, b]);
}

/// A holds id 0 and issues ids until t = 1000, then crashes (or releases). A restarted
/// process (new incarnation) with its wall clock set back by `rollback_ms` reserves id 0
/// again and issues ids until `end`.
fn restart(rollback_ms: i64, graceful: bool) -> (SimHolder, SimHolder, Option<SnowflakeError>) {
    let server = InMemoryRegistry::new();
    let mut a = SimHolder::try_acquire(&server, me(1), Clocks::TRUE, 0, 1).unwrap();
    let mut c = bystander(&server);
    for t in 0..1_000 {
        server.advance_to(t);
        a.upkeep(t);
        a.generate(t, 2);
        c.upkeep(t);
    }
    if graceful {
        a.release(1_000);
    } else {
        // A crash: the session is neither closed nor kept alive, and ends by expiry.
        let dead = std::mem::replace(&mut a.reg, Faulty::new(server.session(TTL)));
        a.reg.inner.close();
        std::mem::forget(dead);
    }
    let clocks = Clocks {
        wall_offset_ms: -rollback_ms,
        rate_ppm: 1_000_000,
    };
    let who = Identity {
        owner: "node-1".into(),
        incarnation: 2,
    };
    let mut b: Option<SimHolder> = None;
    let mut err = None;
    for t in 1_000..15_000 {
        server.advance_to(t);
        c.upkeep(t);
        match &mut b {
            None if t % 250 == 0 => {
                b = SimHolder::try_acquire(&server, who.clone(), clocks, t, 1).ok()
            }
            Some(b) => {
                b.upkeep(t);
                if b.tenure.is_valid(b.clocks.mono(t)) {
                    match b.gen.next(b.clocks.wall(t)) {
                        Ok(Next::Id(id)) => b.ids.push(id),
                        Ok(Next::WaitUntil(_)) | Err(SnowflakeError::BudgetExhausted { .. }) => {}
                        Err(e) => {
                            err = Some(e);
                        }
                    }
                }
            }
            None => {}
        }
    }
    (a, b.expect("the restarted process got id 0 back"), err)
}

#[test]
fn clock_rollback_at_restart_repeats_no_id() {
    for rollback in [0, 50, 2_000, 10_000] {
        let (a, b, err) = restart(rollback, false);
        assert_eq!(err, None, "rollback {rollback}");
        assert!(
            !b.ids.is_empty(),
            "rollback {rollback}: B waited past the floor and issued"
        );
        assert!(b.min_ts() > a.max_ts(), "rollback {rollback}");
        assert_unique(&[&a, &b]);
    }
    // An hour back is beyond any reasonable wait: refuse rather than stamp.
    let (a, b, err) = restart(3_600_000, false);
    assert!(
        matches!(err, Some(SnowflakeError::BehindFence { .. })),
        "{err:?}"
    );
    assert!(b.ids.is_empty());
    assert!(!a.ids.is_empty());
}

/// The cluster campaign's finding: a holder whose clock ran 60 s ahead used id 0 and let it
/// go; a lowest-free reserver on a true clock took id 0 back and could issue nothing for a
/// minute. Ids fenced behind the reserver's clock now come first; once its clock passes the
/// fence, id 0 is the lowest usable again.
#[test]
fn a_free_id_fenced_ahead_of_the_clock_is_tried_after_the_usable_ones() {
    let server = InMemoryRegistry::new();
    let ahead = Clocks {
        wall_offset_ms: 60_000,
        ..Clocks::TRUE
    };
    let mut a = SimHolder::try_acquire(&server, me(1), ahead, 0, 2).unwrap();
    assert_eq!(a.tenure.id(), 0);
    for t in 0..100 {
        server.advance_to(t);
        a.upkeep(t);
        a.generate(t, 1);
    }
    a.release(100);
    let b = SimHolder::try_acquire(&server, me(2), Clocks::TRUE, 100, 2).unwrap();
    assert_eq!(
        b.tenure.id(),
        1,
        "id 0's fence is a minute ahead of B's clock"
    );
    let later = Clocks {
        wall_offset_ms: 61_000,
        ..Clocks::TRUE
    };
    let c = SimHolder::try_acquire(&server, me(3), later, 100, 2).unwrap();
    assert_eq!(
        c.tenure.id(),
        0,
        "C's clock is past the fence: lowest free again"
    );
    assert_unique(&[&a, &b, &c]);
}

#[test]
fn an_id_released_a_moment_ago_is_the_lowest_free_again() {
    // A fence a holder in step left behind (its budget, at most one lookahead ahead of the
    // clock) does not push its id behind the never-used ones.
    for graceful in [true, false] {
        let server = InMemoryRegistry::new();
        let mut a = SimHolder::try_acquire(&server, me(1), Clocks::TRUE, 0, 2).unwrap();
        let b = SimHolder::try_acquire(&server, me(2), Clocks::TRUE, 0, 2).unwrap();
        assert_eq!((a.tenure.id(), b.tenure.id()), (0, 1));
        for t in 0..100 {
            server.advance_to(t);
            a.upkeep(t);
            a.generate(t, 1);
        }
        let at = if graceful {
            // In the same millisecond as its last id: the fence is the clock itself.
            a.release(99);
            99
        } else {
            a.reg.inner.close();
            server.advance_to(100 + TTL);
            100 + TTL
        };
        let c = SimHolder::try_acquire(&server, me(3), Clocks::TRUE, at, 2).unwrap();
        assert_eq!(c.tenure.id(), 0, "graceful: {graceful}");
        assert_unique(&[&a, &c]);
    }
}

#[test]
fn a_graceful_release_hands_the_id_and_the_unused_budget_back_at_once() {
    let (a, b, err) = restart(0, true);
    assert_eq!(err, None);
    assert_eq!(b.acquired_at, 1_000, "no waiting for the session to expire");
    assert_eq!(
        b.tenure.floor_ms(),
        a.gen.last_timestamp_ms().unwrap(),
        "the floor is what A used, not A's whole budget"
    );
    assert_unique(&[&a, &b]);
    assert!(b.min_ts() > a.max_ts());
    let first_b = Layout::default().decompose(b.ids[0]).unix_ms;
    assert!(first_b <= WALL0 + 1_002, "B did not wait out A's lookahead");
}

#[test]
fn a_holder_whose_session_ends_server_side_is_told_and_stops() {
    let server = InMemoryRegistry::new();
    let mut a = SimHolder::try_acquire(&server, me(1), Clocks::TRUE, 0, 4).unwrap();
    for t in 0..100 {
        server.advance_to(t);
        a.upkeep(t);
        a.generate(t, 1);
    }
    a.reg.inner.close();
    for t in 100..2_000 {
        server.advance_to(t);
        a.upkeep(t);
        a.generate(t, 1);
    }
    let lost = a.lost_at.expect("loss noticed");
    assert!(
        lost <= 100 + TTL / 3 + 1,
        "noticed at the next keep-alive, not at the deadline"
    );
    assert!(a.last_issue_at.unwrap() < lost);
    assert!(matches!(
        a.tenure.poll(a.clocks.mono(2_000), a.clocks.wall(2_000)),
        TenureStep::Lost(LossReason::SessionEnded | LossReason::Fenced)
    ));
}

#[test]
fn holder_drives_reserve_generate_and_release_on_the_in_memory_registry() {
    let server = InMemoryRegistry::new();
    let mut clock = JumpClock(0);
    let mut h = shardline_core::workerid::WorkerIdHolder::acquire(
        server.session(TTL),
        config(10, Policy::Lowest),
        TenureConfig::for_ttl(TTL),
        Layout::default(),
        me(1),
        1,
        &mut clock,
    )
    .unwrap();
    assert_eq!((h.worker_id(), h.epoch()), (0, 1));
    let mut ids = BTreeMap::new();
    for _ in 0..10_000 {
        let id = h.next_id(&mut clock).unwrap();
        assert!(ids.insert(id, ()).is_none());
    }
    let parts = Layout::default().decompose(*ids.keys().last().unwrap());
    assert_eq!(parts.worker, 0);
    assert!(ids.keys().zip(ids.keys().skip(1)).all(|(x, y)| x < y));
    let _ = h.release(&mut clock);
    assert!(server.live_claims().is_empty());
    assert!(server.fence(0).unwrap().hwm_ms <= clock.wall_ms_now());
}

impl JumpClock {
    fn wall_ms_now(&self) -> u64 {
        WALL0 + self.0
    }
}
