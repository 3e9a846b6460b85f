//! `shardline sim`: run a deterministic cluster simulation and report the invariant verdict
//! and placement quality, as text or one JSON object; optionally chart shards per node.

use std::io::Write;

use serde_json::Value;
use shardline_core::coordinator::HandOffTimeoutPolicy;
use shardline_core::sim::{self, FaultLevel, Report, Scenario, SimConfig};
use shardline_core::strategy::StrategyConfig;

use crate::EXIT_INVALID_INPUT;

/// Exit code when the simulation found invariant violations.
const EXIT_VIOLATIONS: u8 = 1;

#[derive(clap::Args)]
pub struct Args {
    /// List the scenarios and exit.
    #[arg(long)]
    list: bool,
    /// Scenario to run (see --list).
    #[arg(long, value_name = "NAME")]
    scenario: Option<String>,
    /// Seed: the same seed and flags give the same run.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Initial number of nodes (one shard region each) [default: 6].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    nodes: Option<u64>,
    /// Number of shards [default: 60].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    shards: Option<u32>,
    /// Allocation strategy: a kind name (least-shard, least-shard-legacy, consistent-hashing,
    /// bounded-load-hashing, actor-ts-least-shard, actor-ts-hash) or a strategy JSON object.
    #[arg(long, default_value = "least-shard", value_name = "KIND|JSON")]
    strategy: String,
    /// What a hand-off timeout does.
    #[arg(
        long,
        default_value = "keep-owner",
        value_name = "keep-owner|force-reallocate"
    )]
    policy: String,
    /// Coordinator candidates sharing the lease.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=16))]
    coordinators: u64,
    /// Entity messages per simulated second.
    #[arg(long, default_value_t = 10.0)]
    rate: f64,
    /// Fault level while the scenario runs: none, network or chaos [default: the scenario's].
    #[arg(long, value_name = "none|network|chaos")]
    faults: Option<String>,
    /// Rebalance rounds the cluster must stay put after converging.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    steady_rounds: u64,
    /// Coordinator rebalance interval in ms (Pekko: 10000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    rebalance_interval: Option<u64>,
    /// Hand-off timeout in ms (Pekko: 60000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    handoff_timeout: Option<u64>,
    /// Print one JSON object instead of the readable report.
    #[arg(long)]
    json: bool,
    /// Pretty-print the JSON.
    #[arg(long)]
    pretty: bool,
    /// Log every message, output and decision that touches SHARD to stderr.
    #[arg(long, value_name = "SHARD")]
    trace: Option<String>,
    /// Write a chart of shards per node over time to FILE (SVG).
    #[arg(long, value_name = "FILE")]
    svg: Option<std::path::PathBuf>,
    /// Record every coordinator and region call with its outputs to FILE (a trace for
    /// `shardline replay`, see tests/traces/README.md).
    #[arg(long, value_name = "FILE")]
    record: Option<std::path::PathBuf>,
    /// Write every notice of every coordinator and region to FILE as JSON lines, with each
    /// allocation and rebalance round explained (the coordinators' `decisionEvents`).
    #[arg(long, value_name = "FILE")]
    events: Option<std::path::PathBuf>,
}

/// The command line that made a trace, without the binary and `--record FILE`: running
/// `shardline` with it again records the same trace.
fn recorded_by() -> Value {
    // args_os: a file name need not be UTF-8 (args() would panic on one).
    let mut args = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned());
    let mut kept = Vec::new();
    while let Some(a) = args.next() {
        if a == "--record" {
            args.next();
        } else if !a.starts_with("--record=") {
            kept.push(Value::String(a));
        }
    }
    Value::Array(kept)
}

type Failure = (u8, String);

fn invalid(flag: &str, why: impl std::fmt::Display) -> Failure {
    (EXIT_INVALID_INPUT, format!("{flag}: {why}"))
}

