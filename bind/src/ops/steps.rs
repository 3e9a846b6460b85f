//! The operations that move a machine on besides its step inputs (starting it, running its
//! timers, a lost lease, the pipeline's host calls and their answers) and what a driver or the
//! pipeline reports beyond its machine's queries (`super::machines`): the next deadline as
//! the driver sees it (its lease renewal included), the notices since the last call, the
//! calls in flight. A step's input stays a binding's own typed call: it is the hot path.

use shardline_core::coordinator::Coordinator;
use shardline_core::host::Ticket;
use shardline_core::host::{Completion, CoordinatorDriver, CoordinatorPipeline, RegionDriver};
use shardline_core::region::Region;
use shardline_core::replay::{CoordinatorStep, RegionStep};

use super::{machines, reply, Args, Reply, Tree};
use crate::driver_host::Spelling;
use crate::pipeline_host;

/// The time argument every timed call takes first.
fn now(a: &Args<'_>) -> Result<u64, crate::Failure> {
    a.get(0, "nowMs")
}

/// `start(nowMs)`, `on_timeout(nowMs)`, and the coordinator's queries.
pub fn coordinator(c: &mut Coordinator, a: Args<'_>) -> Reply {
    match a.op() {
        "start" => reply(&CoordinatorStep::Start.apply(c, now(&a)?)?),
        "on_timeout" => reply(&CoordinatorStep::Timeout.apply(c, now(&a)?)?),
        _ => machines::coordinator(c, a),
    }
}

/// `start(nowMs)`, `on_timeout(nowMs)`, and the region's queries.
pub fn region(r: &mut Region, a: Args<'_>) -> Reply {
    match a.op() {
        "start" => reply(&RegionStep::Start.apply(r, now(&a)?)?),
        "on_timeout" => reply(&RegionStep::Timeout.apply(r, now(&a)?)?),
        _ => machines::region(r, a),
    }
}

/// `start`, `lease_lost`, `poll` (runs the timers that are due; when to call again),
/// `next_deadline`, `take_notices`, and the coordinator's queries.
pub fn coordinator_driver(d: &mut CoordinatorDriver, a: Args<'_>) -> Reply {
    match a.op() {
        "start" => reply(&d.start()?),
        "lease_lost" => reply(&d.lease_lost()?),
        "poll" => reply(&d.poll()?),
        "next_deadline" => reply(&d.next_deadline()),
        "take_notices" => reply(&d.take_notices()),
        _ => machines::coordinator(d.coordinator(), a),
    }
}

/// `start`, `poll`, `next_deadline`, `take_notices`, and the region's queries.
pub fn region_driver(d: &mut RegionDriver, a: Args<'_>) -> Reply {
    match a.op() {
        "start" => reply(&d.start()?),
        "poll" => reply(&d.poll()?),
        "next_deadline" => reply(&d.next_deadline()),
        "take_notices" => reply(&d.take_notices()),
        _ => machines::region(d.region(), a),
    }
}

