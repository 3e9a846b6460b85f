//! The queries of the coordinator and region state machines, answered the same for the step
//! machine and for the driver running it (a binding passes `driver.coordinator()` /
//! `driver.region()`).

use shardline_core::coordinator::{phase_name, Coordinator};
use shardline_core::region::Region;

use super::{reply, Args, Reply};
use crate::objects::RegionAssignment;

/// `phase`, `is_active`, `token`, `config`, `next_deadline`, `handoffs_in_progress`,
/// `is_alive(region)`, `home_of(shard)`, `shards_of(region)`, `unallocated`, `allocations`
/// (`[{region, node, shards}]` in registration order), `snapshot`, `metrics`.
pub fn coordinator(c: &Coordinator, a: Args<'_>) -> Reply {
    let state = c.state();
    match a.op() {
        "phase" => reply(phase_name(c.phase())),
        "is_active" => reply(&c.is_active()),
        "token" => reply(&c.token().map(|t| t.0)),
        "config" => reply(c.config()),
        "next_deadline" => reply(&c.next_deadline()),
        "handoffs_in_progress" => reply(&c.handoffs_in_progress()),
        "is_alive" => reply(&c.is_alive(&a.get::<String>(0, "region")?)),
        "home_of" => reply(&state.home_of(&a.get::<String>(0, "shard")?)),
        "shards_of" => reply(
            &state
                .shards_of(&a.get::<String>(0, "region")?)
                .collect::<Vec<_>>(),
        ),
        "unallocated" => reply(&state.unallocated().collect::<Vec<_>>()),
        "allocations" => reply(&RegionAssignment::all(state)),
        "snapshot" => reply(&state.snapshot()),
        "metrics" => reply(&c.metrics()),
        _ => Err(a.unknown()),
    }
}

/// `id`, `is_registered`, `next_deadline`, `local_shards`, `running_shards`, `home_of(shard)`,
/// `buffered`, `buffered_for(shard)`, `latest_stamp(shard)` (`{token, version}` or null),
/// `shard_of(entity)`, `metrics`.
pub fn region(r: &Region, a: Args<'_>) -> Reply {
    match a.op() {
        "id" => reply(r.id()),
        "is_registered" => reply(&r.is_registered()),
        "next_deadline" => reply(&r.next_deadline()),
        "local_shards" => reply(&r.local_shards()),
        "running_shards" => reply(&r.running_shards()),
        "home_of" => reply(&r.home_of(&a.get::<String>(0, "shard")?)),
        "buffered" => reply(&r.buffered()),
        "buffered_for" => reply(&r.buffered_for(&a.get::<String>(0, "shard")?)),
        "latest_stamp" => reply(&r.latest_stamp(&a.get::<String>(0, "shard")?)),
        "shard_of" => reply(&r.shard_of(&a.get::<String>(0, "entity")?)?),
        "metrics" => reply(&r.metrics()),
        _ => Err(a.unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Tree;
    use crate::Status;
    use shardline_core::coordinator::CoordinatorConfig;
    use shardline_core::model::Address;
    use shardline_core::strategy::StrategyConfig;

    fn coordinator_ready() -> Coordinator {
        let config: StrategyConfig =
            serde_json::from_value(serde_json::json!({"kind": "least-shard"})).unwrap();
        let strategy = config.build().unwrap();
        let a = Address::parse("pekko://sys@h:1").unwrap();
        Coordinator::new(CoordinatorConfig::default(), strategy, a).unwrap()
    }

    fn call(c: &Coordinator, op: &str, values: &[Tree]) -> Reply {
        coordinator(c, Args::new("Coordinator", op, values))
    }

    #[test]
    fn coordinator_queries_answer_plain_values() {
        let c = coordinator_ready();
        assert_eq!(call(&c, "phase", &[]).unwrap(), Tree::Text("idle".into()));
        assert_eq!(call(&c, "token", &[]).unwrap(), Tree::Null);
        assert_eq!(call(&c, "is_active", &[]).unwrap(), Tree::Bool(false));
        let home = call(&c, "home_of", &[Tree::Text("7".into())]).unwrap();
        assert_eq!(home, Tree::Null);
        assert_eq!(call(&c, "allocations", &[]).unwrap(), Tree::Array(vec![]));
        let metrics = call(&c, "metrics", &[]).unwrap();
        assert!(!metrics.as_array().unwrap().is_empty());
    }

    #[test]
    fn bad_calls_name_what_is_wrong() {
        let c = coordinator_ready();
        let e = call(&c, "home_of", &[]).unwrap_err();
        assert_eq!(e.status, Status::NullPointer);
        assert_eq!(e.message, "Coordinator.home_of: shard is required");
        let e = call(&c, "home_of", &[Tree::Integer(7.into())]).unwrap_err();
        assert!(
            e.message.starts_with("Coordinator.home_of: shard "),
            "{}",
            e.message
        );
        let e = call(&c, "rebalance_now", &[]).unwrap_err();
        assert_eq!(e.message, "Coordinator has no operation \"rebalance_now\"");
    }

    fn region_of(shards: i32) -> Region {
        use shardline_core::region::{RegionConfig, ShardExtractor};
        let e = ShardExtractor::pekko(shards).unwrap();
        Region::new(RegionConfig::default(), "r1", "pekko://sys@h:1", e).unwrap()
    }

    #[test]
    fn region_queries_answer_plain_values() {
        let r = region_of(10);
        let call = |op: &str, values: &[Tree]| region(&r, Args::new("Region", op, values));
        let shard = Tree::Text("3".into());
        assert_eq!(call("id", &[]).unwrap(), Tree::Text("r1".into()));
        assert_eq!(call("is_registered", &[]).unwrap(), Tree::Bool(false));
        assert_eq!(call("buffered", &[]).unwrap(), Tree::Integer(0.into()));
        assert_eq!(call("local_shards", &[]).unwrap(), Tree::Array(vec![]));
        assert_eq!(
            call("home_of", std::slice::from_ref(&shard)).unwrap(),
            Tree::Null
        );
        assert_eq!(call("latest_stamp", &[shard]).unwrap(), Tree::Null);
        let expected = r.shard_of("entity-1").unwrap();
        let got = call("shard_of", &[Tree::Text("entity-1".into())]).unwrap();
        assert_eq!(got, Tree::Text(expected.into()));
        let e = call("buffered_for", &[]).unwrap_err();
        assert_eq!(e.message, "Region.buffered_for: shard is required");
        let e = call("route", &[]).unwrap_err();
        assert_eq!(e.message, "Region has no operation \"route\"");
    }
}
