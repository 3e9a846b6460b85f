//! Hot paths of the two state machines at scale.
//!
//! * `coordinator/get-shard-home/R100_S100000`: an active coordinator with 100 registered
//!   regions and 100k shards allocated (by least-shard, every `HostShard` acknowledged)
//!   answers `GetShardHome` for an allocated shard from a region: one op is
//!   `handle(Receive(..))`, taking the one `ShardHome` output, and dropping it. The envelopes
//!   are built outside the timed section (the host owns them as they come off the wire).
//!   Shards are asked for in a scattered order, so at 100k most lookups miss the CPU caches;
//!   `get-shard-home/R10_S1000` is the same on a state that stays in cache.
//! * `region/route-remote/S100000`: a region that knows the home of every one of 100k shards
//!   (Pekko extractor, 100 regions, 1% of the shards local) routes an entity message for a
//!   remote shard: one op is `route(entity, payload)` (entity -> shard included), taking the
//!   `Send` of the forward and dropping it; 16k distinct entities in a scattered order;
//! * `region/route-local/S100000`: the same for a shard hosted here (`Deliver`).
//!
//! * `coordinator/get-shard-home-pipeline/R10_S1000`: the same op through a
//!   `CoordinatorPipeline`, as the drivers of every language run it: the step, the `Send`
//!   taken as an operation with a ticket, and its completion. Beside `get-shard-home/R10_S1000`
//!   it is the pipeline's cost per output.
//!
//! * `coordinator/hash-map-lookup/S100000` and `S1000`: the physical limit the two above are
//!   held to (issue 18 allows 3x): one lookup of the same shard ids, asked in the same order,
//!   in a plain `HashMap<String, String>` (std's hasher) of the same size, the key
//!   dropped inside the timed section as the coordinator drops its input's.
//!
//! * `coordinator/snapshot/R100_S100000`: the persistent state written out as the snapshot a
//!   host stores;
//! * `coordinator/recover/R100_S100000`: a successor that holds the lease learns the members
//!   and loads that snapshot, becoming active (state, allocation map and strategy view
//!   rebuilt): failover's cost.
//!
//! `BENCH_SCALE=1` runs the same at S = 1M shards over R = 10,000 regions instead
//! (`get-shard-home/R10000_S1000000`, `hash-map-lookup/S1000000`, `route-*/S1000000`,
//! `snapshot`/`recover/R10000_S1000000`): issue 18's scale run, where each is held against the
//! default size to show nothing grows faster than the state.
//!
//! Throughput is in elements, so criterion also reports ops/s.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{Coordinator, CoordinatorInput, CoordinatorOutput};
use shardline_core::host::{Completion, CoordinatorPipeline};
use shardline_core::model::Address;
use shardline_core::model::Member;
use shardline_core::protocol::{Command, Directive, Endpoint, Envelope, Message, ShardHome};
use shardline_core::region::RegionOutput;
use shardline_core::replay::CoordinatorStep;

#[path = "support/coordinator_instance.rs"]
mod coordinator_instance;
use coordinator_instance::{
    config, coordinator, from_region, grant, large, least_shard, next, node,
};
#[path = "support/region_instance.rs"]
mod region_instance;
use region_instance::region;

fn scale() -> bool {
    std::env::var("BENCH_SCALE").is_ok_and(|v| v == "1")
}

fn get_shard_home(c: &mut Criterion) {
    let mut g = c.benchmark_group("coordinator");
    g.throughput(Throughput::Elements(1));
    let sizes = if scale() {
        vec![large()]
    } else {
        vec![large(), (10, 1000)]
    };
    for (regions, shards) in sizes {
        let mut co = coordinator(regions, shards);
        // Behaviour check outside the timed loop: exactly one ShardHome send, with the owner.
        let ask = Command::GetShardHome { shard: "42".into() };
        co.handle(0, from_region("r3", ask)).expect("ask");
        let out = co.drain_outputs();
        let owner = co
            .state()
            .home_of("42")
            .map(str::to_owned)
            .expect("allocated");
        assert!(
            matches!(out.as_slice(), [CoordinatorOutput::Send(Envelope {
                to: Endpoint::Region(to),
                message: Message::Directive(Directive::ShardHome(ShardHome { shard, region, .. })),
                ..
            })] if &**to == "r3" && shard == "42" && **region == *owner),
            "one ShardHome for 42 to r3, got {out:?}"
        );
        let mut i = 0usize;
        let id = BenchmarkId::new("get-shard-home", format!("R{regions}_S{shards}"));
        g.bench_function(id, |b| {
            b.iter_batched(
                || {
                    let k = next(&mut i, shards);
                    let shard = k.to_string();
                    from_region(
                        &format!("r{}", k % regions),
                        Command::GetShardHome {
                            shard: shard.into(),
                        },
                    )
                },
                |input| {
                    co.handle(0, input).expect("step");
                    black_box(co.poll_output());
                },
                BatchSize::NumIterations(4096),
            )
        });
    }
    let (regions, large_shards) = large();
    let sizes = if scale() {
        vec![large_shards]
    } else {
        vec![large_shards, 1000]
    };
    for shards in sizes {
        let map: HashMap<String, String> = (0..shards)
            .map(|k| (k.to_string(), format!("r{}", k % regions)))
            .collect();
        let mut i = 0usize;
        g.bench_function(
            BenchmarkId::new("hash-map-lookup", format!("S{shards}")),
            |b| {
                b.iter_batched(
                    || next(&mut i, shards).to_string(),
                    |key| {
                        black_box(map.get(key.as_str()));
                    },
                    BatchSize::NumIterations(4096),
                )
            },
        );
    }
    if !scale() {
        pipeline(&mut g);
    }
    g.finish();
}

