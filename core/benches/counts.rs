//! Fixed work for instruction counts (`valgrind --tool=callgrind`), which a loaded machine
//! does not disturb the way it does criterion's times. Each case runs once in `measured`;
//! building its state falls outside:
//!
//! ```text
//! cargo bench -p shardline-core --bench counts --no-run
//! valgrind --tool=callgrind --toggle-collect='*measured*' <bench binary> <case>
//! ```
//!
//! Cases (none given: the list): `least-load/{plan,round,allocate,place}` on the least_load
//! bench's instance (S = 100k, R = 1,000, lognormal loads, capacities 1, 2 or 4);
//! `<strategy>/{allocate,place,rebalance-steady,rebalance-join}` on the strategies bench's
//! steady state at R = 1,000, S = 100k (least-load there as `least-load-uniform`);
//! `state/move_shard`; `coordinator/get-shard-home` on the coordinator bench's active
//! coordinator (R = 100, S = 100k). `allocate` is 1,000 allocations (read only), `place`
//! 1,000 allocations each followed by `add_shard`, a rebalance case one round, `move_shard`
//! 1,000 shards removed and added back elsewhere, `get-shard-home` 1,000 steps that each
//! answer `GetShardHome` for an allocated shard, take the one output and drop it (the inputs
//! built outside, as the host receives them); `region/route-local` and `route-remote` 1,000
//! routing steps on the coordinator bench's region (the payloads built outside). The plan case prints its move count and a
//! checksum of its moves (shard, source, destination). `BENCH_SCALE=1` runs every case at
//! R = 10,000, S = 1M: beside the default size, how each operation's work grows with the
//! state.

use std::hash::{Hash, Hasher};
use std::hint::black_box;

use shardline_core::jvm::sort_distinct_utf16;
use shardline_core::model::{
    Address, AllocationState, ClusterView, Member, RegionId, ShardId, Version,
};
use shardline_core::strategy::{
    Allocation, AllocationStrategy, InProgress, LeastLoad, StrategyConfig,
};

#[path = "support/least_load_instance.rs"]
mod least_load_instance;
use least_load_instance::{instance as loaded, size};

/// The least_load bench's plan; returns (moves, rounds that moved, every removal and
/// placement as (shard, region) in order).
fn plan(
    strategy: &mut LeastLoad,
    state: &mut AllocationState,
) -> (usize, usize, Vec<(ShardId, RegionId)>) {
    let none = InProgress::new();
    let (mut moves, mut rounds) = (0, 0);
    let mut trace = Vec::new();
    loop {
        let mut picked = strategy.rebalance(state, &none, None).unwrap();
        if picked.is_empty() {
            return (moves, rounds, trace);
        }
        moves += picked.len();
        rounds += 1;
        for s in &picked {
            let from = state.home_of(s).map(|r| r.id().clone()).unwrap();
            trace.push((s.clone(), from));
        }
        // String order, as the coordinator re-allocates after its hand-off; taken in that
        // order too, so that each id is read while the sort left it cached
        sort_distinct_utf16(&mut picked, |s| s);
        let taken = state.take_shards(picked).unwrap();
        for t in taken {
            match strategy.allocate(state, None, t.id(), None).unwrap() {
                Allocation::Region(r) => {
                    let s = t.id().clone();
                    state.place_taken(&r, t).unwrap();
                    trace.push((s, r));
                }
                Allocation::Pending => panic!("{}: no region", t.id()),
            }
        }
    }
}

fn node(i: usize) -> Address {
    Address::parse(&format!(
        "pekko://sys@10.{}.{}.{}:2552",
        (i >> 16) & 255,
        (i >> 8) & 255,
        i & 255
    ))
    .unwrap()
}

fn add_region(state: &mut AllocationState, i: usize) -> String {
    let a = node(i);
    let mut m = Member::new(a.clone());
    m.app_version = Version::parse("1.0.0").unwrap();
    m.up_number = i as i32 + 1;
    state.upsert_member(m);
    let id = format!("r{i}");
    state.add_region(&id, a, false).unwrap();
    id
}

