//! The least-load benchmarks' instance, shared by `least_load.rs` (times) and `counts.rs`
//! (instruction counts) so both measure the same state: R = 1,000 regions of capacity 1, 2 or
//! 4, S = 100k shards dealt round robin with lognormal(0, 1) loads.

use shardline_core::model::{Address, AllocationState, Amount, ClusterView, Member};

const REGIONS: usize = 1000;
const SHARDS: usize = 100_000;

/// (regions, shards): R = 1,000 over S = 100k, or R = 10,000 over S = 1M with `BENCH_SCALE=1`
/// (issue 18's scale run).
pub fn size() -> (usize, usize) {
    if std::env::var("BENCH_SCALE").is_ok_and(|v| v == "1") {
        (10_000, 1_000_000)
    } else {
        (REGIONS, SHARDS)
    }
}

#[path = "splitmix.rs"]
mod splitmix;
use splitmix::Rng;

/// Built as a host builds it, at [`size`]; not read yet (the first read re-keys the indexes it
/// marked).
pub fn instance() -> AllocationState {
    let (regions, shards) = size();
    let mut rng = Rng(42);
    let mut state = AllocationState::new(ClusterView::new(
        Address::parse("pekko://sys@10.0.0.0:2552").unwrap(),
    ));
    for i in 0..regions {
        let a = Address::parse(&format!("pekko://sys@10.0.{}.{}:2552", i / 250, i % 250)).unwrap();
        state.upsert_member(Member::new(a.clone()));
        let id = format!("r{i:04}");
        state.add_region(&id, a, false).unwrap();
        let cap = [1.0, 2.0, 4.0][rng.below(3)];
        state
            .set_region_capacity(&id, &Amount::Uniform(cap))
            .unwrap();
    }
    for s in 0..shards {
        let id = format!("s{s:06}");
        let load = rng.lognormal(1.0);
        state.set_shard_load(&id, &Amount::Uniform(load)).unwrap();
        state
            .add_shard(&format!("r{:04}", s % regions), &id)
            .unwrap();
    }
    state
}
