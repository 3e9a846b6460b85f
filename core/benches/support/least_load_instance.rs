//! The least-load benchmarks' instance, shared by `least_load.rs` (times) and `counts.rs`
//! (instruction counts) so both measure the same state: R = 1,000 regions of capacity 1, 2 or
//! 4, S = 100k shards dealt round robin with lognormal(0, 1) loads.

use shardline_core::model::{Address, AllocationState, Amount, ClusterView, Member};

pub const REGIONS: usize = 1000;
pub const SHARDS: usize = 100_000;

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

/// Built as a host builds it; not read yet (the first read re-keys the indexes it marked).
pub fn instance() -> AllocationState {
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
    state
}
