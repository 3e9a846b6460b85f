//! The fault campaign: a 3-member etcd cluster and N nodes on this machine, a client sending
//! numbered messages, one fault per run, then the checker.
//!
//! Each run uses its own etcd namespace and history directory; the etcd cluster lives across
//! runs (its own faults restart members). Every child process dies with the campaign
//! (`PR_SET_PDEATHSIG`), so an interrupted campaign leaves nothing running.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use shardline_core::coordinator::HandOffTimeoutPolicy;
use shardline_etcd::Etcd;

use crate::check::{check, pending, Verdict};
use crate::history::History;
use crate::net::Net;
use crate::node::{policy_name, HANDOFF_TIMEOUT_MS};
use crate::wire::{read_frame, write_frame, Frame};

/// Fault kinds in the order runs cycle through them; `slow-stop` only under force-reallocate
/// (or with `--only`).
pub const KINDS: [&str; 12] = [
    "kill",
    "pause",
    "etcd-member-kill",
    "partition",
    "coordinator-kill",
    "clock-skew",
    "etcd-leader-kill",
    "node-partition",
    "coordinator-pause",
    "slow-link",
    "etcd-partition",
    SLOW_STOP,
];

/// Entities stop slower than the hand-off timeout while a node joins and shards move to it.
const SLOW_STOP: &str = "slow-stop";

/// Kinds that need the namespaced network.
const NET_KINDS: [&str; 4] = ["partition", "node-partition", "slow-link", "etcd-partition"];

/// The stated bound: after a fault heals, nothing the client saw accepted waits longer than
/// this for its delivery, and the client never waits longer than this for an answer.
pub const RECOVERY_BOUND_MS: u64 = 15_000;

const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

#[derive(Debug, Clone)]
pub struct CampaignConfig {
    pub runs: u32,
    pub nodes: usize,
    pub shards: u32,
    pub ttl_ms: u64,
    pub work: PathBuf,
    pub keep: bool,
    pub seed: u64,
    /// Traffic before the fault.
    pub warmup: Duration,
    /// Traffic after the fault heals (then a drain of up to 20 s).
    pub settle: Duration,
    pub only: Option<String>,
    /// Run on loopback even when network namespaces are available (no partition faults).
    pub loopback: bool,
    /// Tells this campaign's network from a concurrent one's.
    pub net_id: u8,
    /// The first `python_nodes` nodes run [`PYTHON_NODE`] with this interpreter.
    pub python_nodes: usize,
    pub python: PathBuf,
    /// The nodes' hand-off timeout policy for the first `runs` runs.
    pub policy: HandOffTimeoutPolicy,
    /// Runs after those, under force-reallocate, each a `slow-stop`.
    pub force_runs: u32,
}

/// The Python node (through the binding), a drop-in for `shardline-cluster node`.
pub const PYTHON_NODE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python/node.py");

#[derive(Debug, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub runs: u32,
    pub faults: BTreeMap<String, u64>,
    pub violations: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub duplicate_owners: u64,
    pub duplicate_ids: u64,
    pub max_recovery_ms: u64,
    pub max_latency_ms: u64,
    pub lost_to_crash: u64,
    pub duplicate_workers: u64,
    pub accepted: u64,
    pub delivered: u64,
    pub ids: u64,
    pub node_starts: u64,
    pub fenced_exits: u64,
    /// `coordinator-kill` runs whose coordinator died with a hand-off under way.
    pub mid_hand_off: u64,
    /// How many of the nodes ran the Python node.
    pub python_nodes: usize,
    /// Runs whose nodes used the force-reallocate policy.
    pub force_runs: u32,
    pub hand_off_timeouts: u64,
    /// Timed-out hand-offs that gave the shard to another region (force-reallocate).
    pub forced_moves: u64,
    /// Times a shard was hosted by two regions at once after a forced move (allowed: the
    /// old copy delivered nothing after the move).
    pub hosted_twice: u64,
    pub delivered_after_move: u64,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*: the campaign's choices only need to be spread and repeatable.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn die_with_parent(cmd: &mut Command) {
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: plain kill(2) on a child we started and have not reaped.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn sleep_ms(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

struct EtcdMember {
    name: String,
    ip: String,
    /// The member's namespace, when the campaign built a network.
    ns: Option<String>,
    client: u16,
    peer: u16,
    child: Option<Child>,
}

struct EtcdCluster {
    dir: PathBuf,
    members: Vec<EtcdMember>,
}

/// `program` run inside namespace `ns`, if any.
fn command_in(ns: Option<&str>, program: &Path) -> Command {
    match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).arg(program);
            c
        }
        None => Command::new(program),
    }
}

