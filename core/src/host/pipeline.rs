//! The coordinator's outputs as operations a host carries out and completes, at once or
//! later and several at a time: the one place that decides what each answer means to the
//! coordinator, and that nothing queued after a store write is handed out before that write
//! is acknowledged.
//!
//! The coordinator's rule is "a `Persist` is durable before any later output". A host that
//! carries out outputs one by one and waits for each keeps it by construction; a host with an
//! asynchronous store would have to keep it by care. Here it is kept by the pipeline: while a
//! write is in flight, [`CoordinatorPipeline::next_operation`] hands out nothing more, so sends,
//! lease calls and later writes wait, while the operations handed out before the write may
//! still be running. A failed or fenced write drops what was held, as the coordinator
//! requires, before the pipeline tells it.
//!
//! The synchronous [`super::CoordinatorDriver`] is this pipeline with every operation
//! completed as soon as it is handed out; asynchronous drivers complete them when their
//! futures, promises or completion stages finish.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::coordinator::{
    Coordinator, CoordinatorInput, CoordinatorNotice, CoordinatorOutput, LeaseGrant, LeaseRequest,
    Record, Snapshot, StoredState,
};
use crate::host::{CoordinatorObserver, WriteOutcome};
use crate::protocol::{Envelope, FencingToken};
use crate::replay::CoordinatorStep;
use crate::{Error, Result};

/// One thing the host must do for the coordinator, then [`CoordinatorPipeline::complete`].
/// JSON: `{"type": "send", "envelope"}`, `{"type": "append", "token", "record"}`, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Operation {
    /// Complete with `sent` (or `failed`; delivery may be lossy anyway).
    Send { envelope: Envelope },
    /// Append to the store under `token`: `written`, `fenced` or `failed`.
    Append { token: FencingToken, record: Record },
    /// Replace the stored snapshot under `token`: `written`, `fenced` or `failed`.
    SaveSnapshot {
        token: FencingToken,
        // Boxed as in `CoordinatorOutput`: rare, and inline it would size every operation.
        snapshot: Box<Snapshot>,
    },
    /// Load the stored state, fencing writers below `token`: `loaded`, `fenced` or `failed`.
    Load { token: FencingToken },
    /// `granted`, `denied` or `failed`.
    Acquire,
    /// `renewed`, `lost` or `failed`.
    Renew { token: FencingToken },
    /// `released` or `failed`.
    Release { token: FencingToken },
}

/// How an operation ended. `failed` means the host's call itself failed (the host keeps and
/// reports its error); every other form is an answer to the operation named beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Completion {
    Sent,
    Written,
    /// A writer with a larger token exists (`highest`, when the store says): for a write or
    /// a load.
    Fenced {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        highest: Option<FencingToken>,
    },
    Loaded {
        state: StoredState,
    },
    Granted(LeaseGrant),
    /// Another owner holds the lease.
    Denied,
    #[serde(rename_all = "camelCase")]
    Renewed {
        valid_until_ms: u64,
    },
    /// The lease is gone.
    Lost,
    Released,
    Failed,
}

impl From<WriteOutcome> for Completion {
    fn from(outcome: WriteOutcome) -> Completion {
        match outcome {
            WriteOutcome::Written => Completion::Written,
            WriteOutcome::Fenced { highest } => Completion::Fenced {
                highest: Some(highest),
            },
        }
    }
}

impl Completion {
    /// A [`crate::host::Store::load`] answer.
    pub fn loaded(state: Option<StoredState>) -> Completion {
        match state {
            Some(state) => Completion::Loaded { state },
            None => Completion::Fenced { highest: None },
        }
    }

    /// A [`crate::host::Lease::acquire`] answer.
    pub fn acquired(grant: Option<LeaseGrant>) -> Completion {
        grant.map_or(Completion::Denied, Completion::Granted)
    }

    /// A [`crate::host::Lease::renew`] answer.
    pub fn renewed(valid_until_ms: Option<u64>) -> Completion {
        valid_until_ms.map_or(Completion::Lost, |valid_until_ms| Completion::Renewed {
            valid_until_ms,
        })
    }
}

/// Names an operation in flight; given out once, completed once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub u64);

impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "operation {}", self.0)
    }
}

