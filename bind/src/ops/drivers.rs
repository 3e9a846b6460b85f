//! The operations of the callback drivers and the event-loop pipeline beyond their machine's
//! queries (`super::machines`): starting, a lost lease, the next deadline as the driver sees
//! it (its lease renewal included), the notices since the last call, the calls in flight.

use shardline_core::host::{CoordinatorDriver, CoordinatorPipeline, RegionDriver};

use super::{machines, reply, Args, Reply};

/// `start`, `lease_lost`, `next_deadline`, `take_notices`, and the coordinator's queries.
pub fn coordinator(d: &mut CoordinatorDriver, a: Args<'_>) -> Reply {
    match a.op() {
        "start" => reply(&d.start()?),
        "lease_lost" => reply(&d.lease_lost()?),
        "next_deadline" => reply(&d.next_deadline()),
        "take_notices" => reply(&d.take_notices()),
        _ => machines::coordinator(d.coordinator(), a),
    }
}

/// `start`, `next_deadline`, `take_notices`, and the region's queries.
pub fn region(d: &mut RegionDriver, a: Args<'_>) -> Reply {
    match a.op() {
        "start" => reply(&d.start()?),
        "next_deadline" => reply(&d.next_deadline()),
        "take_notices" => reply(&d.take_notices()),
        _ => machines::region(d.region(), a),
    }
}

/// `in_flight` (calls handed out and not answered yet), `take_notices`, and the coordinator's
/// queries.
pub fn pipeline(p: &mut CoordinatorPipeline, a: Args<'_>) -> Reply {
    match a.op() {
        "in_flight" => reply(&p.in_flight()),
        "take_notices" => reply(&p.take_notices()),
        _ => machines::coordinator(p.coordinator(), a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Tree;
    use shardline_core::coordinator::{Coordinator, CoordinatorConfig};
    use shardline_core::model::Address;
    use shardline_core::strategy::StrategyConfig;

    #[test]
    fn a_pipeline_answers_its_own_operations_and_its_coordinators() {
        let config: StrategyConfig =
            serde_json::from_value(serde_json::json!({"kind": "least-shard"})).unwrap();
        let a = Address::parse("pekko://sys@h:1").unwrap();
        let c = Coordinator::new(CoordinatorConfig::default(), config.build().unwrap(), a);
        let mut p = CoordinatorPipeline::new(c.unwrap());
        let mut call = |op: &str| pipeline(&mut p, Args::new("CoordinatorPipeline", op, &[]));
        assert_eq!(call("in_flight").unwrap(), Tree::Integer(0.into()));
        assert_eq!(call("take_notices").unwrap(), Tree::Array(vec![]));
        assert_eq!(call("phase").unwrap(), Tree::Text("idle".into()));
        let e = call("lease_lost").unwrap_err();
        assert_eq!(
            e.message,
            "CoordinatorPipeline has no operation \"lease_lost\""
        );
    }
}
