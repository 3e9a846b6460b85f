//! Cost of allocate and rebalance per strategy, and of the incremental state updates, over
//! R regions and S shards.
//!
//! Each (strategy, R, S) state is built once, by allocating shards `0..S` one by one with the
//! strategy itself (so it is the strategy's own steady state), then measured:
//!
//! * `allocate`: placing one new shard (read-only; the state does not change);
//! * `rebalance-steady`: a rebalance tick on the steady state (little or nothing to move);
//! * `rebalance-join`: the first rebalance tick after an empty region on a new node registered
//!   (the strategy has work to do; each iteration removes the region, lets the strategy see
//!   that, and registers it again untimed).
//!
//! `state` measures `add_shard` and `remove_shard` on a least-shard state of each size.
//!
//! Ids: group = strategy kind, function = `allocate` | `rebalance-steady` | `rebalance-join`,
//! parameter = `R{regions}_S{shards}` (e.g. `least-shard/allocate/R1000_S100000`).
//!
//! Sizes: R in {10, 100, 1000, 10000} x S in {1000, 100000}; `BENCH_FULL=1` adds S=1000000 for
//! every R; `BENCH_QUICK=1` keeps R in {10, 1000} x S in {1000, 100000} (R=1000 x S=100k is the
//! size compared with Pekko); `BENCH_SCALE=1` runs R=10000 x S=1000000 alone (issue 18's scale
//! run, held against R=1000 x S=100k). Every state is built by the strategy itself, one allocation at a
//! time, so it is exactly the strategy's steady state at any size (the build time is printed).
//! Defaults are short (10 samples, 1 s); `-- --quick` shortens further.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use shardline_core::model::Address;
use shardline_core::model::AllocationState;
use shardline_core::model::Version;
use shardline_core::model::{ClusterView, Member};
use shardline_core::strategy::{Allocation, AllocationStrategy, InProgress};

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn sizes() -> Vec<(usize, usize)> {
    let (regions, shards): (&[usize], &[usize]) = if env_flag("BENCH_SCALE") {
        (&[10_000], &[1_000_000])
    } else if env_flag("BENCH_QUICK") {
        (&[10, 1000], &[1000, 100_000])
    } else if env_flag("BENCH_FULL") {
        (&[10, 100, 1000, 10_000], &[1000, 100_000, 1_000_000])
    } else {
        (&[10, 100, 1000, 10_000], &[1000, 100_000])
    };
    let mut v = Vec::new();
    for &r in regions {
        for &s in shards {
            v.push((r, s));
        }
    }
    v
}

#[path = "support/strategy_configs.rs"]
mod strategy_configs;
use strategy_configs::strategies;

fn node(i: usize) -> Address {
    Address::parse(&format!(
        "pekko://sys@10.{}.{}.{}:2552",
        (i >> 16) & 255,
        (i >> 8) & 255,
        i & 255
    ))
    .expect("valid address")
}

fn add_region(state: &mut AllocationState, i: usize) -> String {
    let a = node(i);
    let mut m = Member::new(a.clone());
    m.app_version = Version::parse("1.0.0").expect("version");
    m.up_number = i as i32 + 1;
    state.upsert_member(m);
    let id = format!("r{i}");
    state.add_region(&id, a, false).expect("new region");
    id
}

/// R regions on Up members of one app version, with shards `0..S` placed by `strategy`.
fn steady_state(strategy: &mut dyn AllocationStrategy, r: usize, s: usize) -> AllocationState {
    let mut state = AllocationState::new(ClusterView::new(node(0)));
    for i in 0..r {
        add_region(&mut state, i);
    }
    for k in 0..s {
        let id = k.to_string();
        match strategy
            .allocate(&state, None, &id, None)
            .expect("allocate")
        {
            Allocation::Region(region) => state.add_shard(&region, &id).expect("add"),
            Allocation::Pending => panic!("pending"),
        }
    }
    state
}