/// What a ticket was given out for, with what its completion needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    Send,
    Append,
    SaveSnapshot,
    Load,
    Acquire,
    Renew(FencingToken),
    Release,
}

impl Pending {
    pub fn of(op: &Operation) -> Pending {
        match op {
            Operation::Send { .. } => Pending::Send,
            Operation::Append { .. } => Pending::Append,
            Operation::SaveSnapshot { .. } => Pending::SaveSnapshot,
            Operation::Load { .. } => Pending::Load,
            Operation::Acquire => Pending::Acquire,
            Operation::Renew { token } => Pending::Renew(*token),
            Operation::Release { .. } => Pending::Release,
        }
    }

    /// Whether later operations wait for this one.
    pub fn is_write(self) -> bool {
        matches!(self, Pending::Append | Pending::SaveSnapshot)
    }

    /// "a send", "a store write", ... for messages.
    pub fn name(self) -> &'static str {
        match self {
            Pending::Send => "a send",
            Pending::Append | Pending::SaveSnapshot => "a store write",
            Pending::Load => "a load",
            Pending::Acquire => "a lease acquire",
            Pending::Renew(_) => "a lease renewal",
            Pending::Release => "a lease release",
        }
    }

    /// The input the answer means to the coordinator, or `Err` when `done` is not an
    /// answer to this operation.
    fn input(
        self,
        done: Completion,
    ) -> std::result::Result<Option<CoordinatorInput>, Box<Completion>> {
        use CoordinatorInput as In;
        Ok(match (self, done) {
            (Pending::Send, Completion::Sent | Completion::Failed) => None,
            (Pending::Release, Completion::Released | Completion::Failed) => None,
            (p, Completion::Written) if p.is_write() => None,
            (p, Completion::Fenced { .. }) if p.is_write() => {
                Some(In::StoreFailed { fenced: true })
            }
            (p, Completion::Failed) if p.is_write() => Some(In::StoreFailed { fenced: false }),
            (Pending::Load, Completion::Loaded { state }) => Some(In::StateLoaded(Box::new(state))),
            (Pending::Load, Completion::Fenced { .. }) => {
                Some(In::StateLoadFailed { fenced: true })
            }
            (Pending::Load, Completion::Failed) => Some(In::StateLoadFailed { fenced: false }),
            (Pending::Acquire, Completion::Granted(grant)) => Some(In::LeaseGranted(grant)),
            (Pending::Acquire, Completion::Denied | Completion::Failed) => Some(In::LeaseDenied),
            (Pending::Renew(token), Completion::Renewed { valid_until_ms }) => {
                Some(In::LeaseRenewed {
                    token,
                    valid_until_ms,
                })
            }
            (Pending::Renew(token), Completion::Lost) => Some(In::LeaseLost { token }),
            (Pending::Renew(token), Completion::Failed) => Some(In::LeaseRenewFailed { token }),
            (_, other) => return Err(Box::new(other)),
        })
    }
}

/// A coordinator whose outputs are handed out as [`Operation`]s under the write barrier.
pub struct CoordinatorPipeline {
    coordinator: Coordinator,
    /// Few at a time (nothing is handed out past a write), so a list beats a map.
    in_flight: Vec<(Ticket, Pending)>,
    writes_in_flight: usize,
    next_ticket: u64,
    notices: Vec<CoordinatorNotice>,
    observer: Option<Box<dyn CoordinatorObserver>>,
}

impl CoordinatorPipeline {
    pub fn new(coordinator: Coordinator) -> CoordinatorPipeline {
        CoordinatorPipeline {
            coordinator,
            in_flight: Vec::new(),
            writes_in_flight: 0,
            next_ticket: 1,
            notices: Vec::new(),
            observer: None,
        }
    }

    /// Shows every later call on the coordinator (including the inputs completions feed)
    /// and every output taken, in order.
    pub fn observe(&mut self, observer: Box<dyn CoordinatorObserver>) {
        self.observer = Some(observer);
    }

    pub fn coordinator(&self) -> &Coordinator {
        &self.coordinator
    }

