//! `shardline_decision`: where a custom strategy's callback writes its answer.

use std::collections::HashSet;
use std::ffi::c_char;

use shardline_core::model::ShardId;
use shardline_core::strategy::Allocation;

use crate::args;
use crate::boundary::{guard, Failure, Result};
use crate::status::shardline_status;

/// The answer a custom strategy's callback gives: for allocate, a region or "pending"; for
/// rebalance, the shards to hand off. Only ever lent to a callback, for its duration.
pub struct shardline_decision {
    op: Op,
    allocation: Option<Allocation>,
    shards: Vec<ShardId>,
    picked: HashSet<ShardId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Allocate,
    Rebalance,
}

impl shardline_decision {
    pub fn new(op: Op) -> shardline_decision {
        shardline_decision {
            op,
            allocation: None,
            shards: Vec::new(),
            picked: HashSet::new(),
        }
    }

    pub fn allocation(&self) -> Option<&Allocation> {
        self.allocation.as_ref()
    }

    pub fn into_shards(self) -> Vec<ShardId> {
        self.shards
    }

    fn allocate(&mut self, answer: Allocation) -> Result<()> {
        if self.op != Op::Allocate {
            return Err(Failure::invalid_state(
                "this decision answers a rebalance: use shardline_decision_add_shard",
            ));
        }
        if let Some(previous) = &self.allocation {
            return Err(Failure::invalid_state(format!(
                "the allocation is already decided ({})",
                describe(previous)
            )));
        }
        self.allocation = Some(answer);
        Ok(())
    }
}

pub fn describe(a: &Allocation) -> String {
    match a {
        Allocation::Region(r) => format!("region {r:?}"),
        Allocation::Pending => "pending".into(),
    }
}

/// Answers an allocate callback: place the shard in `region`.
///
/// @param decision the decision the callback received.
/// @param region id of a registered region (checked when the callback returns).
/// @return SHARDLINE_STATUS_INVALID_STATE when the decision answers a rebalance or is already
///         decided.
///
/// Ownership: `region` is copied.
/// Thread safety: only from inside the callback that received `decision`.
///
/// # Safety
/// `decision` is the pointer the running callback received; `region` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_decision_set_region(
    decision: *mut shardline_decision,
    region: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract; the callback has exclusive use of its decision.
        let decision = unsafe { decision.as_mut() }.ok_or_else(|| Failure::null("decision"))?;
        let region = unsafe { args::str(region, "region") }?;
        decision.allocate(Allocation::Region(region.into()))
    })
}

/// Answers an allocate callback: no decision now; the host retries later (Pekko's behaviour
/// when no region can take the shard yet).
///
/// @param decision the decision the callback received.
/// @return SHARDLINE_STATUS_INVALID_STATE when the decision answers a rebalance or is already
///         decided.
///
/// Ownership: the decision stays shardline's.
/// Thread safety: only from inside the callback that received `decision`.
///
/// # Safety
/// `decision` is the pointer the running callback received.
#[no_mangle]
pub unsafe extern "C" fn shardline_decision_set_pending(
    decision: *mut shardline_decision,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let decision = unsafe { decision.as_mut() }.ok_or_else(|| Failure::null("decision"))?;
        decision.allocate(Allocation::Pending)
    })
}

/// Adds a shard to hand off to a rebalance callback's answer; order is decision order.
///
/// @param decision the decision the callback received.
/// @param shard an allocated shard (checked when the callback returns).
/// @return SHARDLINE_STATUS_INVALID_STATE when the decision answers an allocate or already
///         holds `shard`.
///
/// Ownership: `shard` is copied.
/// Thread safety: only from inside the callback that received `decision`.
///
/// # Safety
/// `decision` is the pointer the running callback received; `shard` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_decision_add_shard(
    decision: *mut shardline_decision,
    shard: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let decision = unsafe { decision.as_mut() }.ok_or_else(|| Failure::null("decision"))?;
        let shard = unsafe { args::str(shard, "shard") }?;
        if decision.op != Op::Rebalance {
            return Err(Failure::invalid_state(
                "this decision answers an allocate: use shardline_decision_set_region or \
                 shardline_decision_set_pending",
            ));
        }
        let shard = ShardId::from(shard);
        if !decision.picked.insert(shard.clone()) {
            return Err(Failure::invalid_state(format!(
                "shard {shard:?} is already in this rebalance"
            )));
        }
        decision.shards.push(shard);
        Ok(())
    })
}
