//! The one adapter between a host-written allocation strategy (a C callback pair, a Python
//! object, a JavaScript object, a Java `CustomStrategy`) and the core's
//! [`AllocationStrategy`]. The binding only calls its host and converts the answer; every
//! check of the answer against the state, every message and every explanation is decided
//! here, so a custom strategy behaves the same in every language.
//!
//! Statuses: an answer of the wrong form (not a region id, no decision at all) is the
//! host's fault and reported by the binding as `CALLBACK_FAILED`; a well-formed answer that
//! does not fit the state (a region that is not registered, a shard that is not allocated or
//! picked twice) is `INVALID_STATE`.

use std::collections::HashSet;

use shardline_core::model::{AllocationState, ShardId};
use shardline_core::strategy::{Allocation, AllocationStrategy, Explanation, InProgress};

use crate::status::Failure;

/// What a binding implements to let its host decide. A failure's message is a predicate
/// ("returned 42", "raised: ValueError: boom"); the adapter puts the callback and strategy
/// name in front of it.
pub trait StrategyHost: Send {
    /// The host's home for `shard`: a region id, or `None` for "not now" (pending).
    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
    ) -> Result<Option<String>, Failure>;

    /// The shards the host wants handed off, in decision order; empty when the host has no
    /// rebalance of its own. `in_progress` is sorted, so every host sees the same order.
    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &[&str],
    ) -> Result<Vec<String>, Failure>;

    /// Keeps `failure` for the binding's caller (the first failure of a call wins, so an
    /// exception the host kept earlier is not replaced) and returns what the core sees.
    fn keep(&mut self, failure: Failure) -> shardline_core::Error;
}

/// A strategy whose decisions a host makes, checked and explained the same way everywhere.
pub struct CustomStrategy<H> {
    name: String,
    host: H,
}

impl<H: StrategyHost> CustomStrategy<H> {
    pub fn new(name: impl Into<String>, host: H) -> Self {
        CustomStrategy {
            name: name.into(),
            host,
        }
    }

    pub fn host_mut(&mut self) -> &mut H {
        &mut self.host
    }

    fn callback(&self, which: &str) -> String {
        format!("the {which} callback of custom strategy {:?}", self.name)
    }

    /// A host failure, its message (a predicate such as "returned 42") put after the
    /// callback and strategy it came from.
    fn blame(&self, which: &str, f: Failure) -> Failure {
        Failure::new(f.status, format!("{} {}", self.callback(which), f.message))
    }

    fn allocate_checked(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
    ) -> Result<Allocation, Failure> {
        let answer = self
            .host
            .allocate(state, requester, shard)
            .map_err(|f| self.blame("allocate", f))?;
        match answer {
            None => Ok(Allocation::Pending),
            Some(r) if state.region(&r).is_none() => Err(Failure::invalid_state(format!(
                "{} chose region {r:?}, which is not registered",
                self.callback("allocate")
            ))),
            Some(r) => Ok(Allocation::Region(r.as_str().into())),
        }
    }

    fn rebalance_checked(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
    ) -> Result<Vec<ShardId>, Failure> {
        let mut sorted: Vec<&str> = in_progress.iter().map(|s| &**s).collect();
        sorted.sort_unstable();
        let picked = self
            .host
            .rebalance(state, &sorted)
            .map_err(|f| self.blame("rebalance", f))?;
        let mut seen = HashSet::with_capacity(picked.len());
        for s in &picked {
            let problem = if state.home_of(s).is_none() {
                "which is not allocated"
            } else if !seen.insert(s.as_str()) {
                "twice"
            } else {
                continue;
            };
            return Err(Failure::invalid_state(format!(
                "{} picked shard {s:?}, {problem}",
                self.callback("rebalance")
            )));
        }
        Ok(picked.iter().map(|s| ShardId::from(s.as_str())).collect())
    }
}

/// The explanation's summary of a custom allocation.
fn allocated(answer: &Allocation, shard: &str) -> String {
    match answer {
        Allocation::Region(r) => format!("custom strategy chose region {r} for shard {shard}"),
        Allocation::Pending => format!("custom strategy left shard {shard} pending"),
    }
}