    /// Notices since the last call, in order: those passed by [`Self::next_operation`] and
    /// those at the head of the queue now, unless a write in flight holds them.
    pub fn take_notices(&mut self) -> Vec<CoordinatorNotice> {
        while self.writes_in_flight == 0
            && matches!(
                self.coordinator.peek_output(),
                Some(CoordinatorOutput::Notice(_))
            )
        {
            if let Some(CoordinatorOutput::Notice(n)) = self.take_output() {
                self.notices.push(n);
            }
        }
        std::mem::take(&mut self.notices)
    }

    /// What `ticket` was handed out for, while it is in flight.
    pub fn pending(&self, ticket: Ticket) -> Option<Pending> {
        self.in_flight
            .iter()
            .find(|(t, _)| *t == ticket)
            .map(|&(_, p)| p)
    }

    /// Operations handed out and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether outputs wait behind a store write in flight.
    pub fn is_held(&self) -> bool {
        self.writes_in_flight > 0 && self.coordinator.queued_outputs() > 0
    }

    pub fn next_deadline(&self) -> Option<u64> {
        self.coordinator.next_deadline()
    }

    /// Starts the coordinator, runs its timers, or feeds it an input, at `now_ms`.
    pub fn step(&mut self, now_ms: u64, step: CoordinatorStep) -> Result<()> {
        let Some(observer) = self.observer.as_mut() else {
            return step.apply(&mut self.coordinator, now_ms);
        };
        let r = step.clone().apply(&mut self.coordinator, now_ms);
        observer.called(now_ms, &step, &self.coordinator, &r);
        r
    }

    /// The next operation to carry out, or `None` when there is none now: the queue is
    /// empty, or everything waits behind a store write in flight. Notices are collected for
    /// [`Self::take_notices`] on the way.
    pub fn next_operation(&mut self) -> Option<(Ticket, Operation)> {
        loop {
            if self.writes_in_flight > 0 {
                return None;
            }
            let op = match self.take_output()? {
                CoordinatorOutput::Notice(n) => {
                    self.notices.push(n);
                    continue;
                }
                CoordinatorOutput::Send(envelope) => Operation::Send { envelope },
                CoordinatorOutput::Persist { token, record } => Operation::Append { token, record },
                CoordinatorOutput::SaveSnapshot { token, snapshot } => {
                    Operation::SaveSnapshot { token, snapshot }
                }
                CoordinatorOutput::LoadState { token } => Operation::Load { token },
                CoordinatorOutput::Lease(LeaseRequest::Acquire) => Operation::Acquire,
                CoordinatorOutput::Lease(LeaseRequest::Renew { token }) => {
                    Operation::Renew { token }
                }
                CoordinatorOutput::Lease(LeaseRequest::Release { token }) => {
                    Operation::Release { token }
                }
            };
            let pending = Pending::of(&op);
            if pending.is_write() {
                self.writes_in_flight += 1;
            }
            let ticket = Ticket(self.next_ticket);
            self.next_ticket += 1;
            self.in_flight.push((ticket, pending));
            return Some((ticket, op));
        }
    }

    /// Reports how the operation `ticket` ended, at `now_ms`, and feeds the coordinator what
    /// it means. A completion that does not answer that operation, or an unknown ticket, is
    /// refused and changes nothing.
    pub fn complete(&mut self, now_ms: u64, ticket: Ticket, done: Completion) -> Result<()> {
        let Some(at) = self.in_flight.iter().position(|(t, _)| *t == ticket) else {
            return Err(Error::invalid_argument(format!(
                "{ticket} is not in flight (never handed out, or completed already)"
            )));
        };
        let pending = self.in_flight[at].1;
        let input = pending.input(done).map_err(|done| {
            Error::invalid_argument(format!(
                "{ticket} is {}; {done:?} does not complete it",
                pending.name()
            ))
        })?;
        self.in_flight.swap_remove(at);
        if pending.is_write() {
            self.writes_in_flight -= 1;
        }
        let Some(input) = input else { return Ok(()) };
        if matches!(input, CoordinatorInput::StoreFailed { .. }) {
            // Nothing after a failed write may become visible.
            while self.take_output().is_some() {}
        }
        self.step(now_ms, CoordinatorStep::Input(input))
    }