fn bench_strategies(c: &mut Criterion) {
    for (r, s) in sizes() {
        let size = format!("R{r}_S{s}");
        // New shard ids (numeric, as actor-ts needs), cycled through by the allocate bench.
        let fresh: Vec<String> = (s..s + 1024).map(|k| k.to_string()).collect();
        for config in strategies() {
            let mut strategy = config.build().expect("valid config");
            let built = Instant::now();
            let mut state = steady_state(&mut *strategy, r, s);
            eprintln!(
                "{} {size}: steady state built in {:.1} s",
                config.kind(),
                built.elapsed().as_secs_f64()
            );
            let none = InProgress::new();
            let mut g = c.benchmark_group(config.kind());

            let mut i = 0usize;
            g.bench_function(BenchmarkId::new("allocate", &size), |b| {
                b.iter(|| {
                    i = (i + 1) & 1023;
                    black_box(
                        strategy
                            .allocate(&state, None, &fresh[i], None)
                            .expect("ok"),
                    )
                })
            });
            let steady = strategy.rebalance(&state, &none, None).expect("ok").len();
            g.bench_function(BenchmarkId::new("rebalance-steady", &size), |b| {
                b.iter(|| black_box(strategy.rebalance(&state, &none, None).expect("ok")))
            });

            let joiner = add_region(&mut state, r);
            let moved = strategy.rebalance(&state, &none, None).expect("ok").len();
            eprintln!(
                "{} {size}: rebalance moves {steady} in the steady state, {moved} after a join",
                config.kind()
            );
            // The first round after the join each time: strategies keep what they derived from
            // an unchanged map, so repeating the round would measure the steady case again.
            g.bench_function(BenchmarkId::new("rebalance-join", &size), |b| {
                b.iter_custom(|iters| {
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        state.remove_region(&joiner).expect("registered");
                        strategy.rebalance(&state, &none, None).expect("ok");
                        add_region(&mut state, r);
                        let at = Instant::now();
                        black_box(strategy.rebalance(&state, &none, None).expect("ok"));
                        spent += at.elapsed();
                    }
                    spent
                })
            });
            state.remove_region(&joiner).expect("registered");
            g.finish();
        }
    }
}

fn bench_state(c: &mut Criterion) {
    for (r, s) in sizes() {
        let size = format!("R{r}_S{s}");
        let mut strategy = strategies()[0].build().expect("valid config");
        let mut state = steady_state(&mut *strategy, r, s);
        let regions: Vec<String> = state.regions().map(|r| r.id().to_string()).collect();
        let mut g = c.benchmark_group("state");

        // Adds `iters` new shards (timed) across the regions, then removes them (untimed).
        g.bench_function(BenchmarkId::new("add_shard", &size), |b| {
            b.iter_custom(|iters| {
                let ids: Vec<String> = (0..iters).map(|k| format!("n{k}")).collect();
                let start = Instant::now();
                for (k, id) in ids.iter().enumerate() {
                    state
                        .add_shard(&regions[k % regions.len()], id)
                        .expect("new");
                }
                let t = start.elapsed();
                for id in &ids {
                    state.remove_shard(id).expect("added");
                }
                t
            })
        });
        // Adds `iters` new shards (untimed), then removes them (timed).
        g.bench_function(BenchmarkId::new("remove_shard", &size), |b| {
            b.iter_custom(|iters| {
                let ids: Vec<String> = (0..iters).map(|k| format!("n{k}")).collect();
                for (k, id) in ids.iter().enumerate() {
                    state
                        .add_shard(&regions[k % regions.len()], id)
                        .expect("new");
                }
                let start = Instant::now();
                for id in &ids {
                    black_box(state.remove_shard(id).expect("added"));
                }
                start.elapsed()
            })
        });
        // Moving an existing shard: remove it, then append it to another region.
        let mut k = 0usize;
        g.bench_function(BenchmarkId::new("move_shard", &size), |b| {
            b.iter(|| {
                k = (k + 1) % s;
                let id = k.to_string();
                let from = state.remove_shard(&id).expect("allocated");
                let to = &regions[(k * 7 + 1) % regions.len()];
                state.add_shard(to, &id).expect("removed");
                black_box(from)
            })
        });
        g.finish();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_strategies, bench_state
}
criterion_main!(benches);