/// `start(nowMs)`, `on_timeout(nowMs)`, `next_call(nowMs)` (`[ticket, role, method, args]`
/// with the method spelled as the host's language does, or null), `answer(nowMs, ticket,
/// value)`, `fail(nowMs, ticket)` (the call was rejected; the caller keeps the reason),
/// `in_flight` (calls handed out and not answered yet), `take_notices`, and the coordinator's
/// queries.
pub fn pipeline(p: &mut CoordinatorPipeline, spelling: Spelling, a: Args<'_>) -> Reply {
    let ticket = |a: &Args<'_>| a.get(1, "ticket").map(Ticket);
    match a.op() {
        "start" => reply(&p.step(now(&a)?, CoordinatorStep::Start)?),
        "on_timeout" => reply(&p.step(now(&a)?, CoordinatorStep::Timeout)?),
        "next_call" => Ok(match pipeline_host::next_call(p, now(&a)?)? {
            Some((ticket, call)) => Tree::Array(vec![
                ticket.0.into(),
                call.role.name.into(),
                spelling.spell(call.method).into(),
                Tree::Array(call.args),
            ]),
            None => Tree::Null,
        }),
        "answer" => {
            let value = a.opt(2, "value")?.unwrap_or(Tree::Null);
            let done = pipeline_host::answer(p, now(&a)?, ticket(&a)?, &value, spelling);
            reply(&done?)
        }
        "fail" => reply(&p.complete(now(&a)?, ticket(&a)?, Completion::Failed)?),
        "in_flight" => reply(&p.in_flight()),
        "take_notices" => reply(&p.take_notices()),
        _ => machines::coordinator(p.coordinator(), a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shardline_core::coordinator::CoordinatorConfig;
    use shardline_core::model::Address;
    use shardline_core::strategy::StrategyConfig;

    fn coordinator_at(address: &str) -> Coordinator {
        let config: StrategyConfig =
            serde_json::from_value(serde_json::json!({"kind": "least-shard"})).unwrap();
        let a = Address::parse(address).unwrap();
        Coordinator::new(CoordinatorConfig::default(), config.build().unwrap(), a).unwrap()
    }

    #[test]
    fn a_pipeline_answers_its_own_operations_and_its_coordinators() {
        let mut p = CoordinatorPipeline::new(coordinator_at("pekko://sys@h:1"));
        let mut call = |op: &str, values: &[Tree]| {
            pipeline(
                &mut p,
                Spelling::Camel,
                Args::new("CoordinatorPipeline", op, values),
            )
        };
        assert_eq!(call("in_flight", &[]).unwrap(), Tree::Integer(0.into()));
        assert_eq!(call("take_notices", &[]).unwrap(), Tree::Array(vec![]));
        assert_eq!(call("phase", &[]).unwrap(), Tree::Text("idle".into()));
        let e = call("lease_lost", &[]).unwrap_err();
        assert_eq!(
            e.message,
            "CoordinatorPipeline has no operation \"lease_lost\""
        );
        // Started, it asks the lease first, spelled as the host's language does.
        assert_eq!(call("next_call", &[0.into()]).unwrap(), Tree::Null);
        call("start", &[0.into()]).unwrap();
        let next = call("next_call", &[0.into()]).unwrap();
        let next = next.as_array().unwrap();
        assert_eq!(next[1], Tree::Text("lease".into()));
        assert_eq!(next[2], Tree::Text("acquire".into()));
        assert_eq!(call("in_flight", &[]).unwrap(), Tree::Integer(1.into()));
        let ticket = next[0].clone();
        call("fail", &[0.into(), ticket.clone()]).unwrap();
        assert_eq!(call("in_flight", &[]).unwrap(), Tree::Integer(0.into()));
        // Answered twice: the second names the ticket.
        let e = call("answer", &[0.into(), ticket, Tree::Null]).unwrap_err();
        assert!(e.message.contains("is not in flight"), "{}", e.message);
        let e = call("start", &[]).unwrap_err();
        assert_eq!(e.message, "CoordinatorPipeline.start: nowMs is required");
    }

    #[test]
    fn a_step_machine_starts_and_runs_its_timers_by_name() {
        let mut c = coordinator_at("pekko://sys@h:1");
        let mut call =
            |op: &str, values: &[Tree]| coordinator(&mut c, Args::new("Coordinator", op, values));
        assert_eq!(call("start", &[5.into()]).unwrap(), Tree::Null);
        assert_ne!(call("phase", &[]).unwrap(), Tree::Text("idle".into()));
        call("on_timeout", &[10.into()]).unwrap();
        let e = call("on_timeout", &[Tree::Text("soon".into())]).unwrap_err();
        assert!(
            e.message.starts_with("Coordinator.on_timeout: nowMs "),
            "{}",
            e.message
        );
        use shardline_core::region::{RegionConfig, ShardExtractor};
        let e = ShardExtractor::pekko(10).unwrap();
        let mut r = Region::new(RegionConfig::default(), "r1", "pekko://sys@h:1", e).unwrap();
        let mut call = |op: &str, values: &[Tree]| region(&mut r, Args::new("Region", op, values));
        call("start", &[0.into()]).unwrap();
        call("on_timeout", &[1.into()]).unwrap();
        assert_eq!(call("is_registered", &[]).unwrap(), Tree::Bool(false));
    }
}
