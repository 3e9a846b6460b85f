//! An asynchronous host's side of the coordinator pipeline
//! ([`shardline_core::host::CoordinatorPipeline`]): each operation handed out as the call
//! of a host object's method ([`HostCall`], the very call the synchronous adapters make), and
//! the host's answer, whenever it comes, read back by the same rules. A binding's async
//! driver (asyncio, Promises, CompletionStage, a C completion call) only makes the call and
//! awaits it.

use std::collections::BTreeMap;

use shardline_core::coordinator::Coordinator;
use shardline_core::host::{Completion, CoordinatorPipeline, Ticket};

use crate::driver_host::{HostCall, Spelling};
use crate::tree::Tree;
use crate::Failure;

/// A coordinator pipeline with the host call each ticket in flight was handed out as.
pub struct PipelineHost {
    pipeline: CoordinatorPipeline,
    /// Role and method of each call in flight (arguments dropped), to read its answer.
    calls: BTreeMap<Ticket, HostCall>,
}

impl PipelineHost {
    pub fn new(coordinator: Coordinator) -> PipelineHost {
        PipelineHost {
            pipeline: CoordinatorPipeline::new(coordinator),
            calls: BTreeMap::new(),
        }
    }

    pub fn pipeline(&self) -> &CoordinatorPipeline {
        &self.pipeline
    }

    pub fn pipeline_mut(&mut self) -> &mut CoordinatorPipeline {
        &mut self.pipeline
    }

    /// The next call to make, at `now_ms` (the time lease calls are made at), or `None`
    /// while there is none (see `CoordinatorPipeline::next_operation`).
    pub fn next_call(&mut self, now_ms: u64) -> Result<Option<(Ticket, HostCall)>, Failure> {
        let Some((ticket, op)) = self.pipeline.next_operation() else {
            return Ok(None);
        };
        match HostCall::of(&op, now_ms) {
            Ok(call) => {
                let header = HostCall {
                    args: Vec::new(),
                    ..call.clone()
                };
                self.calls.insert(ticket, header);
                Ok(Some((ticket, call)))
            }
            Err(e) => {
                // Never left in flight: the operation fails at once.
                self.pipeline.complete(now_ms, ticket, Completion::Failed)?;
                Err(e.into())
            }
        }
    }

    /// The host's answer to call `ticket`, at `now_ms`. An answer that does not fit completes
    /// the call as failed (the coordinator carries on as for any failed call) and is
    /// reported as CALLBACK_FAILED naming the method and what came.
    pub fn answer(
        &mut self,
        now_ms: u64,
        ticket: Ticket,
        answer: &Tree,
        spelling: Spelling,
    ) -> Result<(), Failure> {
        let (call, pending) = self.in_flight(ticket)?;
        let read = call.completion(pending, answer, spelling);
        let done = read.clone().unwrap_or(Completion::Failed);
        self.calls.remove(&ticket);
        self.pipeline.complete(now_ms, ticket, done)?;
        read.map(drop)
    }

    /// Call `ticket` failed (the host keeps and reports its own error), at `now_ms`.
    pub fn fail(&mut self, now_ms: u64, ticket: Ticket) -> Result<(), Failure> {
        self.in_flight(ticket)?;
        self.calls.remove(&ticket);
        Ok(self.pipeline.complete(now_ms, ticket, Completion::Failed)?)
    }

    fn in_flight(
        &self,
        ticket: Ticket,
    ) -> Result<(&HostCall, shardline_core::host::Pending), Failure> {
        match (self.calls.get(&ticket), self.pipeline.pending(ticket)) {
            (Some(call), Some(pending)) => Ok((call, pending)),
            _ => Err(Failure::invalid_argument(format!(
                "{ticket} is not in flight (never handed out, or answered already)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;
    use shardline_core::coordinator::CoordinatorConfig;
    use shardline_core::model::{Address, Member};
    use shardline_core::replay::CoordinatorStep;
    use shardline_core::strategy::StrategyConfig;

    const NODE: &str = "pekko://sys@h1:1";

    fn host() -> PipelineHost {
        let strategy: StrategyConfig =
            serde_json::from_value(serde_json::json!({"kind": "least-shard"})).unwrap();
        let a = Address::parse(NODE).unwrap();
        let c = Coordinator::new(CoordinatorConfig::default(), strategy.build().unwrap(), a);
        let mut h = PipelineHost::new(c.unwrap());
        let member = Member::new(Address::parse(NODE).unwrap());
        let p = h.pipeline_mut();
        p.step(0, CoordinatorStep::Start).unwrap();
        let input = shardline_core::coordinator::CoordinatorInput::Member(member);
        p.step(0, CoordinatorStep::Input(input)).unwrap();
        h
    }

    #[test]
    fn a_lease_answer_arriving_later_makes_the_coordinator_load_its_state() {
        let mut h = host();
        let (acquire, call) = h.next_call(5).unwrap().unwrap();
        assert_eq!((call.role.name, call.method), ("lease", "acquire"));
        assert_eq!(call.args, vec![Tree::Integer(5.into())]);
        assert!(h.next_call(5).unwrap().is_none(), "it waits for the lease");
        let grant = Tree::Array(vec![Tree::Integer(1.into()), Tree::Integer(60_000.into())]);
        h.answer(9, acquire, &grant, Spelling::Snake).unwrap();
        let (_, call) = h.next_call(9).unwrap().unwrap();
        assert_eq!((call.role.name, call.method), ("store", "load"));
    }

    #[test]
    fn a_bad_answer_fails_the_call_and_says_why() {
        let mut h = host();
        let (acquire, _) = h.next_call(5).unwrap().unwrap();
        let e = h
            .answer(6, acquire, &Tree::Text("granted".into()), Spelling::Camel)
            .unwrap_err();
        assert_eq!(e.status, Status::CallbackFailed);
        assert!(
            e.message
                .starts_with("the lease's acquire returned \"granted\""),
            "{}",
            e.message
        );
        assert_eq!(h.pipeline().in_flight(), 0, "completed as failed (denied)");
        let e = h.fail(6, acquire).unwrap_err();
        assert!(e.message.contains("not in flight"), "{}", e.message);
    }
}