/// The strategies bench's steady state: shards placed one by one by the strategy itself.
fn steady(strategy: &mut dyn AllocationStrategy) -> AllocationState {
    let mut state = AllocationState::new(ClusterView::new(node(0)));
    let (regions, shards) = size();
    for i in 0..regions {
        add_region(&mut state, i);
    }
    for k in 0..shards {
        let id = k.to_string();
        match strategy.allocate(&state, None, &id, None).unwrap() {
            Allocation::Region(region) => state.add_shard(&region, &id).unwrap(),
            Allocation::Pending => panic!("pending"),
        }
    }
    state
}

#[path = "support/coordinator_instance.rs"]
mod coordinator_instance;
#[path = "support/region_instance.rs"]
mod region_instance;

#[path = "support/strategy_configs.rs"]
mod strategy_configs;

fn configs() -> Vec<StrategyConfig> {
    let mut all = strategy_configs::strategies();
    all.push(StrategyConfig::LeastLoad {
        absolute_limit: 20,
        relative_limit: 0.1,
        tie_break_by_age: false,
        phase1_from_most_loaded: false,
        band: 0.05,
        max_load_moved: None,
    });
    all
}

/// Reads the state once, untimed, as a running coordinator has by the time it is measured
/// (the state re-keys what the build changed on the first read).
fn settle(state: &AllocationState) {
    let mut s = LeastLoad::new(20, 0.1, 0.05, None).unwrap();
    black_box(s.allocate(state, None, "settle", None).unwrap());
    black_box(state.pekko_min(false));
    black_box(state.least_loaded_eligible());
}

#[inline(never)]
fn measured<T>(f: impl FnOnce() -> T) -> T {
    black_box(f())
}

