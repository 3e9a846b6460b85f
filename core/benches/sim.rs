//! Simulator speed: whole `shardline_core::sim` runs (6 nodes, 60 shards, seed 1, least-shard,
//! the scenario's default faults) timed end to end. Criterion reports the time per run and,
//! through the throughput, simulation steps per wall second (a step is one event the
//! simulator processes: a message delivery, a timer, a scenario action; the count of a run is
//! fixed by its seed and comes from a run made before timing).
//!
//! Ids: `sim/<scenario>/N6_S60`. The simulator is behind the `sim` feature:
//! `cargo bench -p shardline-core --features sim --bench sim`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use shardline_core::sim::{run, Scenario, SimConfig};

const SCENARIOS: [Scenario; 3] = [Scenario::ScaleOut, Scenario::Crash, Scenario::Chaos];

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim");
    for scenario in SCENARIOS {
        let config = SimConfig::new(scenario, 1);
        let report = run(&config).expect("valid config");
        assert!(
            report.passed(),
            "{}: {:?}",
            scenario.name(),
            report.violations
        );
        eprintln!(
            "sim {}: {} steps, {} simulated s per run",
            scenario.name(),
            report.steps,
            report.simulated_ms / 1000
        );
        g.throughput(Throughput::Elements(report.steps));
        g.bench_function(BenchmarkId::new(scenario.name(), "N6_S60"), |b| {
            b.iter(|| black_box(run(&config).expect("valid config").steps))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .without_plots();
    targets = bench
}
criterion_main!(benches);
