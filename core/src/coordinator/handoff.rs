//! One shard's hand-off: Pekko's `RebalanceWorker` as plain data.
//!
//! Phase 1 collects `BeginHandOffAck` from every region and proxy known when the hand-off
//! started (a terminated one counts as acked); only then does the owner get `HandOff`.
//! Phase 2 waits for the owner's `ShardStopped` (or its termination). One deadline covers
//! both. Acks are matched on sender *and* stamp, so a late or duplicated answer from an
//! earlier hand-off of the same shard can never complete this one (akka.net#8146).

use std::collections::BTreeSet;

use crate::protocol::{Directive, RegionId, ShardId, Stamp};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(crate) enum Phase {
    CollectingAcks,
    Stopping,
}

/// What the coordinator must do after a hand-off event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Nothing,
    /// Every region acked: send `HandOff` to the owner.
    SendHandOff,
    /// The owner stopped the shard (or is gone): the hand-off succeeded.
    Completed,
}

#[derive(Debug, Clone)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(crate) struct HandOff {
    pub shard: ShardId,
    pub from: RegionId,
    pub stamp: Stamp,
    pub phase: Phase,
    pub remaining: BTreeSet<RegionId>,
    /// `GetShardHome` requesters waiting for the outcome, in arrival order.
    pub deferred: Vec<RegionId>,
}

impl HandOff {
    pub fn new(
        shard: ShardId,
        from: RegionId,
        stamp: Stamp,
        regions: impl IntoIterator<Item = RegionId>,
    ) -> HandOff {
        HandOff {
            shard,
            from,
            stamp,
            phase: Phase::CollectingAcks,
            remaining: regions.into_iter().collect(),
            deferred: Vec::new(),
        }
    }

    pub fn begin(&self) -> Directive {
        Directive::BeginHandOff {
            shard: self.shard.clone(),
            stamp: self.stamp,
        }
    }

    pub fn hand_off(&self) -> Directive {
        Directive::HandOff {
            shard: self.shard.clone(),
            stamp: self.stamp,
        }
    }

    /// Called right after creation, in case no region needs to ack.
    pub fn start(&mut self) -> Step {
        self.check_acks()
    }

    pub fn acked(&mut self, region: &str, stamp: Stamp) -> Step {
        if self.phase != Phase::CollectingAcks || stamp != self.stamp {
            return Step::Nothing;
        }
        if !self.remaining.remove(region) {
            return Step::Nothing;
        }
        self.check_acks()
    }

    pub fn stopped(&mut self, region: &str, stamp: Stamp) -> Step {
        // A ShardStopped for this stamp can only come after our HandOff, so accept it even if
        // some BeginHandOffAck was lost on the way.
        if stamp != self.stamp || region != self.from {
            return Step::Nothing;
        }
        self.phase = Phase::Stopping;
        Step::Completed
    }

    pub fn region_terminated(&mut self, region: &str) -> Step {
        match self.phase {
            Phase::CollectingAcks => {
                if region == self.from {
                    // Nothing left to stop; nobody will route to the dead owner.
                    self.phase = Phase::Stopping;
                    return Step::Completed;
                }
                if self.remaining.remove(region) {
                    return self.check_acks();
                }
                Step::Nothing
            }
            Phase::Stopping if region == self.from => Step::Completed,
            Phase::Stopping => Step::Nothing,
        }
    }

    pub fn defer(&mut self, requester: &str) {
        if !self.deferred.iter().any(|r| r == requester) {
            self.deferred.push(requester.to_owned());
        }
    }

    /// Directives to repeat to regions that have not answered yet.
    pub fn resend(&self) -> Vec<(RegionId, Directive)> {
        match self.phase {
            Phase::CollectingAcks => self
                .remaining
                .iter()
                .map(|r| (r.clone(), self.begin()))
                .collect(),
            Phase::Stopping => vec![(self.from.clone(), self.hand_off())],
        }
    }

    fn check_acks(&mut self) -> Step {
        if self.phase == Phase::CollectingAcks && self.remaining.is_empty() {
            self.phase = Phase::Stopping;
            return Step::SendHandOff;
        }
        Step::Nothing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> HandOff {
        HandOff::new(
            "s".into(),
            "a".into(),
            Stamp::new(1, 5),
            ["a".to_string(), "b".into(), "p".into()],
        )
    }

    #[test]
    fn hand_off_is_sent_once_after_every_ack() {
        let mut w = h();
        assert_eq!(w.start(), Step::Nothing);
        assert_eq!(w.acked("a", Stamp::new(1, 5)), Step::Nothing);
        assert_eq!(w.acked("a", Stamp::new(1, 5)), Step::Nothing, "duplicate");
        assert_eq!(w.acked("b", Stamp::new(1, 4)), Step::Nothing, "stale stamp");
        assert_eq!(w.acked("b", Stamp::new(1, 5)), Step::Nothing);
        assert_eq!(
            w.region_terminated("p"),
            Step::SendHandOff,
            "terminated counts as acked"
        );
        assert_eq!(w.acked("x", Stamp::new(1, 5)), Step::Nothing);
        assert_eq!(w.resend(), vec![("a".to_string(), w.hand_off())]);
    }

    #[test]
    fn only_the_owner_with_the_right_stamp_completes() {
        let mut w = h();
        for r in ["a", "b", "p"] {
            w.acked(r, Stamp::new(1, 5));
        }
        assert_eq!(
            w.stopped("b", Stamp::new(1, 5)),
            Step::Nothing,
            "not the owner"
        );
        assert_eq!(
            w.stopped("a", Stamp::new(1, 3)),
            Step::Nothing,
            "earlier hand-off"
        );
        assert_eq!(w.region_terminated("b"), Step::Nothing);
        assert_eq!(w.stopped("a", Stamp::new(1, 5)), Step::Completed);
    }

    #[test]
    fn owner_termination_completes_in_either_phase() {
        let mut w = h();
        assert_eq!(w.region_terminated("a"), Step::Completed);
        let mut w = h();
        for r in ["a", "b", "p"] {
            w.acked(r, Stamp::new(1, 5));
        }
        assert_eq!(w.region_terminated("a"), Step::Completed);
    }

    #[test]
    fn deferred_requesters_are_kept_once_in_order() {
        let mut w = h();
        w.defer("b");
        w.defer("a");
        w.defer("b");
        assert_eq!(w.deferred, vec!["b".to_string(), "a".into()]);
        assert_eq!(w.resend().len(), 3);
    }
}
