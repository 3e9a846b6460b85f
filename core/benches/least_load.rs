//! least-load at S = 100k shards over R = 1,000 regions: lognormal(0, 1) shard loads,
//! capacities 1, 2 or 4, shards dealt round robin (a count-balanced start, what least-shard
//! leaves).
//!
//! * `allocate`: placing one new shard (read-only);
//! * `rebalance-round`: one round with least-shard's default budget (20 moves);
//! * `plan`: rebalance and re-allocate, round after round with no move limit, until a round
//!   moves nothing (the coordinator's re-allocations included).
//!
//! `cargo bench -p shardline-core --bench least_load -- --quick`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use shardline_core::jvm::compare_utf16;
use shardline_core::model::Address;
use shardline_core::model::AllocationState;
use shardline_core::model::Amount;
use shardline_core::model::{ClusterView, Member};
use shardline_core::strategy::{Allocation, AllocationStrategy, InProgress, LeastLoad};

const REGIONS: usize = 1000;
const SHARDS: usize = 100_000;

/// SplitMix64, so the instance is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

fn instance() -> AllocationState {
    let mut rng = Rng(42);
    let mut state = AllocationState::new(ClusterView::new(
        Address::parse("pekko://sys@10.0.0.0:2552").unwrap(),
    ));
    for i in 0..REGIONS {
        let a = Address::parse(&format!("pekko://sys@10.0.{}.{}:2552", i / 250, i % 250)).unwrap();
        state.upsert_member(Member::new(a.clone()));
        let id = format!("r{i:04}");
        state.add_region(&id, a, false).unwrap();
        let cap = [1.0, 2.0, 4.0][(rng.next() % 3) as usize];
        state
            .set_region_capacity(&id, &Amount::Uniform(cap))
            .unwrap();
    }
    for s in 0..SHARDS {
        let id = format!("s{s:06}");
        let (a, b) = (rng.unit(), rng.unit());
        let load = ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()).exp();
        state.set_shard_load(&id, &Amount::Uniform(load)).unwrap();
        state
            .add_shard(&format!("r{:04}", s % REGIONS), &id)
            .unwrap();
    }
    // Read once, as a running coordinator's state has been by the time it plans: the first
    // read re-keys the indexes the build left marked.
    black_box(state.pekko_min(false));
    state
}

fn plan(strategy: &mut LeastLoad, state: &mut AllocationState) -> usize {
    let none = InProgress::new();
    let mut moves = 0;
    loop {
        let picked = strategy.rebalance(state, &none, None).unwrap();
        if picked.is_empty() {
            return moves;
        }
        moves += picked.len();
        for s in &picked {
            state.remove_shard(s).unwrap();
        }
        let mut order = picked.clone();
        order.sort_by(|a, b| compare_utf16(a, b));
        for s in order {
            match strategy.allocate(state, None, &s, None).unwrap() {
                Allocation::Region(r) => state.add_shard(&r, &s).unwrap(),
                Allocation::Pending => panic!("{s}: no region"),
            }
        }
    }
}

fn least_load(c: &mut Criterion) {
    let state = instance();
    let mut g = c.benchmark_group("least-load");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    let id = format!("R{REGIONS}_S{SHARDS}");

    let mut s = LeastLoad::new(20, 0.1, 0.05, None).unwrap();
    g.bench_function(format!("allocate/{id}"), |b| {
        b.iter(|| black_box(s.allocate(&state, None, "new-shard", None).unwrap()))
    });
    g.bench_function(format!("rebalance-round/{id}"), |b| {
        b.iter(|| {
            let mut s = LeastLoad::new(20, 0.1, 0.05, None).unwrap();
            black_box(s.rebalance(&state, &InProgress::new(), None).unwrap())
        })
    });
    let mut probe = instance();
    let moves = plan(
        &mut LeastLoad::new(i32::MAX, 1.0, 0.05, None).unwrap(),
        &mut probe,
    );
    println!("plan from the count-balanced start: {moves} moves");
    g.bench_function(format!("plan/{id}"), |b| {
        b.iter_batched(
            instance,
            |mut st| {
                let mut s = LeastLoad::new(i32::MAX, 1.0, 0.05, None).unwrap();
                let moves = plan(&mut s, &mut st);
                // returned, so freeing the 100k-shard map falls outside the measurement
                black_box((moves, st))
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, least_load);
criterion_main!(benches);
