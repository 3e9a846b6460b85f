//! The Rust baseline of every binding's per-call overhead: the standard overhead workload
//! (BENCHMARKS.md, identical in C, Python, Node and the JVM), called directly on the core, so
//! that a binding's figure minus this one is what the binding adds.
//!
//! * `overhead/allocate`: least-shard (defaults) allocate of shard `"new"` on 10 Up members
//!   with one region each and shards `"0".."999"` placed by the strategy itself (read-only);
//! * `overhead/coordinator-step`: an active coordinator (one region `r1`, shard `"7"` on it)
//!   receives `GetShardHome{"7"}` from `r1` and its outputs (one `ShardHome` send) are drained.
//!   The envelope is cloned per call, as a binding builds one per call from its input.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::{
    Coordinator, CoordinatorConfig, CoordinatorInput, CoordinatorOutput,
};
use shardline_core::model::Address;
use shardline_core::model::AllocationState;
use shardline_core::model::{ClusterView, Member};
use shardline_core::protocol::{Command, Endpoint, Envelope, FencingToken, Message};
use shardline_core::strategy::{Allocation, StrategyConfig};

fn node(i: usize) -> String {
    format!("pekko://sys@10.0.0.{i}:2552")
}

fn least_shard() -> StrategyConfig {
    StrategyConfig::from_json(&serde_json::json!({"kind": "least-shard"})).expect("config")
}

fn allocate(c: &mut Criterion) {
    let mut strategy = least_shard().build().expect("strategy");
    let mut state = AllocationState::new(ClusterView::new(Address::parse(&node(0)).expect("addr")));
    for i in 0..10 {
        let a = Address::parse(&node(i)).expect("addr");
        state.upsert_member(Member::new(a.clone()));
        state
            .add_region(&format!("r{i}"), a, false)
            .expect("region");
    }
    for s in 0..1000 {
        let shard = s.to_string();
        match strategy
            .allocate(&state, None, &shard, None)
            .expect("allocate")
        {
            Allocation::Region(r) => state.add_shard(&r, &shard).expect("add"),
            Allocation::Pending => unreachable!("all regions are Up members"),
        }
    }
    let mut g = c.benchmark_group("overhead");
    g.bench_function("allocate", |b| {
        b.iter(|| black_box(strategy.allocate(&state, None, black_box("new"), None)))
    });
    g.finish();
}

fn envelope(command: Command) -> Envelope {
    Envelope {
        from: Endpoint::Region("r1".into()),
        to: Endpoint::Coordinator,
        message: Message::Command(command),
    }
}

fn coordinator_step(c: &mut Criterion) {
    let strategy = least_shard().build().expect("strategy");
    let self_address = Address::parse(&node(0)).expect("addr");
    let mut co =
        Coordinator::new(CoordinatorConfig::default(), strategy, self_address).expect("new");
    co.start(0);
    co.handle(
        0,
        CoordinatorInput::LeaseGranted(LeaseGrant {
            token: FencingToken(1),
            valid_until_ms: u64::MAX,
        }),
    )
    .expect("grant");
    co.handle(0, CoordinatorInput::StateLoaded(Box::default()))
        .expect("load");
    co.handle(
        0,
        CoordinatorInput::Member(Box::new(Member::new(
            Address::parse(&node(1)).expect("addr"),
        ))),
    )
    .expect("member");
    co.handle(
        0,
        CoordinatorInput::Receive(envelope(Command::register(node(1)))),
    )
    .expect("register");
    co.handle(
        0,
        CoordinatorInput::Receive(envelope(Command::GetShardHome { shard: "7".into() })),
    )
    .expect("home");
    co.drain_outputs();
    let ask = envelope(Command::GetShardHome { shard: "7".into() });
    // Behaviour check, outside the timed loop: exactly one Send per step.
    co.handle(0, CoordinatorInput::Receive(ask.clone()))
        .expect("step");
    let out = co.drain_outputs();
    assert!(
        matches!(out.as_slice(), [CoordinatorOutput::Send(_)]),
        "one ShardHome send per step, got {out:?}"
    );
    let mut g = c.benchmark_group("overhead");
    g.bench_function("coordinator-step", |b| {
        b.iter(|| {
            co.handle(0, CoordinatorInput::Receive(ask.clone()))
                .expect("step");
            let out: Vec<CoordinatorOutput> = co.drain_outputs();
            black_box(out)
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .without_plots();
    targets = allocate, coordinator_step
}
criterion_main!(benches);
