//! Every simulator scenario, for every strategy and both hand-off timeout policies, over
//! several seeds at small sizes: no invariant may break, no accepted message may be lost or
//! delivered twice, and no shard may run in two regions.
//!
//! Seeds alternate between two clusters: 4 nodes / 16 shards on Pekko's timings, and
//! 5 nodes / 25 shards on tight timings (2 s rebalance interval, 1.5 s hand-off timeout,
//! shorter than the 2 s re-send interval) where hand-offs time out all the time. A failure
//! prints the `shardline sim` command line that replays it.

use shardline_core::coordinator::HandOffTimeoutPolicy;
use shardline_core::sim::{run, Report, Scenario, SimConfig};
use shardline_core::strategy::StrategyConfig;

const STRATEGIES: [&str; 6] = [
    "least-shard",
    "least-shard-legacy",
    "consistent-hashing",
    "actor-ts-least-shard",
    "actor-ts-hash",
    "bounded-load-hashing",
];
const POLICIES: [HandOffTimeoutPolicy; 2] = [
    HandOffTimeoutPolicy::KeepOwner,
    HandOffTimeoutPolicy::ForceReallocate,
];
const SEEDS: u64 = 12;

struct Case {
    config: SimConfig,
    replay: String,
}

fn case(scenario: Scenario, strategy: &str, policy: HandOffTimeoutPolicy, seed: u64) -> Case {
    let mut c = SimConfig::new(scenario, seed).with_policy(policy);
    c.strategy = StrategyConfig::from_json(&serde_json::json!({ "kind": strategy })).unwrap();
    c.rate = 4.0;
    c.steady_rounds = 5;
    // A healthy run takes tens of thousands of steps; a livelock fails fast instead of
    // spinning for minutes in a debug build.
    c.max_steps = 400_000;
    let policy_name = match policy {
        HandOffTimeoutPolicy::KeepOwner => "keep-owner",
        HandOffTimeoutPolicy::ForceReallocate => "force-reallocate",
    };
    let mut replay = format!(
        "shardline sim --scenario {} --seed {seed} --strategy {strategy} --policy {policy_name} --rate 4 --steady-rounds 5",
        scenario.name()
    );
    if seed % 2 == 1 {
        c.nodes = Some(4);
        c.shards = Some(16);
        replay.push_str(" --nodes 4 --shards 16");
    } else {
        c.nodes = Some(5);
        c.shards = Some(25);
        c.coordinator.rebalance_interval_ms = 2_000;
        c.coordinator.handoff_timeout_ms = 1_500;
        replay.push_str(" --nodes 5 --shards 25 --rebalance-interval 2000 --handoff-timeout 1500");
    }
    Case { config: c, replay }
}

fn problems(r: &Report) -> Option<String> {
    if r.passed()
        && r.lost_messages == 0
        && r.duplicate_deliveries == 0
        && r.duplicate_owners == 0
        && r.moves_at_steady_state == 0
        && r.converged
    {
        return None;
    }
    let first: Vec<&str> = r.violations.iter().take(3).map(String::as_str).collect();
    Some(format!(
        "{} violation(s), {} lost, {} duplicated, {} duplicate owner(s): {first:?}",
        r.violation_count, r.lost_messages, r.duplicate_deliveries, r.duplicate_owners
    ))
}