impl<H: StrategyHost> AllocationStrategy for CustomStrategy<H> {
    fn name(&self) -> &str {
        &self.name
    }

    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
        explain: Option<&mut Explanation>,
    ) -> shardline_core::Result<Allocation> {
        let answer = self
            .allocate_checked(state, requester, shard)
            .map_err(|f| self.host.keep(f))?;
        if let Some(e) = explain {
            *e = Explanation::new(&self.name, "allocate");
            e.summary = allocated(&answer, shard);
        }
        Ok(answer)
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        explain: Option<&mut Explanation>,
    ) -> shardline_core::Result<Vec<ShardId>> {
        let picked = self
            .rebalance_checked(state, in_progress)
            .map_err(|f| self.host.keep(f))?;
        if let Some(e) = explain {
            *e = Explanation::new(&self.name, "rebalance");
            e.summary = format!(
                "custom strategy picked {} shard(s) to hand off",
                picked.len()
            );
        }
        Ok(picked)
    }
}

/// A host's allocation answer that is neither a region id nor "not now"; `got` says what
/// it was ("42", "OK without deciding").
pub fn wrong_allocation(got: &str) -> Failure {
    Failure::callback_failed(format!(
        "returned {got}; expected a region id or nothing (pending)"
    ))
}

/// An item of a host's rebalance answer that is not a shard id; `got` says what it was.
pub fn wrong_shard(got: &str) -> Failure {
    Failure::callback_failed(format!("returned {got}, which is not a shard id"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;
    use shardline_core::model::Address;
    use shardline_core::model::ClusterView;

    struct Scripted {
        region: Option<String>,
        picks: Vec<String>,
        seen_in_progress: Vec<String>,
        kept: Option<Failure>,
    }

    impl StrategyHost for Scripted {
        fn allocate(
            &mut self,
            _: &AllocationState,
            _: Option<&str>,
            _: &str,
        ) -> Result<Option<String>, Failure> {
            Ok(self.region.clone())
        }
        fn rebalance(&mut self, _: &AllocationState, ip: &[&str]) -> Result<Vec<String>, Failure> {
            self.seen_in_progress = ip.iter().map(|s| s.to_string()).collect();
            Ok(self.picks.clone())
        }
        fn keep(&mut self, f: Failure) -> shardline_core::Error {
            let e = f.to_core();
            self.kept.get_or_insert(f);
            e
        }
    }

    fn state() -> AllocationState {
        let a = Address::parse("pekko://s@h:1").unwrap();
        let mut s = AllocationState::new(ClusterView::new(a.clone()));
        s.add_region("a", a, true).unwrap();
        s.add_shard("a", "1").unwrap();
        s
    }

    fn strategy(region: Option<&str>, picks: &[&str]) -> CustomStrategy<Scripted> {
        CustomStrategy::new(
            "mine",
            Scripted {
                region: region.map(Into::into),
                picks: picks.iter().map(|s| s.to_string()).collect(),
                seen_in_progress: Vec::new(),
                kept: None,
            },
        )
    }

    #[test]
    fn answers_are_checked_against_the_state() {
        let st = state();
        let mut s = strategy(Some("nowhere"), &["1", "1"]);
        assert!(s.allocate(&st, None, "2", None).is_err());
        let kept = s.host_mut().kept.take().unwrap();
        assert_eq!(kept.status, Status::InvalidState);
        assert!(kept
            .message
            .contains("\"nowhere\", which is not registered"));
        assert!(s.rebalance(&st, &InProgress::new(), None).is_err());
        assert!(s.host_mut().kept.take().unwrap().message.contains("twice"));
        let mut s = strategy(None, &["9"]);
        assert!(s.rebalance(&st, &InProgress::new(), None).is_err());
        assert!(s
            .host_mut()
            .kept
            .take()
            .unwrap()
            .message
            .contains("not allocated"));
    }

    #[test]
    fn good_answers_are_explained_and_in_progress_is_sorted() {
        let st = state();
        let mut s = strategy(Some("a"), &["1"]);
        let mut e = Explanation::default();
        let a = s.allocate(&st, None, "2", Some(&mut e)).unwrap();
        assert_eq!(a, Allocation::Region("a".into()));
        assert_eq!(e.summary, "custom strategy chose region a for shard 2");
        let ip: InProgress = ["z", "b", "m"].into_iter().map(ShardId::from).collect();
        let picked = s.rebalance(&st, &ip, Some(&mut e)).unwrap();
        assert_eq!(picked, vec![ShardId::from("1")]);
        assert_eq!(s.host_mut().seen_in_progress, ["b", "m", "z"]);
        assert_eq!(e.summary, "custom strategy picked 1 shard(s) to hand off");
    }
}