impl EtcdCluster {
    fn start(dir: &Path, size: usize, net: Option<&Net>) -> Result<EtcdCluster, String> {
        let mut members = Vec::new();
        for i in 0..size {
            members.push(match net {
                Some(net) => EtcdMember {
                    name: format!("etcd{i}"),
                    ip: net.ip(i),
                    ns: Some(net.ns(i)),
                    client: 2379,
                    peer: 2380,
                    child: None,
                },
                None => EtcdMember {
                    name: format!("etcd{i}"),
                    ip: "127.0.0.1".into(),
                    ns: None,
                    client: free_port().map_err(|e| e.to_string())?,
                    peer: free_port().map_err(|e| e.to_string())?,
                    child: None,
                },
            });
        }
        let mut c = EtcdCluster {
            dir: dir.to_owned(),
            members,
        };
        for i in 0..size {
            c.spawn(i)?;
        }
        c.wait_healthy(Duration::from_secs(30))?;
        Ok(c)
    }

    fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| format!("http://{}:{}", m.ip, m.client))
            .collect()
    }

    fn spawn(&mut self, i: usize) -> Result<(), String> {
        let initial: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("{}=http://{}:{}", m.name, m.ip, m.peer))
            .collect();
        let m = &self.members[i];
        let client = format!("http://{}:{}", m.ip, m.client);
        let peer = format!("http://{}:{}", m.ip, m.peer);
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("{}.log", m.name)))
            .map_err(|e| e.to_string())?;
        let mut cmd = command_in(m.ns.as_deref(), Path::new("etcd"));
        cmd.args(["--name", &m.name])
            .arg("--data-dir")
            .arg(self.dir.join(&m.name))
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer])
            .args(["--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &initial.join(",")])
            .args(["--initial-cluster-state", "new"])
            .args(["--heartbeat-interval", "100", "--election-timeout", "1000"])
            .stdout(Stdio::null())
            .stderr(log);
        die_with_parent(&mut cmd);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start etcd (is it installed?): {e}"))?;
        self.members[i].child = Some(child);
        Ok(())
    }

    fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.members[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Which member leads, asking each live one.
    fn leader(&self) -> Option<usize> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        for (i, m) in self.members.iter().enumerate() {
            if m.child.is_none() {
                continue;
            }
            let ep = vec![format!("http://{}:{}", m.ip, m.client)];
            let Ok(mut client) = crate::membership::connect(&rt, &ep) else {
                continue;
            };
            let Ok(Ok(status)) = rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(2), client.status()).await
            }) else {
                continue;
            };
            let me = status.header().map(|h| h.member_id());
            if me == Some(status.leader()) {
                return Some(i);
            }
        }
        None
    }

    fn wait_healthy(&self, limit: Duration) -> Result<(), String> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.leader().is_some() {
                return Ok(());
            }
            sleep_ms(200);
        }
        Err(format!("the etcd cluster has no leader after {limit:?}"))
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
    }
}

struct NodeProc {
    name: String,
    /// Network host index (namespaced network only).
    host: Option<usize>,
    ip: String,
    port: u16,
    child: Option<Child>,
    region: String,
    paused: bool,
    /// Restart after this instant (a node that was killed or exited).
    restart_at: Option<Instant>,
}

