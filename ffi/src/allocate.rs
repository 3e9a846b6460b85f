//! `shardline_allocate` and `shardline_rebalance`: asking a strategy for a decision on a state.

use std::ffi::c_char;

use shardline_core::model::ShardId;
use shardline_core::strategy::{Allocation, Explanation, InProgress};

use crate::args::{self, Out};
use crate::boundary::{guard, Failure, Result};
use crate::shard_list::shardline_shard_list;
use crate::state::shardline_state;
use crate::status::shardline_status;
use crate::strategy::shardline_strategy;
use crate::string::to_c;

fn explanation_json(e: &Explanation) -> Result<*mut c_char> {
    let text = serde_json::to_string(e)
        .map_err(|e| Failure::internal(format!("cannot serialize the explanation: {e}")))?;
    Ok(to_c(&text)?.into_raw())
}

/// Asks a strategy where a new shard should go. The state is not changed: record the outcome
/// with shardline_state_add_shard.
///
/// @param strategy the strategy.
/// @param state the allocation state (or a view, from inside another strategy's callback).
/// @param requester nullable: id of the region that asked, or NULL for allocations the
///        coordinator starts itself. The external strategy falls back to it.
/// @param shard the shard to place.
/// @param out_region receives the chosen region's id, or NULL when the answer is pending.
/// @param out_pending receives true when there is no decision now (Pekko retries later: no
///        region maps to a known member, or no requester to fall back to).
/// @param out_explanation_json nullable: when given, receives a JSON explanation of the
///        decision (ranked candidates, limits, summary); when NULL, none is computed.
/// @return SHARDLINE_STATUS_NO_CANDIDATES when no region may receive shards (actor-ts);
///         SHARDLINE_STATUS_CALLBACK_FAILED when a custom callback returned non-OK;
///         SHARDLINE_STATUS_INVALID_STATE when a custom callback's answer does not fit the
///         state; SHARDLINE_STATUS_REENTRANT_CALL when called from a callback of `strategy`.
///
/// Ownership: the caller frees `*out_region` and `*out_explanation_json` with
/// shardline_string_free.
/// Thread safety: any thread; calls on one strategy or state are serialised (see the overview).
///
/// # Safety
/// Handles are live; strings are NUL-terminated (or NULL where nullable); out-parameters are
/// valid for writes (or NULL where nullable).
#[no_mangle]
pub unsafe extern "C" fn shardline_allocate(
    strategy: *mut shardline_strategy,
    state: *const shardline_state,
    requester: *const c_char,
    shard: *const c_char,
    out_region: *mut *mut c_char,
    out_pending: *mut bool,
    out_explanation_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let strategy = unsafe { args::handle(strategy, "strategy") }?;
        let state = unsafe { args::handle(state, "state") }?;
        let requester = unsafe { args::opt_str(requester, "requester") }?;
        let shard = unsafe { args::str(shard, "shard") }?;
        let out_region = Out::new(out_region, "out_region")?;
        let out_pending = Out::new(out_pending, "out_pending")?;
        let out_explanation = Out::nullable(out_explanation_json);
        let mut explanation = out_explanation.as_ref().map(|_| Explanation::default());
        let answer = strategy.decide(state, |s, st| {
            s.allocate(st, requester, shard, explanation.as_mut())
        })?;
        let region = match &answer {
            Allocation::Region(r) => Some(to_c(r)?),
            Allocation::Pending => None,
        };
        let explanation = explanation.as_ref().map(explanation_json).transpose()?;
        // SAFETY: caller's contract; nothing can fail past this point.
        unsafe {
            out_pending.write(region.is_none());
            out_region.write(region.map_or(std::ptr::null_mut(), |c| c.into_raw()));
            if let (Some(out), Some(e)) = (out_explanation, explanation) {
                out.write(e);
            }
        }
        Ok(())
    })
}

/// Asks a strategy which shards to hand off now. The state is not changed: the host runs the
/// hand-offs and records them with shardline_state_remove_shard / shardline_state_add_shard.
///
/// @param strategy the strategy.
/// @param state the allocation state (or a view, from inside another strategy's callback).
/// @param in_progress the shards whose hand-off is still under way; may be NULL when
///        `n_in_progress` is 0. Each element must be a non-NULL string.
/// @param n_in_progress number of elements of `in_progress`.
/// @param out receives the shards to hand off, in decision order, without duplicates.
/// @param out_explanation_json nullable: when given, receives a JSON explanation (including
///        why nothing was picked); when NULL, none is computed.
/// @return SHARDLINE_STATUS_CALLBACK_FAILED when a custom callback returned non-OK;
///         SHARDLINE_STATUS_INVALID_STATE when a custom callback's answer does not fit the
///         state; SHARDLINE_STATUS_REENTRANT_CALL when called from a callback of `strategy`.
///
/// Ownership: the caller frees `*out` with shardline_shard_list_free and
/// `*out_explanation_json` with shardline_string_free.
/// Thread safety: any thread; calls on one strategy or state are serialised (see the overview).
///
/// # Safety
/// Handles are live; `in_progress` holds `n_in_progress` NUL-terminated strings;
/// out-parameters are valid for writes (or NULL where nullable).
#[no_mangle]
pub unsafe extern "C" fn shardline_rebalance(
    strategy: *mut shardline_strategy,
    state: *const shardline_state,
    in_progress: *const *const c_char,
    n_in_progress: usize,
    out: *mut *mut shardline_shard_list,
    out_explanation_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let strategy = unsafe { args::handle(strategy, "strategy") }?;
        let state = unsafe { args::handle(state, "state") }?;
        let in_progress: InProgress =
            unsafe { args::str_array(in_progress, n_in_progress, "in_progress") }?
                .into_iter()
                .map(ShardId::from)
                .collect();
        let out = Out::new(out, "out")?;
        let out_explanation = Out::nullable(out_explanation_json);
        let mut explanation = out_explanation.as_ref().map(|_| Explanation::default());
        let picked = strategy.decide(state, |s, st| {
            s.rebalance(st, &in_progress, explanation.as_mut())
        })?;
        let list = shardline_shard_list::new(picked.iter().map(|s| &**s))?;
        let explanation = explanation.as_ref().map(explanation_json).transpose()?;
        // SAFETY: caller's contract; nothing can fail past this point.
        unsafe {
            out.write(args::into_handle(list));
            if let (Some(o), Some(e)) = (out_explanation, explanation) {
                o.write(e);
            }
        }
        Ok(())
    })
}