fn run(case: &str) {
    let none = InProgress::new();
    let (regions, shards) = size();
    match case.split_once('/') {
        Some(("least-load", op)) => {
            let mut state = loaded();
            settle(&state);
            match op {
                "plan" => {
                    let mut s = LeastLoad::new(i32::MAX, 1.0, 0.05, None).unwrap();
                    let (moves, rounds, trace) = measured(|| plan(&mut s, &mut state));
                    let mut sum = std::collections::hash_map::DefaultHasher::new();
                    for (shard, region) in &trace {
                        (&**shard, &**region).hash(&mut sum);
                    }
                    let sum = sum.finish();
                    println!("{case}: {moves} moves in {rounds} rounds, checksum {sum:016x}");
                }
                "round" => {
                    let mut s = LeastLoad::new(20, 0.1, 0.05, None).unwrap();
                    let n = measured(|| s.rebalance(&state, &none, None).unwrap().len());
                    println!("{case}: {n} moves");
                }
                "allocate" => {
                    let mut s = LeastLoad::new(20, 0.1, 0.05, None).unwrap();
                    measured(|| {
                        for _ in 0..1000 {
                            black_box(s.allocate(&state, None, "new-shard", None).unwrap());
                        }
                    });
                    println!("{case}: 1000 allocations");
                }
                "place" => {
                    let mut s = LeastLoad::new(20, 0.1, 0.05, None).unwrap();
                    measured(|| {
                        for k in shards..shards + 1000 {
                            let id = format!("s{k:06}");
                            match s.allocate(&state, None, &id, None).unwrap() {
                                Allocation::Region(r) => state.add_shard(&r, &id).unwrap(),
                                Allocation::Pending => panic!("pending"),
                            }
                        }
                    });
                    println!("{case}: 1000 placed");
                }
                _ => panic!("unknown case {case}"),
            }
        }
        Some(("state", "move_shard")) => {
            let mut s = configs()[0].build().unwrap();
            let mut state = steady(&mut *s);
            let ids: Vec<String> = state.regions().map(|r| r.id().to_string()).collect();
            measured(|| {
                for k in 0..1000 {
                    let id = (k * 97).to_string();
                    state.remove_shard(&id).unwrap();
                    state.add_shard(&ids[(k * 7 + 1) % regions], &id).unwrap();
                }
            });
            println!("{case}: 1000 moves");
        }
        Some(("coordinator", "get-shard-home")) => {
            use coordinator_instance::{coordinator, from_region, large, next};
            use shardline_core::protocol::Command;
            let (regions, shards) = large();
            let mut co = coordinator(regions, shards);
            let mut i = 0;
            let mut inputs: Vec<_> = (0..1000)
                .map(|_| {
                    let k = next(&mut i, shards);
                    let shard = k.to_string();
                    from_region(
                        &format!("r{}", k % regions),
                        Command::GetShardHome {
                            shard: shard.into(),
                        },
                    )
                })
                .collect();
            let answered = measured(|| {
                let mut answered = 0;
                // drained, so that freeing the list itself falls outside
                for input in inputs.drain(..) {
                    co.handle(0, input).unwrap();
                    answered += usize::from(co.poll_output().is_some());
                }
                answered
            });
            assert_eq!(co.queued_outputs(), 0);
            println!("{case}: {answered} answered");
        }
        Some(("region", way @ ("route-local" | "route-remote"))) => {
            use coordinator_instance::{large, next};
            let (regions, shards) = large();
            let (mut region, local, remote) = region_instance::region(regions, shards);
            let entities = if way == "route-local" { local } else { remote };
            // Every entity known, as in the steady state the time bench measures.
            for e in &entities {
                region.route(0, e, Vec::new()).unwrap();
            }
            region.drain_outputs();
            let mut i = 0;
            let mut inputs: Vec<_> = (0..1000)
                .map(|_| (&entities[next(&mut i, entities.len())], vec![0u8; 16]))
                .collect();
            let routed = measured(|| {
                let mut routed = 0;
                for (entity, payload) in inputs.drain(..) {
                    region.route(0, entity, payload).unwrap();
                    routed += usize::from(region.poll_output().is_some());
                }
                routed
            });
            assert_eq!(region.queued_outputs(), 0);
            println!("{case}: {routed} routed");
        }
        Some((kind, op)) => {
            // least-load on unit loads and capacities, where it decides as least-shard
            let kind = kind.strip_suffix("-uniform").unwrap_or(kind);
            let config = configs()
                .into_iter()
                .find(|c| c.kind() == kind)
                .unwrap_or_else(|| panic!("unknown strategy {kind}"));
            let mut s = config.build().unwrap();
            let mut state = steady(&mut *s);
            settle(&state);
            match op {
                "allocate" => {
                    let fresh: Vec<String> =
                        (shards..shards + 1000).map(|k| k.to_string()).collect();
                    measured(|| {
                        for id in &fresh {
                            black_box(s.allocate(&state, None, id, None).unwrap());
                        }
                    });
                    println!("{case}: 1000 allocations");
                }
                "place" => {
                    measured(|| {
                        for k in shards..shards + 1000 {
                            let id = k.to_string();
                            match s.allocate(&state, None, &id, None).unwrap() {
                                Allocation::Region(r) => state.add_shard(&r, &id).unwrap(),
                                Allocation::Pending => panic!("pending"),
                            }
                        }
                    });
                    println!("{case}: 1000 placed");
                }
                "rebalance-steady" => {
                    s.rebalance(&state, &none, None).unwrap();
                    let n = measured(|| s.rebalance(&state, &none, None).unwrap().len());
                    println!("{case}: {n} moves");
                }
                "rebalance-join" => {
                    s.rebalance(&state, &none, None).unwrap();
                    add_region(&mut state, regions);
                    let n = measured(|| s.rebalance(&state, &none, None).unwrap().len());
                    println!("{case}: {n} moves");
                }
                _ => panic!("unknown case {case}"),
            }
        }
        None => panic!("unknown case {case}"),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; anything else names a case.
    let cases: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if cases.is_empty() {
        println!(
            "least-load/{{plan,round,allocate,place}} state/move_shard coordinator/get-shard-home \
             region/{{route-local,route-remote}}"
        );
        for c in configs() {
            let uniform = if c.kind() == "least-load" {
                "-uniform"
            } else {
                ""
            };
            println!(
                "{}{uniform}/{{allocate,place,rebalance-steady,rebalance-join}}",
                c.kind()
            );
        }
        return;
    }
    for c in &cases {
        run(c);
    }
}