/// One run: its nodes, client and history.
struct Run<'a> {
    cfg: &'a CampaignConfig,
    exe: PathBuf,
    endpoints: Vec<String>,
    namespace: String,
    dir: PathBuf,
    history: History,
    nodes: Vec<NodeProc>,
    next_incarnation: &'a mut u64,
    node_starts: u64,
    fenced_exits: u64,
    net: Option<&'a Net>,
    policy: HandOffTimeoutPolicy,
}

/// Where node `name` reads how long its entities take to stop.
fn stop_delay_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.stopdelay"))
}

impl Run<'_> {
    fn spawn(&mut self, i: usize) -> Result<(), String> {
        *self.next_incarnation += 1;
        let inc = *self.next_incarnation;
        let n = &mut self.nodes[i];
        n.region = format!("{}-{inc}", n.name);
        let log =
            File::create(self.dir.join(format!("{}.log", n.region))).map_err(|e| e.to_string())?;
        let ns = n.host.zip(self.net).map(|(h, net)| net.ns(h));
        let mut cmd = if i < self.cfg.python_nodes {
            let mut c = command_in(ns.as_deref(), &self.cfg.python);
            c.arg(PYTHON_NODE);
            c
        } else {
            let mut c = command_in(ns.as_deref(), &self.exe);
            c.arg("node");
            c
        };
        if Path::new(FAKETIME).exists() {
            // The node's wall clock follows this file (see the clock-skew fault); its
            // monotonic clock, which leases and deadlines use, is left alone.
            let file = self.dir.join(format!("{}.faketime", n.name));
            if !file.exists() {
                std::fs::write(&file, "+0s\n").map_err(|e| e.to_string())?;
            }
            cmd.env("LD_PRELOAD", FAKETIME)
                .env("FAKETIME_TIMESTAMP_FILE", &file)
                .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
                .env("FAKETIME_CACHE_DURATION", "1");
        }
        cmd.args(["--name", &n.name])
            .args(["--handoff-timeout-policy", &policy_name(self.policy)])
            .arg("--stop-delay-file")
            .arg(stop_delay_file(&self.dir, &n.name))
            .args(["--incarnation", &inc.to_string()])
            .args(["--listen", &format!("{}:{}", n.ip, n.port)])
            .args(["--etcd", &self.endpoints.join(",")])
            .args(["--namespace", &self.namespace])
            .arg("--history")
            .arg(&self.dir)
            .args(["--shards", &self.cfg.shards.to_string()])
            .args(["--ttl-ms", &self.cfg.ttl_ms.to_string()])
            .args(["--worker-bits", "2"])
            .stdout(Stdio::null())
            .stderr(log);
        die_with_parent(&mut cmd);
        n.child = Some(
            cmd.spawn()
                .map_err(|e| format!("cannot start a node: {e}"))?,
        );
        n.paused = false;
        n.restart_at = None;
        self.node_starts += 1;
        Ok(())
    }

    /// Reaps nodes that exited (fenced themselves, or failed) and restarts due ones.
    fn supervise(&mut self) -> Result<(), String> {
        for i in 0..self.nodes.len() {
            let n = &mut self.nodes[i];
            if let Some(c) = n.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    self.history
                        .record("exited", json!({"r": n.region, "code": status.code()}));
                    if status.code() == Some(3) {
                        self.fenced_exits += 1;
                    }
                    n.child = None;
                    n.restart_at = Some(Instant::now() + Duration::from_millis(500));
                }
            }
            if n.child.is_none() && n.restart_at.is_some_and(|at| Instant::now() >= at) {
                self.spawn(i)?;
            }
        }
        Ok(())
    }

    fn wait(&mut self, d: Duration) -> Result<(), String> {
        let until = Instant::now() + d;
        while Instant::now() < until {
            self.supervise()?;
            sleep_ms(100);
        }
        Ok(())
    }

    /// Waits (supervising) for a history line of kind `k` written after `since`, looking
    /// every `poll_ms` up to `limit_ms`; whether one came.
    fn wait_for_line(
        &mut self,
        since: u64,
        k: &str,
        poll_ms: u64,
        limit_ms: u64,
    ) -> Result<bool, String> {
        for _ in 0..limit_ms.div_ceil(poll_ms) {
            self.wait(Duration::from_millis(poll_ms))?;
            let (lines, _) = crate::history::read_dir(&self.dir).map_err(|e| e.to_string())?;
            if lines
                .iter()
                .any(|l| l["k"] == k && l["t"].as_u64().is_some_and(|t| t > since))
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn kill(&mut self, i: usize, restart_after_ms: u64) {
        let n = &mut self.nodes[i];
        if let Some(mut c) = n.child.take() {
            let _ = c.kill();
            let _ = c.wait();
            self.history.record("killed", json!({"r": n.region}));
        }
        n.paused = false;
        n.restart_at = Some(Instant::now() + Duration::from_millis(restart_after_ms));
    }

    fn pause(&mut self, i: usize, ms: u64) -> Result<(), String> {
        if let Some(c) = self.nodes[i].child.as_ref() {
            signal(c, libc::SIGSTOP);
            self.nodes[i].paused = true;
            self.history
                .record("paused", json!({"r": self.nodes[i].region, "ms": ms}));
        }
        // No supervision while it is stopped: try_wait would not see it exit anyway.
        sleep_ms(ms);
        if let Some(c) = self.nodes[i].child.as_ref() {
            signal(c, libc::SIGCONT);
        }
        self.nodes[i].paused = false;
        Ok(())
    }

    /// The node whose coordinator holds the lease, as etcd has it.
    fn coordinator(&self) -> Option<usize> {
        let etcd =
            Etcd::connect_with_timeout(&self.endpoints, &self.namespace, Duration::from_secs(2))
                .ok()?;
        let (owner, _) = etcd
            .lease("coordinator", "campaign", self.cfg.ttl_ms)
            .holder()
            .ok()??;
        self.nodes.iter().position(|n| n.region == owner)
    }

    fn stop_all(&mut self) {
        for n in &mut self.nodes {
            if let Some(mut c) = n.child.take() {
                if n.paused {
                    signal(&c, libc::SIGCONT);
                }
                let _ = c.kill();
                let _ = c.wait();
            }
            n.restart_at = None;
        }
    }
}

/// Sends numbered messages to random entities through random nodes and records each answer.
fn spawn_client(
    dir: &Path,
    addrs: Vec<SocketAddr>,
    entities: u32,
    seed: u64,
    stop: Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<()>, String> {
    let history = History::open(&dir.join("client.jsonl"), "client").map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("client".into())
        .spawn(move || {
            let mut rng = Rng(seed | 1);
            let mut conns: BTreeMap<SocketAddr, (TcpStream, BufReader<TcpStream>)> =
                BTreeMap::new();
            let mut m = 0u64;
            while !stop.load(Ordering::SeqCst) {
                sleep_ms(25);
                m += 1;
                let addr = addrs[rng.below(addrs.len() as u64) as usize];
                let entity = format!("e{}", rng.below(u64::from(entities)));
                if let std::collections::btree_map::Entry::Vacant(e) = conns.entry(addr) {
                    let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500))
                    else {
                        continue;
                    };
                    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                    let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
                    let _ = s.set_nodelay(true);
                    let Ok(r) = s.try_clone() else { continue };
                    e.insert((s, BufReader::new(r)));
                }
                let Some((w, r)) = conns.get_mut(&addr) else {
                    continue;
                };
                let sent = write_frame(w, &Frame::Route { entity, message: m });
                let answer = sent.ok().and_then(|()| read_frame(r).ok().flatten());
                match answer {
                    Some(Frame::Ack {
                        message,
                        accepted,
                        region,
                    }) if message == m => {
                        history.record("acked", json!({"m": m, "accepted": accepted, "r": region}));
                    }
                    _ => {
                        // No answer in time: the message may or may not have been taken, so
                        // it is not counted as accepted; the connection is dropped so that
                        // a late answer cannot be read as the next one's.
                        conns.remove(&addr);
                    }
                }
            }
        })
        .map_err(|e| format!("cannot start the client: {e}"))
}

