//! The step machines made from what a host's constructor passes: the node's address as text,
//! the settings as JSON (left out: the defaults), a region's shard extractor as its JSON
//! description. Errors name the option as the host wrote it (`options.selfAddress`).

use serde_json::Value;
use shardline_core::coordinator::{Coordinator, CoordinatorConfig};
use shardline_core::region::{ExtractorDoc, Region, RegionConfig, ShardExtractor};
use shardline_core::strategy::AllocationStrategy;

use crate::objects::address;
use crate::Failure;

/// A coordinator on the node `self_address`, deciding with `strategy`.
pub fn coordinator(
    strategy: Box<dyn AllocationStrategy>,
    self_address: &str,
    config: Option<&Value>,
) -> Result<Coordinator, Failure> {
    coordinator_named(strategy, (self_address, "options.selfAddress"), config)
}

/// As [`coordinator`], for a host whose own spelling of the address option is `.1`.
pub fn coordinator_named(
    strategy: Box<dyn AllocationStrategy>,
    self_address: (&str, &str),
    config: Option<&Value>,
) -> Result<Coordinator, Failure> {
    coordinator_then(self_address, config, || Ok(strategy))
}

/// [`coordinator_named`] for a host whose strategy object stays usable when construction is
/// refused: `strategy` is taken only once the address and settings are known to be good.
pub fn coordinator_then<E: From<Failure>>(
    (self_address, name): (&str, &str),
    config: Option<&Value>,
    strategy: impl FnOnce() -> Result<Box<dyn AllocationStrategy>, E>,
) -> Result<Coordinator, E> {
    let config = config
        .map_or(
            Ok(CoordinatorConfig::default()),
            CoordinatorConfig::from_json,
        )
        .map_err(Failure::from)?;
    let self_address = address(self_address, name).map_err(Failure::from)?;
    let strategy = strategy()?;
    Ok(Coordinator::new(config, strategy, self_address).map_err(Failure::from)?)
}

/// The region `id` (this incarnation's name) on the node `node`.
pub fn region(
    id: &str,
    node: &str,
    extractor: ShardExtractor,
    config: Option<&Value>,
) -> Result<Region, Failure> {
    region_named(id, (node, "options.node"), extractor, config)
}

/// As [`region`], for a host whose own spelling of the node option is `.1`.
pub fn region_named(
    id: &str,
    (node, name): (&str, &str),
    extractor: ShardExtractor,
    config: Option<&Value>,
) -> Result<Region, Failure> {
    let node = address(node, name)?;
    let config = config.map_or(Ok(RegionConfig::default()), RegionConfig::from_json)?;
    Ok(Region::new(config, id, node.as_str(), extractor)?)
}

/// `{kind: 'pekko', numberOfShards}` or `{kind: 'actor-ts', numShards}`, the option `what`.
pub fn extractor(doc: Value, what: &str) -> Result<ShardExtractor, Failure> {
    let doc: ExtractorDoc = serde_json::from_value(doc)
        .map_err(|e| Failure::invalid_argument(format!("{what}: {e}")))?;
    Ok(doc.build()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;
    use serde_json::json;
    use shardline_core::strategy::StrategyConfig;

    fn least_shard() -> Box<dyn AllocationStrategy> {
        let c: StrategyConfig = serde_json::from_value(json!({"kind": "least-shard"})).unwrap();
        c.build().unwrap()
    }

    #[test]
    fn options_left_out_take_the_defaults_and_bad_ones_are_named() {
        let c = coordinator(least_shard(), "pekko://sys@h:1", None).unwrap();
        assert_eq!(c.config(), &CoordinatorConfig::default());
        let e = coordinator(least_shard(), "nowhere", None).err().unwrap();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(e.message.contains("options.selfAddress"), "{}", e.message);
        let typo = json!({"typo": 1});
        let e = coordinator(least_shard(), "pekko://sys@h:1", Some(&typo)).err();
        assert_eq!(e.map(|e| e.status), Some(Status::InvalidArgument));

        let pekko = extractor(json!({"kind": "pekko", "numberOfShards": 10}), "x").unwrap();
        let r = region("r1", "pekko://sys@h:1", pekko, None).unwrap();
        assert_eq!(r.id(), "r1");
        let e = extractor(json!({"kind": "x"}), "options.extractor").unwrap_err();
        assert!(
            e.message.starts_with("options.extractor: "),
            "{}",
            e.message
        );
        let zero = extractor(json!({"kind": "pekko", "numberOfShards": 0}), "x");
        assert!(zero.is_err());
        let pekko = extractor(json!({"kind": "pekko", "numberOfShards": 10}), "x").unwrap();
        let e = region("r1", "nowhere", pekko, None).unwrap_err();
        assert!(e.message.contains("options.node"), "{}", e.message);
        let e = coordinator_named(least_shard(), ("nowhere", "self_address"), None).err();
        assert!(e.unwrap().message.starts_with("self_address: "));
        let pekko = extractor(json!({"kind": "pekko", "numberOfShards": 10}), "x").unwrap();
        let e = region_named("r1", ("nowhere", "node"), pekko, None).unwrap_err();
        assert!(e.message.starts_with("node: "), "{}", e.message);

        let mut taken = false;
        let zero = json!({"handoffTimeoutMs": 0});
        let e = coordinator_then(
            ("pekko://sys@h:1", "a"),
            Some(&zero),
            || -> Result<_, Failure> {
                taken = true;
                Ok(least_shard())
            },
        );
        assert_eq!(e.err().map(|e| e.status), Some(Status::InvalidArgument));
        assert!(
            !taken,
            "a refused construction leaves the strategy with its owner"
        );
    }
}