    fn take_output(&mut self) -> Option<CoordinatorOutput> {
        let o = self.coordinator.poll_output()?;
        if let Some(observer) = self.observer.as_mut() {
            observer.output(&o);
        }
        Some(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::CoordinatorConfig;
    use crate::model::{Address, Member};
    use crate::protocol::{Command, Directive, Endpoint, Message};
    use crate::strategy::StrategyConfig;

    const NODE: &str = "pekko://sys@h1:1";

    fn pipeline() -> CoordinatorPipeline {
        let strategy: StrategyConfig = serde_json::from_value(serde_json::json!({
            "kind": "least-shard"
        }))
        .unwrap();
        let c = Coordinator::new(
            CoordinatorConfig::default(),
            strategy.build().unwrap(),
            Address::parse(NODE).unwrap(),
        )
        .unwrap();
        CoordinatorPipeline::new(c)
    }

    /// Completes every operation at once, the way the synchronous driver does, until the
    /// pipeline has nothing more; returns what was handed out.
    fn settle(p: &mut CoordinatorPipeline, now: u64, store: &mut Vec<Record>) -> Vec<Operation> {
        let mut seen = vec![];
        while let Some((t, op)) = p.next_operation() {
            let done = match &op {
                Operation::Acquire => Completion::Granted(LeaseGrant {
                    token: FencingToken(1),
                    valid_until_ms: now + 60_000,
                }),
                Operation::Load { .. } => Completion::loaded(Some(StoredState::default())),
                Operation::Append { record, .. } => {
                    store.push(record.clone());
                    Completion::Written
                }
                Operation::SaveSnapshot { .. } => Completion::Written,
                Operation::Renew { .. } => Completion::renewed(Some(now + 60_000)),
                Operation::Send { .. } => Completion::Sent,
                Operation::Release { .. } => Completion::Released,
            };
            p.complete(now, t, done).unwrap();
            seen.push(op);
        }
        seen
    }

    /// An active coordinator with region `r1` registered on NODE.
    fn active() -> CoordinatorPipeline {
        let mut p = pipeline();
        let mut store = vec![];
        p.step(0, CoordinatorStep::Start).unwrap();
        let member = Member::new(Address::parse(NODE).unwrap());
        p.step(
            0,
            CoordinatorStep::Input(CoordinatorInput::Member(Box::new(member))),
        )
        .unwrap();
        settle(&mut p, 0, &mut store);
        assert!(p.coordinator().is_active());
        p.step(1, command(Command::register(NODE))).unwrap();
        p
    }

    fn command(cmd: Command) -> CoordinatorStep {
        CoordinatorStep::Input(CoordinatorInput::Receive(Envelope {
            from: Endpoint::Region("r1".into()),
            to: Endpoint::Coordinator,
            message: Message::Command(cmd),
        }))
    }

    fn get_home(shard: &str) -> CoordinatorStep {
        command(Command::GetShardHome {
            shard: shard.into(),
        })
    }

    #[test]
    fn nothing_after_a_write_is_handed_out_before_the_write_completes() {
        let mut p = active();
        // Registering persists the region before acknowledging it.
        let (write, op) = p.next_operation().unwrap();
        assert!(matches!(op, Operation::Append { .. }), "{op:?}");
        assert_eq!(
            p.next_operation(),
            None,
            "the acknowledgement waits for the write"
        );
        // More work arrives while the write is in flight: it is held too.
        p.step(2, get_home("7")).unwrap();
        assert!(p.is_held());
        assert_eq!(p.next_operation(), None);
        p.complete(3, write, Completion::Written).unwrap();
        let (_, op) = p.next_operation().unwrap();
        assert!(
            matches!(op, Operation::Send { .. }),
            "the ack goes out now: {op:?}"
        );
        assert_eq!(
            p.in_flight(),
            1,
            "the write completed; the send is in flight"
        );
    }

    #[test]
    fn a_failed_write_drops_what_waited_behind_it() {
        let mut p = active();
        let (write, _) = p.next_operation().unwrap();
        p.step(2, get_home("7")).unwrap();
        p.complete(3, write, Completion::Failed).unwrap();
        let mut store = vec![];
        let after = settle(&mut p, 4, &mut store);
        assert!(
            !after
                .iter()
                .any(|op| matches!(op, Operation::Send { envelope: e }
                if matches!(e.message, Message::Directive(Directive::RegisterAck { .. })))),
            "the acknowledgement of the unwritten registration must never be sent: {after:?}"
        );
    }

    #[test]
    fn operations_before_a_write_may_complete_after_it() {
        let mut p = active();
        let mut store = vec![];
        settle(&mut p, 2, &mut store);
        // Two shard homes: each allocation persists, then answers.
        p.step(3, get_home("1")).unwrap();
        let (w1, _) = p.next_operation().unwrap();
        p.complete(3, w1, Completion::Written).unwrap();
        let mut sends = vec![];
        while let Some((t, op)) = p.next_operation() {
            assert!(matches!(op, Operation::Send { .. }), "{op:?}");
            sends.push(t);
        }
        assert!(!sends.is_empty());
        p.step(4, get_home("2")).unwrap();
        let (w2, op) = p.next_operation().unwrap();
        assert!(matches!(op, Operation::Append { .. }), "{op:?}");
        // The first answers are still on the wire while the second write runs.
        p.complete(5, w2, Completion::Written).unwrap();
        for t in sends {
            p.complete(6, t, Completion::Sent).unwrap();
        }
        settle(&mut p, 7, &mut store);
        assert_eq!(p.in_flight(), 0);
        assert_eq!(p.coordinator().state().shards_of("r1").count(), 2);
    }

    #[test]
    fn wrong_completions_are_refused_and_change_nothing() {
        let mut p = active();
        let (write, _) = p.next_operation().unwrap();
        let e = p
            .complete(2, write, Completion::Sent)
            .expect_err("a send answer for a write");
        assert!(e.to_string().contains("is a store write"), "{e}");
        assert_eq!(p.in_flight(), 1);
        let e = p.complete(2, Ticket(99), Completion::Sent).unwrap_err();
        assert!(
            e.to_string().contains("operation 99 is not in flight"),
            "{e}"
        );
        p.complete(2, write, Completion::Written).unwrap();
        let e = p.complete(2, write, Completion::Written).unwrap_err();
        assert!(e.to_string().contains("not in flight"), "{e}");
    }

    #[test]
    fn answers_become_the_coordinator_inputs() {
        use CoordinatorInput as In;
        let token = FencingToken(4);
        let cases = [
            (Pending::Acquire, Completion::Denied, Some(In::LeaseDenied)),
            (Pending::Acquire, Completion::Failed, Some(In::LeaseDenied)),
            (
                Pending::Renew(token),
                Completion::Lost,
                Some(In::LeaseLost { token }),
            ),
            (
                Pending::Renew(token),
                Completion::Failed,
                Some(In::LeaseRenewFailed { token }),
            ),
            (
                Pending::Load,
                Completion::loaded(None),
                Some(In::StateLoadFailed { fenced: true }),
            ),
            (
                Pending::Load,
                Completion::Failed,
                Some(In::StateLoadFailed { fenced: false }),
            ),
            (
                Pending::Append,
                Completion::from(WriteOutcome::Fenced { highest: token }),
                Some(In::StoreFailed { fenced: true }),
            ),
            (Pending::SaveSnapshot, Completion::Written, None),
            (Pending::Send, Completion::Failed, None),
            (Pending::Release, Completion::Released, None),
        ];
        for (pending, done, want) in cases {
            assert_eq!(
                pending.input(done.clone()).unwrap(),
                want,
                "{pending:?} {done:?}"
            );
        }
    }

    #[test]
    fn json_forms_are_tagged_by_type() {
        let done: Completion =
            serde_json::from_str(r#"{"type":"granted","token":3,"validUntilMs":900}"#).unwrap();
        assert_eq!(
            done,
            Completion::Granted(LeaseGrant {
                token: FencingToken(3),
                valid_until_ms: 900
            })
        );
        let done: Completion = serde_json::from_str(r#"{"type":"fenced"}"#).unwrap();
        assert_eq!(done, Completion::Fenced { highest: None });
        let done: Completion =
            serde_json::from_str(r#"{"type":"renewed","validUntilMs":5}"#).unwrap();
        assert_eq!(done, Completion::renewed(Some(5)));
        assert!(serde_json::from_str::<Completion>(r#"{"type":"written!"}"#).is_err());
        let op = Operation::Renew {
            token: FencingToken(2),
        };
        assert_eq!(
            serde_json::to_value(&op).unwrap(),
            serde_json::json!({"type": "renew", "token": 2})
        );
    }
}