fn pipeline(g: &mut BenchmarkGroup<WallTime>) {
    let (regions, shards) = (10, 1000);
    let mut p = CoordinatorPipeline::new(coordinator(regions, shards));
    let mut i = 0usize;
    let id = BenchmarkId::new("get-shard-home-pipeline", format!("R{regions}_S{shards}"));
    g.bench_function(id, |b| {
        b.iter_batched(
            || {
                let k = next(&mut i, shards);
                let shard = k.to_string();
                let ask = Command::GetShardHome {
                    shard: shard.into(),
                };
                CoordinatorStep::Input(from_region(&format!("r{}", k % regions), ask))
            },
            |step| {
                p.step(0, step).expect("step");
                let (ticket, op) = p.next_operation().expect("the ShardHome send");
                black_box(op);
                p.complete(0, ticket, Completion::Sent).expect("sent");
            },
            BatchSize::NumIterations(4096),
        )
    });
}

/// Writing the snapshot and recovering from it, at the large size.
fn failover(c: &mut Criterion) {
    let (regions, shards) = large();
    let co = coordinator(regions, shards);
    let size = format!("R{regions}_S{shards}");
    let mut g = c.benchmark_group("coordinator");
    g.bench_function(BenchmarkId::new("snapshot", &size), |b| {
        b.iter(|| black_box(co.state().snapshot()))
    });
    let stored = StoredState {
        snapshot: Some(co.state().snapshot()),
        events: Vec::new(),
    };
    // Behaviour check outside the timed loop: the successor knows every home.
    let successor = recover(regions, stored.clone());
    assert_eq!(successor.allocation().shard_count(), shards);
    assert_eq!(successor.state().home_of("42"), co.state().home_of("42"));
    g.bench_function(BenchmarkId::new("recover", &size), |b| {
        b.iter_batched(
            || stored.clone(),
            // returned, so freeing the state falls outside the measurement
            |stored| black_box(recover(regions, stored)),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// A coordinator that holds the lease and sees the `r` members, loaded from `stored`: active,
/// every region restored.
fn recover(r: usize, stored: StoredState) -> Coordinator {
    let mut co = Coordinator::new(config(), least_shard(), Address::parse(&node(0)).unwrap())
        .expect("coordinator");
    co.start(0);
    co.handle(0, CoordinatorInput::LeaseGranted(grant()))
        .expect("lease");
    for i in 0..r {
        let address = Address::parse(&node(i)).expect("address");
        co.handle(0, CoordinatorInput::Member(Box::new(Member::new(address))))
            .expect("member");
    }
    co.handle(0, CoordinatorInput::StateLoaded(Box::new(stored)))
        .expect("load");
    assert!(co.is_active(), "recovered");
    co
}

fn route(c: &mut Criterion) {
    let (regions, shards) = large();
    let (mut region, local, remote) = region(regions, shards);
    let size = format!("S{shards}");
    let mut g = c.benchmark_group("region");
    g.throughput(Throughput::Elements(1));
    for (name, entities) in [("route-remote", &remote), ("route-local", &local)] {
        // Behaviour check outside the timed loop: the expected single output.
        region.route(0, &entities[0], vec![1]).expect("routed");
        let out = region.drain_outputs();
        let ok = match out.as_slice() {
            [RegionOutput::Send(Envelope {
                message: Message::Forward(_),
                ..
            })] => name == "route-remote",
            [RegionOutput::Deliver { .. }] => name == "route-local",
            _ => false,
        };
        assert!(ok, "{name}: {out:?}");
        let mut i = 0usize;
        g.bench_function(BenchmarkId::new(name, &size), |b| {
            b.iter_batched(
                || (next(&mut i, entities.len()), vec![0u8; 16]),
                |(e, payload)| {
                    region.route(0, &entities[e], payload).expect("routed");
                    black_box(region.poll_output());
                },
                BatchSize::NumIterations(4096),
            )
        });
    }
    g.finish();
}

fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = criterion();
    targets = get_shard_home, route, failover
}
criterion_main!(benches);
