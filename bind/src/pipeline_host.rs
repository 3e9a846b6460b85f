//! An asynchronous host's side of the coordinator pipeline
//! ([`shardline_core::host::CoordinatorPipeline`]): each operation handed out as the call
//! of a host object's method ([`HostCall`], the very call the synchronous adapters make), and
//! the host's answer, whenever it comes, read back by the same rules
//! ([`crate::driver_host::completion`]). A binding's async driver (asyncio, Promises) only
//! makes the call and awaits it; a call that fails completes as `Completion::Failed`.

use shardline_core::host::{Completion, CoordinatorPipeline, Ticket};

use crate::driver_host::{completion, HostCall, Spelling};
use crate::tree::Tree;
use crate::Failure;

/// The next call to make, at `now_ms` (the time lease calls are made at), or `None` while
/// there is none (see `CoordinatorPipeline::next_operation`).
pub fn next_call(
    pipeline: &mut CoordinatorPipeline,
    now_ms: u64,
) -> Result<Option<(Ticket, HostCall)>, Failure> {
    let Some((ticket, op)) = pipeline.next_operation() else {
        return Ok(None);
    };
    match HostCall::of(&op, now_ms) {
        Ok(call) => Ok(Some((ticket, call))),
        Err(e) => {
            // Never left in flight: the operation fails at once.
            pipeline.complete(now_ms, ticket, Completion::Failed)?;
            Err(e.into())
        }
    }
}

/// The host's answer to call `ticket`, at `now_ms`. An answer that does not fit completes the
/// call as failed (the coordinator carries on as for any failed call) and is reported as
/// CALLBACK_FAILED naming the method and what came.
pub fn answer(
    pipeline: &mut CoordinatorPipeline,
    now_ms: u64,
    ticket: Ticket,
    answer: &Tree,
    spelling: Spelling,
) -> Result<(), Failure> {
    let pending = pipeline.pending(ticket).ok_or_else(|| {
        Failure::invalid_argument(format!(
            "{ticket} is not in flight (never handed out, or answered already)"
        ))
    })?;
    let read = completion(pending, answer, spelling);
    let done = read.clone().unwrap_or(Completion::Failed);
    pipeline.complete(now_ms, ticket, done)?;
    read.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;
    use shardline_core::coordinator::{Coordinator, CoordinatorConfig};
    use shardline_core::model::{Address, Member};
    use shardline_core::replay::CoordinatorStep;
    use shardline_core::strategy::StrategyConfig;

    const NODE: &str = "pekko://sys@h1:1";

    fn pipeline() -> CoordinatorPipeline {
        let strategy: StrategyConfig =
            serde_json::from_value(serde_json::json!({"kind": "least-shard"})).unwrap();
        let a = Address::parse(NODE).unwrap();
        let c = Coordinator::new(CoordinatorConfig::default(), strategy.build().unwrap(), a);
        let mut p = CoordinatorPipeline::new(c.unwrap());
        let member = Member::new(Address::parse(NODE).unwrap());
        p.step(0, CoordinatorStep::Start).unwrap();
        let input = shardline_core::coordinator::CoordinatorInput::Member(Box::new(member));
        p.step(0, CoordinatorStep::Input(input)).unwrap();
        p
    }

    #[test]
    fn a_lease_answer_arriving_later_makes_the_coordinator_load_its_state() {
        let mut p = pipeline();
        let (acquire, call) = next_call(&mut p, 5).unwrap().unwrap();
        assert_eq!((call.role.name, call.method), ("lease", "acquire"));
        assert_eq!(call.args, vec![Tree::Integer(5.into())]);
        assert!(
            next_call(&mut p, 5).unwrap().is_none(),
            "it waits for the lease"
        );
        let grant = Tree::Array(vec![Tree::Integer(1.into()), Tree::Integer(60_000.into())]);
        answer(&mut p, 9, acquire, &grant, Spelling::Snake).unwrap();
        let (_, call) = next_call(&mut p, 9).unwrap().unwrap();
        assert_eq!((call.role.name, call.method), ("store", "load"));
    }

    #[test]
    fn a_bad_answer_fails_the_call_and_says_why() {
        let mut p = pipeline();
        let (acquire, _) = next_call(&mut p, 5).unwrap().unwrap();
        let e = answer(
            &mut p,
            6,
            acquire,
            &Tree::Text("granted".into()),
            Spelling::Camel,
        )
        .unwrap_err();
        assert_eq!(e.status, Status::CallbackFailed);
        assert!(
            e.message
                .starts_with("the lease's acquire returned \"granted\""),
            "{}",
            e.message
        );
        assert_eq!(p.in_flight(), 0, "completed as failed (denied)");
        let e = answer(&mut p, 6, acquire, &Tree::Null, Spelling::Snake).unwrap_err();
        assert!(e.message.contains("not in flight"), "{}", e.message);
    }
}
