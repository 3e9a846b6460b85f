//! `shardline worker-id`: reserve a worker id and hold it, or list the live reservations.

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;
use shardline_core::workerid::snowflake::{Clock, Layout};
use shardline_core::workerid::{
    HoldError, Identity, InMemoryRegistry, Policy, Registry, ReserveConfig, TenureConfig,
    WorkerIdHolder,
};
#[cfg(feature = "etcd")]
use shardline_etcd::Etcd;

use crate::EXIT_INVALID_INPUT;

/// Exit code when the command could not do its job (no free id, registry unreachable, id lost).
pub const EXIT_FAILED: u8 = 1;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Reserve the lowest free worker id; print {"workerId": N, "epoch": E}; hold it for
    /// --hold seconds; release it.
    Reserve(ReserveArgs),
    /// Print the live reservations as a JSON array.
    List(BackendArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Process-local registry (nothing is shared with other processes).
    Memory,
    Etcd,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    Lowest,
    Spread,
}

#[derive(clap::Args, Clone)]
pub struct BackendArgs {
    #[arg(long, value_enum, default_value = "memory")]
    pub backend: Backend,
    /// etcd endpoints, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:2379")]
    pub endpoints: Vec<String>,
    /// Key namespace in the registry.
    #[arg(long, default_value = "shardline")]
    pub namespace: String,
    /// Worker ids are 0 .. 2^bits.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u8).range(1..=16))]
    pub bits: u8,
}

#[derive(clap::Args, Clone)]
pub struct HoldArgs {
    #[command(flatten)]
    pub backend: BackendArgs,
    /// Session time-to-live, seconds: the id is freed this long after the process dies.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub ttl: u64,
    /// Owner name recorded with the reservation (default: host name and process id).
    #[arg(long)]
    pub owner: Option<String>,
    /// Order in which free ids are tried.
    #[arg(long, value_enum, default_value = "lowest")]
    pub policy: PolicyArg,
}

#[derive(clap::Args)]
pub struct ReserveArgs {
    #[command(flatten)]
    pub hold: HoldArgs,
    /// Keep the reservation alive this many seconds before releasing it.
    #[arg(
        long = "hold",
        value_name = "SECONDS",
        default_value_t = 0.0,
        allow_negative_numbers = true,
        value_parser = parse_seconds
    )]
    pub hold_seconds: f64,
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds in 0..=86400")),
    }
}

pub fn run(command: Command) -> Result<(), (u8, String)> {
    match command {
        Command::Reserve(args) => reserve(args),
        Command::List(args) => list(args),
    }
}

/// The host's clocks.
pub struct SystemClock(Instant);

impl SystemClock {
    pub fn new() -> SystemClock {
        SystemClock(Instant::now())
    }
}

impl Clock for SystemClock {
    fn wall_ms(&mut self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
    fn monotonic_ms(&mut self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
    fn sleep_until(&mut self, at: u64) {
        let now = self.monotonic_ms();
        if at > now {
            std::thread::sleep(Duration::from_millis(at - now));
        }
    }
}

pub fn failed_exit(e: impl std::fmt::Display) -> (u8, String) {
    (EXIT_FAILED, e.to_string())
}

pub fn open_registry(args: &BackendArgs, ttl_ms: u64) -> Result<Box<dyn Registry>, (u8, String)> {
    match args.backend {
        Backend::Memory => Ok(Box::new(InMemoryRegistry::new().session(ttl_ms))),
        #[cfg(feature = "etcd")]
        Backend::Etcd => {
            let etcd = Etcd::connect(&args.endpoints, &args.namespace).map_err(|e| {
                if e.kind() == shardline_core::ErrorKind::InvalidArgument {
                    (EXIT_INVALID_INPUT, format!("--endpoints/--namespace: {e}"))
                } else {
                    failed_exit(e)
                }
            })?;
            Ok(Box::new(etcd.registry(ttl_ms)))
        }
        // The value stays in the CLI's grammar either way, so scripts get this message rather
        // than a parse error that hides why.
        #[cfg(not(feature = "etcd"))]
        Backend::Etcd => Err((
            EXIT_INVALID_INPUT,
            "--backend etcd: this shardline was built without etcd support; rebuild with \
                 `cargo build -p shardline-cli --features etcd` (needs protoc)"
                .into(),
        )),
    }
}

/// A fresh identity per process start: the incarnation tells this run from a previous one
/// of the same owner.
fn identity(owner: Option<&str>) -> (Identity, u64) {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let pid = u64::from(std::process::id());
    let incarnation = nanos ^ pid.rotate_left(32);
    let owner = owner.map(str::to_owned).unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "localhost".into());
        format!("{host}/{pid}")
    });
    (Identity { owner, incarnation }, incarnation)
}

/// Reserves an id as `args` say and confirms it.
pub fn acquire(
    args: &HoldArgs,
    layout: Layout,
    clock: &mut SystemClock,
) -> Result<WorkerIdHolder<Box<dyn Registry>>, (u8, String)> {
    let ttl_ms = args.ttl * 1_000;
    let registry = open_registry(&args.backend, ttl_ms)?;
    let (me, seed) = identity(args.owner.as_deref());
    let config = ReserveConfig {
        worker_bits: args.backend.bits,
        policy: match args.policy {
            PolicyArg::Lowest => Policy::Lowest,
            PolicyArg::Spread => Policy::Spread { window: 64 },
        },
        ..ReserveConfig::default()
    };
    WorkerIdHolder::acquire(
        registry,
        config,
        TenureConfig::for_ttl(ttl_ms),
        layout,
        me,
        seed,
        clock,
    )
    .map_err(|e| match e {
        HoldError::Config(e) => (EXIT_INVALID_INPUT, e.to_string()),
        e => failed_exit(e),
    })
}

fn reserve(args: ReserveArgs) -> Result<(), (u8, String)> {
    let mut clock = SystemClock::new();
    let mut holder = acquire(&args.hold, Layout::default(), &mut clock)?;
    // Written by hand to keep the documented key order.
    let line = format!(
        "{{\"workerId\":{},\"epoch\":{}}}",
        holder.worker_id(),
        holder.epoch()
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(|e| failed_exit(format!("writing stdout: {e}")))?;
    drop(out);
    let until = clock.monotonic_ms() + (args.hold_seconds * 1_000.0) as u64;
    let held = holder.hold_until(&mut clock, until);
    let _ = holder.release(&mut clock);
    held.map_err(|r| failed_exit(format!("worker id lost while holding: {r}")))
}

fn list(args: BackendArgs) -> Result<(), (u8, String)> {
    let mut registry = open_registry(&args, 10_000)?;
    let listing = registry.list().map_err(failed_exit)?;
    let live: Vec<_> = listing
        .live()
        .filter(|(id, _)| *id < (1u32 << args.bits))
        .map(|(id, c)| {
            json!({"workerId": id, "owner": c.owner, "incarnation": c.incarnation, "epoch": c.epoch})
        })
        .collect();
    println!("{}", serde_json::Value::Array(live));
    Ok(())
}
