//! The routing region the region benchmarks measure, shared by `coordinator.rs` (times) and
//! `counts.rs` (instruction counts) so both see the same state.

use shardline_core::protocol::{
    Directive, Endpoint, Envelope, FencingToken, Message, ShardHome, Stamp,
};
use shardline_core::region::{Region, RegionConfig, RegionInput, ShardExtractor};

use super::coordinator_instance::node;

/// Distinct entities routed to, each way: enough that the shards they hit do not stay cached.
const ENTITIES: usize = 16_384;
/// The routing region hosts every shard whose number is a multiple of this: 1% of them.
const LOCAL_EVERY: usize = 100;

/// Region `r0` of `regions`, registered, told the home of every shard `0..shards`, hosting
/// every shard `k` with `k % LOCAL_EVERY == 0`; with entity ids whose shard is local and remote.
pub fn region(regions: usize, shards: usize) -> (Region, Vec<String>, Vec<String>) {
    let extractor = ShardExtractor::pekko(shards as i32).expect("extractor");
    let mut region =
        Region::new(RegionConfig::default(), "r0", &node(0), extractor).expect("region");
    region.start(0);
    let directive = |d: Directive| {
        RegionInput::Receive(Envelope {
            from: Endpoint::Coordinator,
            to: Endpoint::Region("r0".into()),
            message: Message::Directive(d),
        })
    };
    let token = FencingToken(1);
    region.handle(0, directive(Directive::RegisterAck { token }));
    let stamp = Stamp::new(1, 1);
    // `regions` is a multiple of LOCAL_EVERY, so no remote home is r0, this region.
    let homes: Vec<ShardHome> = (0..shards)
        .filter(|k| k % LOCAL_EVERY != 0)
        .map(|k| ShardHome {
            shard: k.to_string().into(),
            region: format!("r{}", k % regions).into(),
            stamp,
        })
        .collect();
    for batch in homes.chunks(500) {
        let homes = batch.to_vec();
        region.handle(0, directive(Directive::ShardHomes { token, homes }));
    }
    for k in (0..shards).step_by(LOCAL_EVERY) {
        let host = Directive::HostShard {
            shard: k.to_string().into(),
            stamp,
            entities: Vec::new(),
        };
        region.handle(0, directive(host));
    }
    region.drain_outputs();
    let (mut local, mut remote) = (Vec::new(), Vec::new());
    for e in 0.. {
        let entity = format!("entity-{e}");
        let shard: usize = region.shard_of(&entity).expect("shard").parse().expect("n");
        if shard.is_multiple_of(LOCAL_EVERY) {
            if local.len() < ENTITIES {
                local.push(entity);
            }
        } else if remote.len() < ENTITIES {
            remote.push(entity);
        }
        if local.len() == ENTITIES && remote.len() == ENTITIES {
            break;
        }
    }
    (region, local, remote)
}
