//! `shardline-cluster`: a real shardline cluster on one machine.
//!
//! * `node`: one node process (shard region, standby coordinator, worker-id holder) over TCP
//!   and etcd; runs until killed. The runnable example of hosting shardline for real
//!   (`cluster/python/node.py` is the same node in Python, through the binding).
//! * `campaign`: starts a 3-member etcd cluster and N nodes, injects faults, checks the
//!   recorded history and prints one JSON summary line.
//! * `check`: checks a history directory a campaign kept.

mod campaign;
mod check;
mod history;
mod membership;
mod net;
mod node;
mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use shardline_core::coordinator::HandOffTimeoutPolicy;

#[derive(Parser)]
#[command(name = "shardline-cluster", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one node until it is killed (or fences itself, exit code 3).
    Node {
        /// The node's name; its region id is `<name>-<incarnation>`.
        #[arg(long)]
        name: String,
        /// Tells this process from earlier ones of the same node (default: the time now, ms).
        #[arg(long)]
        incarnation: Option<u64>,
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
        /// etcd client URLs, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        etcd: Vec<String>,
        #[arg(long, default_value = "/shardline-cluster")]
        namespace: String,
        /// Directory for the node's history file.
        #[arg(long)]
        history: PathBuf,
        #[arg(long, default_value_t = 30)]
        shards: u32,
        /// Membership session, coordinator lease and worker-id tenure time-to-live.
        #[arg(long, default_value_t = 5_000)]
        ttl_ms: u64,
        #[arg(long, default_value_t = 3)]
        worker_bits: u8,
        #[arg(long, default_value_t = 2_000)]
        rebalance_interval_ms: u64,
        /// What the coordinator does with a hand-off that outlasts its 10 s timeout.
        #[arg(long, default_value = "keep-owner", value_parser = parse_policy)]
        handoff_timeout_policy: HandOffTimeoutPolicy,
        /// A file holding how many ms entities take to stop, read at every shard stop
        /// (absent or 0: at once).
        #[arg(long)]
        stop_delay_file: Option<PathBuf>,
    },
    /// Run the fault campaign and print one JSON summary line.
    Campaign {
        /// Runs; the fault kinds take turns (11 kinds; 12 with --policy force-reallocate).
        #[arg(long, default_value_t = 11)]
        runs: u32,
        /// Shorter runs (2 s of traffic before the fault, 8 s after), for the test command.
        #[arg(long)]
        quick: bool,
        #[arg(long, default_value_t = 3)]
        nodes: usize,
        #[arg(long, default_value_t = 30)]
        shards: u32,
        #[arg(long, default_value_t = 5_000)]
        ttl_ms: u64,
        /// Working directory (etcd data, histories, logs).
        #[arg(long, default_value = "target/cluster-campaign")]
        work: PathBuf,
        /// Keep every run's history, not only those with violations.
        #[arg(long)]
        keep: bool,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Only this fault kind.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(campaign::KINDS))]
        only: Option<String>,
        /// Stay on loopback even when network namespaces are available (no partitions).
        #[arg(long)]
        loopback: bool,
        /// Network number, so that campaigns can run side by side (names `sl<N>…`, subnet
        /// 10.213.<N>.0/24).
        #[arg(long, default_value_t = 0)]
        net_id: u8,
        /// The first K nodes run `cluster/python/node.py` (the Python node, through the
        /// binding) instead of this binary's `node`.
        #[arg(long, default_value_t = 0)]
        python_nodes: usize,
        /// The interpreter for the Python nodes, one with the `shardline` package installed.
        #[arg(long, default_value = "python3")]
        python: PathBuf,
        /// The nodes' hand-off timeout policy for the --runs runs (with force-reallocate
        /// the fault kinds include slow-stop).
        #[arg(long, default_value = "keep-owner", value_parser = parse_policy)]
        policy: HandOffTimeoutPolicy,
        /// More runs after the --runs ones, under force-reallocate, each a slow-stop fault.
        #[arg(long, default_value_t = 0)]
        force_runs: u32,
    },
    /// Check a history directory and print the verdict as JSON.
    Check {
        dir: PathBuf,
        #[arg(long, default_value_t = campaign::RECOVERY_BOUND_MS)]
        recovery_bound_ms: u64,
    },
}

/// `keep-owner` or `force-reallocate`, as the coordinator configuration spells them.
fn parse_policy(s: &str) -> Result<HandOffTimeoutPolicy, String> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).map_err(|_| {
        format!("unknown hand-off timeout policy {s:?}: use keep-owner or force-reallocate")
    })
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("shardline-cluster: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Node {
            name,
            incarnation,
            listen,
            etcd,
            namespace,
            history,
            shards,
            ttl_ms,
            worker_bits,
            rebalance_interval_ms,
            handoff_timeout_policy,
            stop_delay_file,
        } => {
            if name.is_empty() || name.contains(['/', '@', ':', '#', '?', ' ']) {
                return Err(format!("--name {name:?}: use letters, digits, '-' and '_'"));
            }
            if !(1..=100_000).contains(&shards) {
                return Err(format!("--shards {shards}: must be in 1..=100000"));
            }
            if ttl_ms < 2_000 {
                return Err(format!("--ttl-ms {ttl_ms}: must be at least 2000"));
            }
            if !(1..=10).contains(&worker_bits) {
                return Err(format!("--worker-bits {worker_bits}: must be in 1..=10"));
            }
            let incarnation = incarnation.unwrap_or_else(|| history::wall_us() / 1_000);
            node::run(node::NodeConfig {
                name,
                incarnation,
                listen,
                endpoints: etcd,
                namespace,
                history_dir: history,
                shards,
                ttl_ms,
                worker_bits,
                rebalance_interval_ms,
                handoff_timeout_policy,
                stop_delay_file,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Campaign {
            runs,
            quick,
            nodes,
            shards,
            ttl_ms,
            work,
            keep,
            seed,
            only,
            loopback,
            net_id,
            python_nodes,
            python,
            policy,
            force_runs,
        } => {
            if !(2..=5).contains(&nodes) {
                return Err(format!("--nodes {nodes}: must be in 2..=5"));
            }
            if python_nodes > nodes {
                return Err(format!(
                    "--python-nodes {python_nodes}: must be at most --nodes ({nodes})"
                ));
            }
            if runs == 0 && force_runs == 0 {
                return Err("--runs (or --force-runs) must be at least 1".into());
            }
            let cfg = campaign::CampaignConfig {
                runs,
                nodes,
                shards,
                ttl_ms,
                work,
                keep,
                seed,
                warmup: Duration::from_secs(if quick { 2 } else { 5 }),
                settle: Duration::from_secs(if quick { 8 } else { 15 }),
                only,
                loopback,
                net_id,
                python_nodes,
                python,
                policy,
                force_runs,
            };
            let summary = campaign::run(&cfg)?;
            println!(
                "{}",
                serde_json::to_string(&summary).map_err(|e| e.to_string())?
            );
            Ok(if summary.violations == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Check {
            dir,
            recovery_bound_ms,
        } => {
            let v = check::check(&dir, recovery_bound_ms)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            println!("{}", serde_json::to_string(&v).map_err(|e| e.to_string())?);
            Ok(if v.violations.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}