/// Whether the Python nodes can start: the script is there and the interpreter has
/// `shardline` with etcd.
fn check_python(cfg: &CampaignConfig) -> Result<(), String> {
    if !Path::new(PYTHON_NODE).is_file() {
        return Err(format!("--python-nodes: {PYTHON_NODE} is missing"));
    }
    let out = Command::new(&cfg.python)
        .args([
            "-c",
            "import shardline; assert shardline.HAS_ETCD, 'built without etcd'",
        ])
        .output()
        .map_err(|e| format!("--python {}: cannot run it: {e}", cfg.python.display()))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "--python {}: cannot import shardline with etcd (install bindings/python into it): {}",
            cfg.python.display(),
            why.trim().lines().last().unwrap_or("")
        ));
    }
    Ok(())
}

pub fn run(cfg: &CampaignConfig) -> Result<Summary, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    if cfg.python_nodes > 0 {
        check_python(cfg)?;
    }
    std::fs::create_dir_all(&cfg.work)
        .map_err(|e| format!("--work {}: {e}", cfg.work.display()))?;
    let net = if cfg.loopback {
        None
    } else {
        match Net::setup(cfg.net_id, 3 + cfg.nodes) {
            Ok(n) => Some(n),
            Err(e) => {
                eprintln!("campaign: no namespaced network ({e}); running on loopback without partition faults");
                None
            }
        }
    };
    let etcd_dir = cfg.work.join("etcd");
    let _ = std::fs::remove_dir_all(&etcd_dir);
    std::fs::create_dir_all(&etcd_dir).map_err(|e| e.to_string())?;
    let mut etcd = EtcdCluster::start(&etcd_dir, 3, net.as_ref())?;
    let stamp = crate::history::true_us();
    let mut summary = Summary {
        python_nodes: cfg.python_nodes,
        ..Summary::default()
    };
    let mut incarnation = 0u64;
    let mut rng = Rng(cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let kinds: Vec<&str> = match &cfg.only {
        Some(k) => vec![k.as_str()],
        None => KINDS
            .iter()
            .copied()
            .filter(|k| net.is_some() || !NET_KINDS.contains(k))
            .filter(|k| *k != "clock-skew" || Path::new(FAKETIME).exists())
            .filter(|k| *k != SLOW_STOP || cfg.policy == HandOffTimeoutPolicy::ForceReallocate)
            .collect(),
    };
    let left_out: Vec<&str> = KINDS
        .iter()
        .copied()
        .filter(|k| !kinds.contains(k) && *k != SLOW_STOP)
        .collect();
    if cfg.only.is_none() && !left_out.is_empty() {
        eprintln!(
            "campaign: fault kinds left out (no network namespaces or no libfaketime): {}",
            left_out.join(", ")
        );
    }
    if kinds.iter().any(|k| NET_KINDS.contains(k)) && net.is_none() {
        return Err(
            "partition faults need network namespaces (run as root, with `ip` and `tc`)".into(),
        );
    }
    if kinds.contains(&"clock-skew") && !Path::new(FAKETIME).exists() {
        return Err(format!("clock-skew needs libfaketime ({FAKETIME})"));
    }
    for r in 0..cfg.runs + cfg.force_runs {
        let (kind, policy) = if r < cfg.runs {
            (kinds[r as usize % kinds.len()], cfg.policy)
        } else {
            (SLOW_STOP, HandOffTimeoutPolicy::ForceReallocate)
        };
        let dir = cfg.work.join(format!("run{r}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let started = Instant::now();
        let mut nodes = Vec::new();
        for i in 0..cfg.nodes {
            let (host, ip, port) = match &net {
                Some(net) => (Some(3 + i), net.ip(3 + i), 7000),
                None => (
                    None,
                    "127.0.0.1".to_string(),
                    free_port().map_err(|e| e.to_string())?,
                ),
            };
            nodes.push(NodeProc {
                name: format!("n{i}"),
                host,
                ip,
                port,
                child: None,
                region: String::new(),
                paused: false,
                restart_at: None,
            });
        }
        let addrs: Vec<SocketAddr> = nodes
            .iter()
            .map(|n| {
                format!("{}:{}", n.ip, n.port)
                    .parse()
                    .map_err(|e| format!("{e}"))
            })
            .collect::<Result<_, String>>()?;
        let mut run = Run {
            cfg,
            exe: exe.clone(),
            endpoints: etcd.endpoints(),
            namespace: format!("/shardline-cluster/{stamp}/run{r}"),
            history: History::open(&dir.join("campaign.jsonl"), "campaign")
                .map_err(|e| e.to_string())?,
            nodes,
            dir: dir.clone(),
            next_incarnation: &mut incarnation,
            node_starts: 0,
            fenced_exits: 0,
            net: net.as_ref(),
            policy,
        };
        // slow-stop brings the last node in as its fault, so that shards move.
        let late = (kind == SLOW_STOP).then_some(cfg.nodes - 1);
        for i in (0..cfg.nodes).filter(|i| Some(*i) != late) {
            run.spawn(i)?;
        }
        run.wait(Duration::from_secs(3))?;
        let stop = Arc::new(AtomicBool::new(false));
        let client = spawn_client(&dir, addrs, cfg.shards * 3, rng.next(), stop.clone())?;
        run.wait(cfg.warmup)?;
        let mut counted: Vec<&str> = vec![kind];
        run.history.record("fault", json!({"kind": kind}));
        let ttl = cfg.ttl_ms;
        let any = |rng: &mut Rng| rng.below(cfg.nodes as u64) as usize;
        match kind {
            "kill" => {
                let i = any(&mut rng);
                if rng.below(2) == 0 {
                    // Killed again while it starts: joining, reserving a worker id.
                    run.kill(i, 0);
                    run.wait(Duration::from_millis(200 + rng.below(500)))?;
                    counted.push("kill");
                    run.history.record("kill-while-starting", json!({}));
                }
                run.kill(i, 1_000);
                run.wait(Duration::from_millis(1_500))?;
            }
            "pause" | "coordinator-pause" => {
                let i = if kind == "pause" {
                    any(&mut rng)
                } else {
                    run.coordinator().unwrap_or(0)
                };
                run.pause(i, ttl + 2_000 + rng.below(2_000))?;
                run.wait(Duration::from_millis(1_000))?;
            }
            "coordinator-kill" => {
                // A node dies and stays down until the others have taken its shards; it comes
                // back empty, the coordinator starts handing shards to it, and the coordinator
                // is killed as soon as the first hand-off has begun (a shard stopped).
                let c = run.coordinator().unwrap_or(0);
                let other = (c + 1 + rng.below(cfg.nodes as u64 - 1) as usize) % cfg.nodes;
                run.kill(other, ttl + 2_000);
                counted.push("kill");
                run.wait(Duration::from_millis(ttl + 2_500))?;
                let back = crate::history::true_us();
                let handing_off = run.wait_for_line(back, "stop", 100, 8_000)?;
                let c = run.coordinator().unwrap_or(c);
                run.history
                    .record("mid-hand-off", json!({"handingOff": handing_off}));
                if handing_off {
                    summary.mid_hand_off += 1;
                }
                run.kill(c, 1_000);
                run.wait(Duration::from_millis(1_500))?;
            }
            "etcd-member-kill" | "etcd-leader-kill" => {
                let leader = etcd.leader();
                let i = if kind == "etcd-leader-kill" {
                    leader.unwrap_or(0)
                } else {
                    let others: Vec<usize> = (0..3).filter(|i| Some(*i) != leader).collect();
                    others[rng.below(others.len() as u64) as usize]
                };
                run.history
                    .record("etcd-killed", json!({"member": i, "leader": leader}));
                etcd.kill(i);
                run.wait(Duration::from_millis(3_000 + rng.below(2_000)))?;
                etcd.spawn(i)?;
                run.wait(Duration::from_millis(500))?;
            }
            "partition" => {
                // Cut off from etcd and every node: longer than the TTL, so it is removed
                // and must fence itself; sometimes shorter, so it must carry on.
                let i = any(&mut rng);
                let ms = if rng.below(3) == 0 {
                    ttl / 2
                } else {
                    ttl + 2_000
                };
                let host = run.nodes[i].host.unwrap_or(0);
                run.history
                    .record("partitioned", json!({"r": run.nodes[i].region, "ms": ms}));
                net_of(&run)?.isolate(host)?;
                run.wait(Duration::from_millis(ms))?;
                net_of(&run)?.heal(host)?;
                run.wait(Duration::from_millis(500))?;
            }
            "node-partition" => {
                // Cut off from the other nodes only: etcd still sees it alive.
                let i = any(&mut rng);
                let host = run.nodes[i].host.unwrap_or(0);
                let others: Vec<usize> = run
                    .nodes
                    .iter()
                    .filter_map(|n| n.host)
                    .filter(|h| *h != host)
                    .collect();
                run.history.record(
                    "partitioned",
                    json!({"r": run.nodes[i].region, "from": "nodes"}),
                );
                net_of(&run)?.cut(host, &others)?;
                run.wait(Duration::from_millis(4_000 + rng.below(3_000)))?;
                for h in std::iter::once(host).chain(others) {
                    net_of(&run)?.heal(h)?;
                }
                counted.push("partition");
                run.wait(Duration::from_millis(500))?;
            }
            "slow-link" => {
                // Queueing delay and tail drops on one node's link, etcd traffic included.
                let i = any(&mut rng);
                let host = run.nodes[i].host.unwrap_or(0);
                let kbit = 40 + rng.below(60);
                run.history
                    .record("slowed", json!({"r": run.nodes[i].region, "kbit": kbit}));
                net_of(&run)?.slow(host, kbit)?;
                run.wait(Duration::from_millis(6_000))?;
                net_of(&run)?.heal(host)?;
                run.wait(Duration::from_millis(500))?;
            }
            "etcd-partition" => {
                // One member (the leader half the time) cut off: a minority of one.
                let leader = etcd.leader();
                let i = if rng.below(2) == 0 {
                    leader.unwrap_or(0)
                } else {
                    rng.below(3) as usize
                };
                run.history
                    .record("etcd-partitioned", json!({"member": i, "leader": leader}));
                net_of(&run)?.isolate(i)?;
                run.wait(Duration::from_millis(4_000 + rng.below(3_000)))?;
                net_of(&run)?.heal(i)?;
                counted.push("partition");
                run.wait(Duration::from_millis(500))?;
            }
            "clock-skew" => {
                // One node's wall clock jumps by up to a minute either way, then back.
                let i = any(&mut rng);
                let skew = 10 + rng.below(50) as i64;
                let skew = if rng.below(2) == 0 { -skew } else { skew };
                let file = dir.join(format!("{}.faketime", run.nodes[i].name));
                run.history
                    .record("skewed", json!({"r": run.nodes[i].region, "s": skew}));
                std::fs::write(&file, format!("{skew:+}s\n")).map_err(|e| e.to_string())?;
                run.wait(Duration::from_millis(5_000))?;
                std::fs::write(&file, "+0s\n").map_err(|e| e.to_string())?;
                run.wait(Duration::from_millis(1_500))?;
            }
            SLOW_STOP => {
                // Entities now take longer to stop than a hand-off may last. The last node
                // joins; rebalancing towards it hands shards off from the others, whose stops
                // outlast the timeout: under force-reallocate the shards move on while the old
                // copies are still stopping, under keep-owner their owners keep them. Once the
                // first slow stops are under way, later stops are quick again.
                let late = late.unwrap_or(cfg.nodes - 1);
                let ms = HANDOFF_TIMEOUT_MS + 2_000 + rng.below(2_000);
                let slowed: Vec<PathBuf> = run.nodes[..late]
                    .iter()
                    .map(|n| stop_delay_file(&dir, &n.name))
                    .collect();
                for f in &slowed {
                    std::fs::write(f, format!("{ms}\n")).map_err(|e| e.to_string())?;
                }
                run.history.record("slow-stops", json!({"ms": ms}));
                let joined = crate::history::true_us();
                run.spawn(late)?;
                let stopping = run.wait_for_line(joined, "stop", 500, 10_000)?;
                for f in &slowed {
                    std::fs::write(f, "0\n").map_err(|e| e.to_string())?;
                }
                let timed_out = stopping
                    && run.wait_for_line(
                        joined,
                        "handoff-timeout",
                        500,
                        HANDOFF_TIMEOUT_MS + 5_000,
                    )?;
                run.history.record(
                    "slow-stops-end",
                    json!({"stopping": stopping, "timedOut": timed_out}),
                );
                run.wait(Duration::from_millis(500))?;
            }
            other => return Err(format!("unknown fault kind {other:?}")),
        }
        for k in counted {
            *summary.faults.entry(k.to_owned()).or_default() += 1;
        }
        run.history.record("heal", json!({}));
        run.wait(cfg.settle)?;
        stop.store(true, Ordering::SeqCst);
        let _ = client.join();
        // Drain: what was accepted has time to arrive before the books close.
        let drain = Instant::now();
        while drain.elapsed() < Duration::from_secs(20) {
            run.wait(Duration::from_millis(500))?;
            if pending(&dir).map_err(|e| e.to_string())? == 0 {
                break;
            }
        }
        run.history.record("end", json!({}));
        run.stop_all();
        summary.node_starts += run.node_starts;
        summary.fenced_exits += run.fenced_exits;
        if policy == HandOffTimeoutPolicy::ForceReallocate {
            summary.force_runs += 1;
        }
        let v = check(&dir, RECOVERY_BOUND_MS).map_err(|e| e.to_string())?;
        add(&mut summary, &v);
        eprintln!(
            "run {r} ({kind}, {}): {:.0} s, accepted {}, delivered {}, lost to crash {}, hand-off timeouts {}, forced moves {}, max latency {} ms, recovery {} ms, {} violations",
            policy_name(policy),
            started.elapsed().as_secs_f64(),
            v.accepted,
            v.delivered,
            v.lost_to_crash,
            v.hand_off_timeouts,
            v.forced_moves,
            v.max_latency_ms,
            v.recovery_ms.map_or("-".to_string(), |x| x.to_string()),
            v.violations.len()
        );
        for line in &v.violations {
            eprintln!("  violation: {line}");
        }
        if v.violations.is_empty() && !cfg.keep {
            let _ = std::fs::remove_dir_all(&dir);
        } else {
            eprintln!("  history kept in {}", dir.display());
        }
    }
    drop(etcd);
    drop(net);
    if !cfg.keep {
        let _ = std::fs::remove_dir_all(&etcd_dir);
    }
    Ok(summary)
}

fn net_of<'a>(run: &Run<'a>) -> Result<&'a Net, String> {
    run.net
        .ok_or_else(|| "this fault needs the namespaced network".to_string())
}

fn add(s: &mut Summary, v: &Verdict) {
    s.runs += 1;
    s.violations += v.violations.len() as u64;
    s.lost += v.lost;
    s.duplicated += v.duplicated;
    s.duplicate_owners += v.duplicate_owners;
    s.duplicate_ids += v.duplicate_ids;
    s.duplicate_workers += v.duplicate_workers;
    s.lost_to_crash += v.lost_to_crash;
    s.accepted += v.accepted;
    s.delivered += v.delivered;
    s.ids += v.ids;
    s.hand_off_timeouts += v.hand_off_timeouts;
    s.forced_moves += v.forced_moves;
    s.hosted_twice += v.hosted_twice;
    s.delivered_after_move += v.delivered_after_move;
    s.max_latency_ms = s.max_latency_ms.max(v.max_latency_ms);
    if let Some(r) = v.recovery_ms {
        s.max_recovery_ms = s.max_recovery_ms.max(r);
    }
}
