//! Against a real etcd on loopback. With `SHARDLINE_ETCD_ENDPOINTS` set, the tests use that
//! server; otherwise each test starts its own `etcd` (from PATH) on free ports with a
//! temporary data directory and stops it when done. Without either, the tests say so and
//! skip. Every test works in its own key namespace, so they can share one server.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use shardline_core::coordinator::{Event, Record, Snapshot};
use shardline_core::host::Lease;
use shardline_core::host::{Store, WriteOutcome};
use shardline_core::protocol::FencingToken;
use shardline_core::workerid::snowflake::{Clock, Layout};
use shardline_core::workerid::{
    reserve, Claim, Created, Fence, HoldError, Identity, Policy, Registry, RegistryError,
    RegistryResult, ReserveConfig, Reserver, Slot, TenureConfig, Version, WorkerIdHolder,
};
use shardline_etcd::{Etcd, EtcdRegistry};

struct Server {
    endpoint: String,
    child: Option<Child>,
    dir: Option<PathBuf>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn on_path(binary: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(binary).is_file()))
}

static STARTED: AtomicU32 = AtomicU32::new(0);

/// The server for one test, or `None` (with a message) when there is no etcd to use.
fn server(test: &str) -> Option<Server> {
    if let Ok(eps) = std::env::var("SHARDLINE_ETCD_ENDPOINTS") {
        return Some(Server {
            endpoint: eps,
            child: None,
            dir: None,
        });
    }
    if !on_path("etcd") {
        eprintln!(
            "SKIPPED {test}: no `etcd` binary on PATH and SHARDLINE_ETCD_ENDPOINTS unset \
             (apt-get install etcd-server, or run scripts/test-etcd.sh)"
        );
        return None;
    }
    let n = STARTED.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("shardline-etcd-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (client, peer) = (free_port(), free_port());
    let client_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let child = Command::new("etcd")
        .arg("--name=test")
        .arg(format!("--data-dir={}", dir.join("data").display()))
        .arg(format!("--listen-client-urls={client_url}"))
        .arg(format!("--advertise-client-urls={client_url}"))
        .arg(format!("--listen-peer-urls={peer_url}"))
        .arg(format!("--initial-advertise-peer-urls={peer_url}"))
        .arg(format!("--initial-cluster=test={peer_url}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start etcd");
    let server = Server {
        endpoint: client_url,
        child: Some(child),
        dir: Some(dir),
    };
    for _ in 0..100 {
        if let Ok(etcd) = Etcd::connect_with_timeout(
            std::slice::from_ref(&server.endpoint),
            "probe",
            Duration::from_millis(500),
        ) {
            if etcd.lease("probe", "probe", 2_000).holder().is_ok() {
                return Some(server);
            }
        }
        thread::sleep(Duration::from_millis(100));
    }
    panic!("etcd did not come up at {}", server.endpoint);
}

static NAMESPACES: AtomicU32 = AtomicU32::new(0);

fn connect(server: &Server, test: &str) -> Etcd {
    let ns = format!(
        "shardline-test/{test}-{}-{}-{}",
        std::process::id(),
        NAMESPACES.fetch_add(1, Ordering::SeqCst),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    reconnect(server, &ns)
}

fn reconnect(server: &Server, ns: &str) -> Etcd {
    let eps: Vec<String> = server.endpoint.split(',').map(str::to_owned).collect();
    Etcd::connect(&eps, ns).expect("connect")
}

/// The real clocks.
struct SystemClock(Instant);
impl Clock for SystemClock {
    fn wall_ms(&mut self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    }
    fn monotonic_ms(&mut self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
    fn sleep_until(&mut self, at: u64) {
        let now = self.monotonic_ms();
        if at > now {
            thread::sleep(Duration::from_millis(at - now));
        }
    }
}

fn me(i: usize) -> Identity {
    Identity {
        owner: format!("node-{i}"),
        incarnation: 77_000 + i as u64,
    }
}

fn cfg(bits: u8, policy: Policy) -> ReserveConfig {
    ReserveConfig {
        worker_bits: bits,
        policy,
        ..ReserveConfig::default()
    }
}

#[test]
fn exclusive_create_lets_exactly_one_contender_win() {
    let Some(server) = server("exclusive_create") else {
        return;
    };
    let etcd = connect(&server, "exclusive");
    let ns = etcd.namespace().to_owned();
    let winners: Vec<bool> = thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (server, ns) = (&server, ns.clone());
                s.spawn(move || {
                    let mut reg = reconnect(server, &ns).registry(10_000);
                    let claim = Claim {
                        owner: format!("n{i}"),
                        incarnation: i,
                        epoch: 1,
                    };
                    let fence = Fence {
                        epoch: 1,
                        ..Fence::default()
                    };
                    let won = matches!(
                        reg.create_exclusive(0, &claim, &fence, Version::ABSENT)
                            .unwrap(),
                        Created::Won(_)
                    );
                    // Keep the session (and so the claim) until everyone has tried.
                    thread::sleep(Duration::from_millis(300));
                    won
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(winners.iter().filter(|w| **w).count(), 1);
}

#[test]
fn sixty_four_concurrent_reservers_get_ids_0_to_63() {
    let Some(server) = server("sixty_four") else {
        return;
    };
    for (name, policy) in [
        ("lowest", Policy::Lowest),
        ("spread", Policy::Spread { window: 64 }),
    ] {
        let etcd = connect(&server, name);
        let ns = etcd.namespace().to_owned();
        let barrier = std::sync::Barrier::new(64);
        let results: Vec<(u32, u32)> = thread::scope(|s| {
            let handles: Vec<_> = (0..64)
                .map(|i| {
                    let (server, ns, barrier) = (&server, ns.clone(), &barrier);
                    s.spawn(move || {
                        let mut reg = reconnect(server, &ns).registry(10_000);
                        let mut r = Reserver::new(cfg(10, policy), me(i), i as u64).unwrap();
                        barrier.wait();
                        let got = reserve(&mut reg, &mut r, 0, &mut SystemClock(Instant::now()))
                            .expect("reserved");
                        // Hold until all are done, so nobody's id is freed and re-taken.
                        barrier.wait();
                        (got.id, r.stats().conflicts)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let ids: BTreeSet<u32> = results.iter().map(|r| r.0).collect();
        let conflicts: u32 = results.iter().map(|r| r.1).sum();
        let max = results.iter().map(|r| r.1).max().unwrap();
        eprintln!(
            "etcd, 64 concurrent reservers, {name}: {conflicts} conflicts, max {max} per reserver"
        );
        assert_eq!(ids.len(), 64, "{name}: distinct ids");
        if policy == Policy::Lowest {
            assert_eq!(ids, (0..64).collect(), "{name}");
        } else {
            assert!(ids.iter().all(|id| *id < 128), "{name}: {ids:?}");
        }
    }
}

/// Applies creates but loses the first answer, as a timed-out request would.
struct LoseFirstCreateReply {
    inner: EtcdRegistry,
    lost: bool,
}

impl Registry for LoseFirstCreateReply {
    fn list(&mut self) -> RegistryResult<shardline_core::workerid::Listing> {
        self.inner.list()
    }
    fn read(&mut self, id: u32) -> RegistryResult<Slot> {
        self.inner.read(id)
    }
    fn create_exclusive(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Created> {
        let r = self.inner.create_exclusive(id, claim, fence, expect);
        if !self.lost {
            self.lost = true;
            r?;
            return Err(RegistryError::ambiguous("reply lost"));
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
        self.inner.compare_and_set(id, claim, fence, expect)
    }
    fn delete(&mut self, id: u32, claim: &Claim) -> RegistryResult<bool> {
        self.inner.delete(id, claim)
    }
    fn keep_alive(&mut self) -> RegistryResult<Option<u64>> {
        self.inner.keep_alive()
    }
}

#[test]
fn a_lost_create_reply_is_adopted() {
    let Some(server) = server("lost_reply") else {
        return;
    };
    let etcd = connect(&server, "lost-reply");
    let mut reg = LoseFirstCreateReply {
        inner: etcd.registry(10_000),
        lost: false,
    };
    let mut r = Reserver::new(cfg(10, Policy::Lowest), me(1), 1).unwrap();
    let got = reserve(&mut reg, &mut r, 0, &mut SystemClock(Instant::now())).unwrap();
    assert_eq!((got.id, got.epoch()), (0, 1));
    assert_eq!(r.stats().creates, 1);
    assert_eq!(r.stats().orphans_adopted, 1);
    let listing = reg.inner.list().unwrap();
    assert_eq!(listing.live().count(), 1);
}

#[test]
fn release_frees_the_id_at_once_and_epochs_grow() {
    let Some(server) = server("release") else {
        return;
    };
    let etcd = connect(&server, "release");
    let mut clock = SystemClock(Instant::now());
    let holder = WorkerIdHolder::acquire(
        etcd.registry(5_000),
        cfg(10, Policy::Lowest),
        TenureConfig::for_ttl(5_000),
        Layout::default(),
        me(1),
        1,
        &mut clock,
    )
    .unwrap();
    assert_eq!((holder.worker_id(), holder.epoch()), (0, 1));
    let _session = holder.release(&mut clock);
    let mut again = WorkerIdHolder::acquire(
        etcd.registry(5_000),
        cfg(10, Policy::Lowest),
        TenureConfig::for_ttl(5_000),
        Layout::default(),
        me(2),
        2,
        &mut clock,
    )
    .unwrap();
    assert_eq!((again.worker_id(), again.epoch()), (0, 2));
    let first = again.next_id(&mut clock).unwrap();
    let second = again.next_id(&mut clock).unwrap();
    assert!(second > first);
}

#[test]
fn after_a_holder_goes_silent_the_next_holder_of_its_id_repeats_no_id() {
    let Some(server) = server("takeover") else {
        return;
    };
    let etcd = connect(&server, "takeover");
    let mut clock = SystemClock(Instant::now());
    let ttl = 2_000;
    let tenure = TenureConfig::for_ttl(ttl);
    let acquire = |i: usize, clock: &mut SystemClock| {
        WorkerIdHolder::acquire(
            etcd.registry(ttl),
            cfg(1, Policy::Lowest),
            tenure,
            Layout::default(),
            me(i),
            i as u64,
            clock,
        )
    };
    let mut a = acquire(1, &mut clock).unwrap();
    let mut bystander = acquire(2, &mut clock).unwrap();
    assert_eq!((a.worker_id(), bystander.worker_id()), (0, 1));
    let mut a_ids = Vec::new();
    for _ in 0..5_000 {
        a_ids.push(a.next_id(&mut clock).unwrap());
    }
    // From here A is cut off from etcd (it does no upkeep at all) but keeps issuing ids for
    // as long as its local deadline allows, straight from its generator.
    let deadline = a.tenure().valid_until_ms().unwrap();
    let budget = a.tenure().budget_ms();
    let mut a_gen = a.generator().clone();
    let mut a_last_at = 0;
    let mut b = None;
    let mut next_try = clock.monotonic_ms();
    let started = clock.monotonic_ms();
    while b.is_none() {
        let now = clock.monotonic_ms();
        assert!(now < started + 20_000, "B never got id 0");
        if a.tenure().is_valid(now) {
            if let Ok(shardline_core::workerid::snowflake::Next::Id(id)) =
                a_gen.next(clock.wall_ms())
            {
                a_ids.push(id);
                a_last_at = now;
            }
        }
        bystander.maintain(&mut clock).unwrap();
        if now >= next_try {
            next_try = now + 100;
            match acquire(3, &mut clock) {
                Ok(h) => b = Some((h, now)),
                Err(HoldError::Reserve(_)) => {}
                Err(e) => panic!("{e}"),
            }
        }
        thread::sleep(Duration::from_millis(1));
    }
    let (mut b, b_at) = b.unwrap();
    assert_eq!((b.worker_id(), b.epoch()), (0, 2));
    assert!(a_last_at < deadline, "A issued nothing past its deadline");
    assert!(deadline <= b_at, "A's deadline came before B's acquisition");
    assert!(
        b.tenure().floor_ms() >= budget,
        "B's floor covers A's budget"
    );
    let mut all: BTreeSet<u64> = a_ids.iter().copied().collect();
    assert_eq!(all.len(), a_ids.len());
    for _ in 0..5_000 {
        assert!(
            all.insert(b.next_id(&mut clock).unwrap()),
            "B repeated one of A's ids"
        );
    }
    // A's registry session is gone server-side; dropping it must not disturb B.
    drop(a);
    assert!(b.next_id(&mut clock).is_ok());
}

fn rec(seq: u64) -> Record {
    Record {
        seq,
        event: Event::ShardRegionRegistered {
            region: format!("r{seq}"),
            node: "pekko://s@h:1".into(),
        },
    }
}

#[test]
fn the_coordinator_lease_fails_over_and_the_stale_coordinators_writes_are_refused() {
    let Some(server) = server("failover") else {
        return;
    };
    let etcd = connect(&server, "failover");
    let mut clock = SystemClock(Instant::now());
    let mut a = etcd.lease("coordinator", "a", 2_000);
    let mut b = etcd.lease("coordinator", "b", 2_000);
    let mut sa = etcd.store_bound_to_lease("shards", "coordinator");
    let mut sb = etcd.store_bound_to_lease("shards", "coordinator");

    let ga = a
        .acquire(clock.monotonic_ms())
        .unwrap()
        .expect("a acquires");
    assert_eq!(b.acquire(clock.monotonic_ms()).unwrap(), None, "held by a");
    assert!(sa.load(ga.token).unwrap().is_some());
    assert_eq!(sa.append(ga.token, &rec(1)).unwrap(), WriteOutcome::Written);
    assert_eq!(sa.append(ga.token, &rec(2)).unwrap(), WriteOutcome::Written);
    assert!(a.renew(ga.token, clock.monotonic_ms()).unwrap().is_some());

    // a goes silent; b takes over once etcd has expired a's lease.
    a.abandon();
    let started = clock.monotonic_ms();
    let gb = loop {
        if let Some(g) = b.acquire(clock.monotonic_ms()).unwrap() {
            break g;
        }
        assert!(
            clock.monotonic_ms() < started + 20_000,
            "b never got the lease"
        );
        thread::sleep(Duration::from_millis(100));
    };
    assert!(gb.token > ga.token, "tokens grow across holders");
    assert_eq!(a.renew(ga.token, clock.monotonic_ms()).unwrap(), None);

    // Before b has even loaded, a's write is refused: its lease no longer carries its token.
    assert!(matches!(
        sa.append(ga.token, &rec(3)).unwrap(),
        WriteOutcome::Fenced { .. }
    ));
    let state = sb.load(gb.token).unwrap().expect("b loads");
    assert_eq!(state.events, vec![rec(1), rec(2)]);
    assert_eq!(sb.append(gb.token, &rec(3)).unwrap(), WriteOutcome::Written);
    assert_eq!(
        sa.append(ga.token, &rec(4)).unwrap(),
        WriteOutcome::Fenced { highest: gb.token }
    );
    assert_eq!(
        sa.load(ga.token).unwrap(),
        None,
        "a cannot even read as coordinator"
    );
    let snap = Snapshot {
        seq: 2,
        ..Snapshot::default()
    };
    assert_eq!(
        sb.save_snapshot(gb.token, &snap).unwrap(),
        WriteOutcome::Written
    );
    let state = sb.load(gb.token).unwrap().unwrap();
    assert_eq!(state.snapshot.map(|s| s.seq), Some(2));
    assert_eq!(state.events, vec![rec(3)]);
}

#[test]
fn lease_tokens_grow_also_when_the_same_owner_reacquires() {
    let Some(server) = server("reacquire") else {
        return;
    };
    let etcd = connect(&server, "reacquire");
    let mut a = etcd.lease("coordinator", "a", 5_000);
    let g1 = a.acquire(0).unwrap().unwrap();
    let g2 = a.acquire(1).unwrap().unwrap();
    assert!(g2.token > g1.token);
    assert_eq!(
        a.renew(g1.token, 2).unwrap(),
        None,
        "the old grant is fenced"
    );
    assert!(a.renew(g2.token, 2).unwrap().is_some());
    assert_eq!(a.holder().unwrap(), Some(("a".into(), g2.token)));
    a.release(g2.token).unwrap();
    assert_eq!(a.holder().unwrap(), None);
    let mut b = etcd.lease("coordinator", "b", 5_000);
    assert!(b.acquire(3).unwrap().unwrap().token > g2.token);
}

#[test]
fn a_token_only_store_fences_writers_below_the_highest_token() {
    let Some(server) = server("token_store") else {
        return;
    };
    let etcd = connect(&server, "token-store");
    let mut s = etcd.store("state");
    assert_eq!(
        s.append(FencingToken(2), &rec(1)).unwrap(),
        WriteOutcome::Written
    );
    assert_eq!(
        s.append(FencingToken(1), &rec(2)).unwrap(),
        WriteOutcome::Fenced {
            highest: FencingToken(2)
        }
    );
    assert_eq!(s.load(FencingToken(3)).unwrap().unwrap().events.len(), 1);
    assert!(matches!(
        s.append(FencingToken(2), &rec(2)).unwrap(),
        WriteOutcome::Fenced { .. }
    ));
    assert!(
        s.append(FencingToken(3), &rec(3)).is_err(),
        "gap in the log"
    );
    assert_eq!(s.load(FencingToken(2)).unwrap(), None);
}
