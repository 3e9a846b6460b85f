//! The coordinator the coordinator benchmarks measure, shared by `coordinator.rs` (times),
//! `counts.rs` (instruction counts) and `memory.rs` (bytes per shard) so all three see the
//! same state.

use shardline_core::coordinator::{
    Coordinator, CoordinatorConfig, CoordinatorInput, CoordinatorOutput, LeaseGrant,
};
use shardline_core::model::{Address, Member};
use shardline_core::protocol::{Command, Directive, Endpoint, Envelope, FencingToken, Message};
use shardline_core::strategy::{AllocationStrategy, StrategyConfig};

/// (regions, shards) of the coordinator measured against the plain map: R = 100 over S = 100k,
/// or R = 10,000 over S = 1M with `BENCH_SCALE=1` (issue 18's scale run).
pub fn large() -> (usize, usize) {
    if std::env::var("BENCH_SCALE").is_ok_and(|v| v == "1") {
        (10_000, 1_000_000)
    } else {
        (100, 100_000)
    }
}

pub fn node(i: usize) -> String {
    format!(
        "pekko://sys@10.{}.{}.{}:2552",
        i >> 16,
        (i >> 8) & 255,
        i & 255
    )
}

pub fn from_region(region: &str, command: Command) -> CoordinatorInput {
    CoordinatorInput::Receive(Envelope {
        from: Endpoint::Region(region.into()),
        to: Endpoint::Coordinator,
        message: Message::Command(command),
    })
}

pub fn least_shard() -> Box<dyn AllocationStrategy> {
    StrategyConfig::from_json(&serde_json::json!({"kind": "least-shard"}))
        .and_then(|c| c.build())
        .expect("strategy")
}

/// Snapshots are outputs the host writes away, not state: none, so the setup is quick.
pub fn config() -> CoordinatorConfig {
    CoordinatorConfig {
        snapshot_after: 0,
        ..CoordinatorConfig::default()
    }
}

pub fn grant() -> LeaseGrant {
    LeaseGrant {
        token: FencingToken(1),
        valid_until_ms: 1 << 63,
    }
}

/// Feeds the `ShardStarted` acks for every `HostShard` in `out` back, as regions would.
fn ack_hosts(co: &mut Coordinator, out: Vec<CoordinatorOutput>) {
    for o in out {
        if let CoordinatorOutput::Send(Envelope {
            to: Endpoint::Region(region),
            message: Message::Directive(Directive::HostShard { shard, stamp, .. }),
            ..
        }) = o
        {
            let ack = from_region(&region, Command::ShardStarted { shard, stamp });
            co.handle(0, ack).expect("ack");
        }
    }
    co.drain_outputs();
}

/// An active coordinator with `r` regions (one per Up member) and shards `0..s` allocated
/// through `GetShardHome`, i.e. by the coordinator's own least-shard strategy.
pub fn coordinator(r: usize, s: usize) -> Coordinator {
    let self_address = Address::parse(&node(0)).expect("address");
    let mut co = Coordinator::new(config(), least_shard(), self_address).expect("coordinator");
    co.start(0);
    co.handle(0, CoordinatorInput::LeaseGranted(grant()))
        .expect("lease");
    co.handle(0, CoordinatorInput::StateLoaded(Box::default()))
        .expect("load");
    for i in 0..r {
        let address = Address::parse(&node(i)).expect("address");
        co.handle(0, CoordinatorInput::Member(Box::new(Member::new(address))))
            .expect("member");
        let register = Command::register(node(i));
        co.handle(0, from_region(&format!("r{i}"), register))
            .expect("register");
    }
    co.drain_outputs();
    for k in 0..s {
        let ask = Command::GetShardHome {
            shard: k.to_string().into(),
        };
        co.handle(0, from_region(&format!("r{}", k % r), ask))
            .expect("allocate");
        // acknowledged in small batches, so the pending-acknowledgement tables stay as small
        // as a running coordinator's (they keep their capacity, which `memory.rs` counts)
        if k % 256 == 255 {
            let out = co.drain_outputs();
            ack_hosts(&mut co, out);
        }
    }
    let out = co.drain_outputs();
    ack_hosts(&mut co, out);
    assert_eq!(co.state().shard_count(), s, "every shard allocated");
    co
}

/// A cheap deterministic walk over `0..n` (a full-period LCG step would do; this is enough to
/// defeat any locality between consecutive ops).
pub fn next(i: &mut usize, n: usize) -> usize {
    *i = (*i + 7919) % n;
    *i
}