/// A kind name or a JSON object; a bare name gets the kind's defaults.
fn parse_strategy(text: &str) -> Result<StrategyConfig, Failure> {
    let value: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text)
            .map_err(|e| invalid("--strategy", format!("not valid JSON: {e}")))?
    } else {
        serde_json::json!({ "kind": text })
    };
    let config = StrategyConfig::from_json(&value).map_err(|e| {
        let text = e.to_string();
        invalid(
            "--strategy",
            text.trim_start_matches("strategy: ").to_owned(),
        )
    })?;
    if config.kind() == "external" {
        return Err(invalid(
            "--strategy",
            "external needs locations from outside the cluster; the simulator does not model them",
        ));
    }
    config.build().map_err(|e| invalid("--strategy", e))?;
    Ok(config)
}

fn config(args: &Args) -> Result<SimConfig, Failure> {
    let names = || {
        sim::scenarios()
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let name = args.scenario.as_deref().ok_or_else(|| {
        invalid(
            "--scenario",
            format!("missing; one of {} (or --list)", names()),
        )
    })?;
    let scenario = Scenario::from_name(name).ok_or_else(|| {
        invalid(
            "--scenario",
            format!("unknown scenario {name:?}; one of {}", names()),
        )
    })?;
    let policy = match args.policy.as_str() {
        "keep-owner" => HandOffTimeoutPolicy::KeepOwner,
        "force-reallocate" => HandOffTimeoutPolicy::ForceReallocate,
        other => {
            return Err(invalid(
                "--policy",
                format!("{other:?}: expected keep-owner or force-reallocate"),
            ))
        }
    };
    if !(args.rate > 0.0 && args.rate <= 100_000.0) {
        return Err(invalid(
            "--rate",
            format!("{}: expected a number in (0, 100000]", args.rate),
        ));
    }
    let faults = match &args.faults {
        None => None,
        Some(f) => Some(FaultLevel::from_name(f).ok_or_else(|| {
            invalid(
                "--faults",
                format!("{f:?}: expected none, network or chaos"),
            )
        })?),
    };
    let mut c = SimConfig::new(scenario, args.seed).with_policy(policy);
    c.strategy = parse_strategy(&args.strategy)?;
    c.nodes = args.nodes.map(|n| n as usize);
    c.shards = args.shards;
    c.coordinators = args.coordinators as usize;
    c.rate = args.rate;
    c.faults = faults;
    c.steady_rounds = args.steady_rounds;
    if let Some(ms) = args.rebalance_interval {
        c.coordinator.rebalance_interval_ms = ms;
    }
    if let Some(ms) = args.handoff_timeout {
        c.coordinator.handoff_timeout_ms = ms;
    }
    c.trace = args.trace.clone();
    if args.svg.is_some() {
        c.sample_ms = (c.coordinator.rebalance_interval_ms / 4).max(250);
    }
    Ok(c)
}

fn text_report(r: &Report) -> String {
    let kind = r
        .strategy
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let policy = serde_json::to_value(r.policy)
        .ok()
        .and_then(|p| p.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut s = format!(
        "scenario {} · seed {} · {} nodes, {} shards, {} coordinator(s) · strategy {kind} · policy {policy} · faults {}\n",
        r.scenario, r.seed, r.nodes, r.shards, r.coordinators, r.faults
    );
    let verdict = if r.passed() {
        "PASS: every invariant held".to_owned()
    } else {
        format!("FAIL: {} violation(s)", r.violation_count)
    };
    s.push_str(&format!("{verdict}\n"));
    for v in &r.violations {
        s.push_str(&format!("  - {v}\n"));
    }
    let m = &r.messages;
    let rows = [
        (
            "messages accepted / delivered",
            format!("{} / {}", m.accepted, m.delivered),
        ),
        (
            "lost / duplicated / lost to crashes",
            format!(
                "{} / {} / {}",
                r.lost_messages, r.duplicate_deliveries, r.lost_to_crashes
            ),
        ),
        ("duplicate owners", r.duplicate_owners.to_string()),
        (
            "converged",
            format!(
                "{} ({} round(s), {:.1} s after the last disruption)",
                if r.converged { "yes" } else { "NO" },
                r.rounds_to_converge,
                r.time_to_converge_ms as f64 / 1_000.0
            ),
        ),
        (
            "shards moved (lower bound)",
            format!("{} ({})", r.shards_moved, r.moves_lower_bound),
        ),
        ("most moves in one round", r.max_moves_per_round.to_string()),
        ("moves at steady state", r.moves_at_steady_state.to_string()),
        ("balance, max/mean", format!("{}", r.max_over_mean)),
        (
            "message delay p99 / max",
            format!(
                "{} ms / {} ms",
                r.buffered_delay_p99_ms, r.buffered_delay_max_ms
            ),
        ),
        (
            "hand-offs, whole run: started / done / timeout",
            format!(
                "{} / {} / {}",
                r.handoffs.started, r.handoffs.completed, r.handoffs.timed_out
            ),
        ),
        (
            "coordinator takeovers / restores checked",
            format!(
                "{} / {}",
                r.coordinator.takeovers, r.coordinator.restores_checked
            ),
        ),
        (
            "writes fenced by a newer coordinator",
            r.coordinator.fenced_writes.to_string(),
        ),
        ("stale directives refused", r.directives_refused.to_string()),
        (
            "faults: dropped / duplicated / delayed",
            format!(
                "{} / {} / {}",
                r.injected.dropped, r.injected.duplicated, r.injected.delayed
            ),
        ),
        (
            "simulated",
            format!(
                "{:.0} s in {} steps",
                r.simulated_ms as f64 / 1_000.0,
                r.steps
            ),
        ),
    ];
    for (k, v) in rows {
        s.push_str(&format!("  {k:<48} {v}\n"));
    }
    let per: Vec<String> = r
        .final_shards_per_region
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    s.push_str(&format!(
        "  {:<48} {}
",
        "shards per region",
        per.join(" ")
    ));
    s
}

pub fn run(args: Args) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    let write_err = |e: std::io::Error| (1, format!("writing stdout: {e}"));
    if args.list {
        for (name, what) in sim::scenarios() {
            writeln!(stdout, "{name:<22} {what}").map_err(write_err)?;
        }
        return Ok(());
    }
    let config = config(&args)?;
    let observe = sim::Observe {
        record: args.record.as_ref().map(|_| recorded_by()),
        events: args.events.is_some(),
    };
    let observed =
        sim::run_observed(&config, observe).map_err(|e| (EXIT_INVALID_INPUT, e.to_string()))?;
    for (flag, path, text) in [
        ("--record", &args.record, &observed.trace),
        ("--events", &args.events, &observed.events),
    ] {
        if let (Some(path), Some(text)) = (path, text) {
            std::fs::write(path, text)
                .map_err(|e| invalid(flag, format!("{}: {e}", path.display())))?;
        }
    }
    let report = observed.report;
    if let Some(path) = &args.svg {
        std::fs::write(path, sim::svg::render(&report))
            .map_err(|e| invalid("--svg", format!("{}: {e}", path.display())))?;
    }
    if args.json {
        let rendered = if args.pretty {
            serde_json::to_string_pretty(&report)
        } else {
            serde_json::to_string(&report)
        }
        .expect("reports serialize");
        writeln!(stdout, "{rendered}").map_err(write_err)?;
    } else {
        write!(stdout, "{}", text_report(&report)).map_err(write_err)?;
    }
    if report.passed() {
        Ok(())
    } else {
        Err((
            EXIT_VIOLATIONS,
            format!(
                "{} invariant violation(s) in scenario {} seed {}",
                report.violation_count, report.scenario, report.seed
            ),
        ))
    }
}