fn every_strategy_policy_and_seed(scenario: Scenario) -> Vec<Report> {
    let mut failures = Vec::new();
    let mut reports = Vec::new();
    for strategy in STRATEGIES {
        for policy in POLICIES {
            for seed in 1..=SEEDS {
                let c = case(scenario, strategy, policy, seed);
                let r = run(&c.config).unwrap();
                if let Some(p) = problems(&r) {
                    failures.push(format!("{}\n    {p}", c.replay));
                }
                reports.push(r);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs failed:\n{}",
        failures.len(),
        STRATEGIES.len() * POLICIES.len() * SEEDS as usize,
        failures.join("\n")
    );
    reports
}

macro_rules! scenario_tests {
    ($($name:ident => $scenario:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                every_strategy_policy_and_seed($scenario);
            }
        )*
    };
}

scenario_tests! {
    cold_start => Scenario::ColdStart,
    steady_state => Scenario::SteadyState,
    scale_out => Scenario::ScaleOut,
    scale_out_double => Scenario::ScaleOutDouble,
    scale_in => Scenario::ScaleIn,
    crash => Scenario::Crash,
    zone_loss => Scenario::ZoneLoss,
    rolling_restart => Scenario::RollingRestart,
    rolling_upgrade => Scenario::RollingUpgrade,
    flapping => Scenario::Flapping,
    slow_handoff => Scenario::SlowHandoff,
    lease_expiry => Scenario::LeaseExpiry,
    clock_jumps => Scenario::ClockJumps,
    chaos => Scenario::Chaos,
}

#[test]
fn coordinator_failover_restores_from_the_store_and_carries_on() {
    for r in every_strategy_policy_and_seed(Scenario::CoordinatorFailover) {
        assert!(
            r.coordinator.restores_checked >= 1 && r.coordinator.takeovers >= 3,
            "{} seed {}: the crashed coordinators' successors must restore from the store: {:?}",
            r.scenario,
            r.seed,
            r.coordinator
        );
        assert!(r.injected.coordinator_crashes >= 2);
    }
}

#[test]
fn every_scenario_is_tested() {
    // The macro above lists them by hand, and load-shift has its own test below; a new
    // scenario must be added there.
    assert_eq!(Scenario::ALL.len(), 16);
}

/// Load reports with every strategy (least-shard and the others ignore them; the drain falls
/// back to a graceful leave), and with least-load, which reads them and drains: no invariant
/// breaks, and a successor restored from the store decides as its predecessor would have.
#[test]
fn load_shift_with_every_strategy_and_least_load() {
    let reports = every_strategy_policy_and_seed(Scenario::LoadShift);
    assert!(reports.iter().all(|r| r.coordinator.restores_checked >= 1));
    let mut failures = Vec::new();
    for policy in POLICIES {
        for seed in 1..=SEEDS {
            let c = case(Scenario::LoadShift, "least-load", policy, seed);
            let r = run(&c.config).unwrap();
            if let Some(p) = problems(&r) {
                failures.push(format!("{}\n    {p}", c.replay));
            }
            if r.coordinator.restores_checked == 0 {
                failures.push(format!("{}\n    no restore was checked", c.replay));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_run_is_a_function_of_its_seed() {
    let json = |seed| {
        let c = case(
            Scenario::Chaos,
            "least-shard",
            HandOffTimeoutPolicy::KeepOwner,
            seed,
        );
        serde_json::to_string(&run(&c.config).unwrap()).unwrap()
    };
    assert_eq!(json(2), json(2));
    assert_ne!(json(2), json(4));
}

#[test]
fn the_faults_are_really_injected() {
    let c = case(
        Scenario::Chaos,
        "least-shard",
        HandOffTimeoutPolicy::KeepOwner,
        2,
    );
    let r = run(&c.config).unwrap();
    let f = &r.injected;
    assert!(f.dropped > 0 && f.duplicated > 0 && f.delayed > 0, "{f:?}");
    assert!(
        f.clock_jumps + f.lease_expiries + f.coordinator_crashes + f.region_crashes > 0,
        "{f:?}"
    );
    assert!(
        r.directives_refused > 0,
        "stale directives arrive and are fenced"
    );

    let c = case(
        Scenario::Crash,
        "least-shard",
        HandOffTimeoutPolicy::KeepOwner,
        1,
    );
    let r = run(&c.config).unwrap();
    assert_eq!(r.injected.region_crashes, 1);
    assert!(
        r.allocations > 0,
        "the crashed region's shards were re-allocated"
    );

    let (mut slow, mut timed_out) = (0, 0);
    for seed in 1..=4 {
        let c = case(
            Scenario::SlowHandoff,
            "least-shard",
            HandOffTimeoutPolicy::ForceReallocate,
            seed,
        );
        let r = run(&c.config).unwrap();
        slow += r.injected.slow_stops;
        timed_out += r.handoffs.timed_out;
    }
    assert!(
        slow > 0 && timed_out > 0,
        "{slow} slow stops, {timed_out} timeouts"
    );
}

#[test]
fn nothing_moves_without_a_reason_and_scale_out_moves_shards() {
    let c = case(
        Scenario::SteadyState,
        "least-shard",
        HandOffTimeoutPolicy::KeepOwner,
        1,
    );
    let r = run(&c.config).unwrap();
    assert_eq!((r.shards_moved, r.moves_at_steady_state), (0, 0));

    let c = case(
        Scenario::ScaleOut,
        "least-shard",
        HandOffTimeoutPolicy::KeepOwner,
        1,
    );
    let r = run(&c.config).unwrap();
    assert!(
        r.shards_moved >= r.moves_lower_bound && r.moves_lower_bound > 0,
        "{r:?}"
    );
    assert!(r.max_over_mean <= 1.25, "{r:?}");
}
