//! least-load at S = 100k shards over R = 1,000 regions: lognormal(0, 1) shard loads,
//! capacities 1, 2 or 4, shards dealt round robin (a count-balanced start, what least-shard
//! leaves).
//!
//! * `allocate`: placing one new shard (read-only);
//! * `rebalance-round`: one round with least-shard's default budget (20 moves);
//! * `plan`: rebalance and re-allocate, round after round with no move limit, until a round
//!   moves nothing (the coordinator's re-allocations included).
//!
//! `BENCH_SCALE=1` runs the same at S = 1M over R = 10,000 regions (issue 18's scale run).
//!
//! `cargo bench -p shardline-core --bench least_load -- --quick`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use shardline_core::jvm::sort_distinct_utf16;
use shardline_core::model::AllocationState;
use shardline_core::strategy::{Allocation, AllocationStrategy, InProgress, LeastLoad};

#[path = "support/least_load_instance.rs"]
mod least_load_instance;
use least_load_instance::size;

fn instance() -> AllocationState {
    let state = least_load_instance::instance();
    // Read once, as a running coordinator's state has been by the time it plans: the first
    // read re-keys the indexes the build left marked.
    black_box(state.pekko_min(false));
    state
}

fn plan(strategy: &mut LeastLoad, state: &mut AllocationState) -> usize {
    let none = InProgress::new();
    let mut moves = 0;
    loop {
        let mut picked = strategy.rebalance(state, &none, None).unwrap();
        if picked.is_empty() {
            return moves;
        }
        moves += picked.len();
        // String order, as the coordinator re-allocates after its hand-off; taken in that
        // order too, so that each id is read while the sort left it cached
        sort_distinct_utf16(&mut picked, |s| s);
        let taken = state.take_shards(picked).unwrap();
        for t in taken {
            match strategy.allocate(state, None, t.id(), None).unwrap() {
                Allocation::Region(r) => state.place_taken(&r, t).unwrap(),
                Allocation::Pending => panic!("{}: no region", t.id()),
            }
        }
    }
}

fn least_load(c: &mut Criterion) {
    let state = instance();
    let mut g = c.benchmark_group("least-load");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    let (regions, shards) = size();
    let id = format!("R{regions}_S{shards}");

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
