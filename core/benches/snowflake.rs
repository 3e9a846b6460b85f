//! Cost of one Snowflake id on the hot path, against the layout's limit of 4096 ids per
//! millisecond per worker (one id per ~244 ns would be needed to reach it).
//!
//! * `next/same-ms`: ids within one millisecond, the clock advancing when the sequence runs
//!   out (the sequence path);
//! * `next/fenced`: the same through a fenced generator with a budget (the reserved-id path);
//! * `next/new-ms`: every call on a new millisecond (the timestamp path).
//!
//! Criterion reports time per id; throughput is reported as elements (ids) per second.
//! Ids: `snowflake/next/<case>`.
//!
//! No lock on this path: `Snowflake::next` takes `&mut self` and shares nothing, so each
//! thread owns its generator (with its own worker id) and what is timed is all there is.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use shardline_core::workerid::snowflake::{Layout, Next, Snowflake, DEFAULT_EPOCH_MS};

const T0: u64 = DEFAULT_EPOCH_MS + 1_000_000;

fn drive(g: &mut Snowflake, now: &mut u64) -> u64 {
    loop {
        match g.next(*now) {
            Ok(Next::Id(id)) => return id,
            Ok(Next::WaitUntil(at)) => *now = at,
            Err(e) => panic!("{e}"),
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("snowflake");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(2));

    let mut g = Snowflake::new(Layout::default(), 5).unwrap();
    let mut now = T0;
    group.bench_function(BenchmarkId::new("next", "same-ms"), |b| {
        b.iter(|| black_box(drive(&mut g, &mut now)))
    });

    let mut f = Snowflake::fenced(Layout::default(), 5, Some(T0 - 1)).unwrap();
    f.extend_budget(u64::MAX);
    let mut now = T0;
    group.bench_function(BenchmarkId::new("next", "fenced"), |b| {
        b.iter(|| black_box(drive(&mut f, &mut now)))
    });

    let mut g = Snowflake::new(Layout::default(), 5).unwrap();
    let mut now = T0;
    group.bench_function(BenchmarkId::new("next", "new-ms"), |b| {
        b.iter(|| {
            now += 1;
            black_box(drive(&mut g, &mut now))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .without_plots();
    targets = bench
}
criterion_main!(benches);
