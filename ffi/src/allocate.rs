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
use crate::string::{c_text, to_c};

fn explanation_json(e: &Explanation) -> Result<*mut c_char> {
    let text = serde_json::to_string(e)
        .map_err(|e| Failure::internal(format!("cannot serialize the explanation: {e}")))?;
    Ok(to_c(&text)?.into_raw())
}

/// The decision both allocate exports make, from their C arguments.
///
/// # Safety
/// As for [`shardline_allocate`]: live handles, NUL-terminated strings (or NULL).
unsafe fn decide(
    strategy: *mut shardline_strategy,
    state: *const shardline_state,
    requester: *const c_char,
    shard: *const c_char,
    explanation: Option<&mut Explanation>,
) -> Result<Allocation> {
    // SAFETY: caller's contract, for every parameter.
    let (strategy, state, requester, shard) =
        unsafe { decide_args(strategy, state, requester, shard) }?;
    strategy.decide(state, |s, st| s.allocate(st, requester, shard, explanation))
}

/// The C arguments of both allocate exports, checked in the order they are documented.
///
/// # Safety
/// As for [`shardline_allocate`]: live handles, NUL-terminated strings (or NULL).
#[inline]
unsafe fn decide_args<'a>(
    strategy: *mut shardline_strategy,
    state: *const shardline_state,
    requester: *const c_char,
    shard: *const c_char,
) -> Result<(
    &'a shardline_strategy,
    &'a shardline_state,
    Option<&'a str>,
    &'a str,
)> {
    // SAFETY: caller's contract, for every parameter.
    unsafe {
        Ok((
            args::handle(strategy, "strategy")?,
            args::handle(state, "state")?,
            args::opt_str(requester, "requester")?,
            args::str(shard, "shard")?,
        ))
    }
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
        let out_region = Out::new(out_region, "out_region")?;
        let out_pending = Out::new(out_pending, "out_pending")?;
        let out_explanation = Out::nullable(out_explanation_json);
        let mut explanation = out_explanation.as_ref().map(|_| Explanation::default());
        // SAFETY: caller's contract, for every parameter.
        let answer = unsafe { decide(strategy, state, requester, shard, explanation.as_mut()) }?;
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

/// shardline_allocate without allocating: the chosen region's id is copied into a buffer the
/// caller owns (e.g. on its stack), for hosts that allocate per new shard in a hot path. No
/// explanation; shardline_allocate gives one.
///
/// @param strategy the strategy.
/// @param state the allocation state (or a view, from inside another strategy's callback).
/// @param requester nullable: as for shardline_allocate.
/// @param shard the shard to place.
/// @param buf receives the chosen region's id, NUL-terminated; an empty string when the answer
///        is pending.
/// @param len size of `buf` in bytes; it must hold the id and its NUL.
/// @param out_len nullable: receives the id's length in bytes, without the NUL (0 when
///        pending).
/// @param out_pending receives true when there is no decision now (as for shardline_allocate).
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when the id does not fit in `len` bytes (the
///         message gives the size needed; nothing is written, and shardline_allocate answers
///         ids of any length); otherwise as shardline_allocate.
///
/// Ownership: nothing is allocated; `buf` stays the caller's and holds a copy, valid however
/// the state changes afterwards.
/// Thread safety: any thread; calls on one strategy or state are serialised (see the overview).
///
/// # Safety
/// Handles are live; strings are NUL-terminated (or NULL where nullable); `buf` is valid for
/// writes of `len` bytes; `out_pending` (and `out_len`, when not NULL) are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_allocate_into(
    strategy: *mut shardline_strategy,
    state: *const shardline_state,
    requester: *const c_char,
    shard: *const c_char,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
    out_pending: *mut bool,
) -> shardline_status {
    guard(|| {
        if buf.is_null() {
            return Err(Failure::null("buf"));
        }
        let out_len = Out::nullable(out_len);
        let out_pending = Out::new(out_pending, "out_pending")?;
        // SAFETY: caller's contract, for every parameter.
        let (strategy, state, requester, shard) =
            unsafe { decide_args(strategy, state, requester, shard) }?;
        // The answer is copied out where the strategy returned it: moving it out through the
        // layers first reloads it whole right after the strategy stored it in parts, which
        // stalls the load.
        strategy.decide(state, |s, st| {
            let answer = s.allocate(st, requester, shard, None)?;
            // SAFETY: caller's contract, for `buf`, `len`, `out_len` and `out_pending`.
            Ok(unsafe { copy_answer(&answer, buf, len, out_len, out_pending) })
        })?
    })
}

/// Writes an allocate answer into the caller's buffer and out-parameters, or fails with
/// nothing written.
///
/// # Safety
/// As for [`shardline_allocate_into`]: `buf` is valid for writes of `len` bytes and the
/// out-parameters for writes.
#[inline]
unsafe fn copy_answer(
    answer: &Allocation,
    buf: *mut c_char,
    len: usize,
    out_len: Option<Out<usize>>,
    out_pending: Out<bool>,
) -> Result<()> {
    let id = c_text(match answer {
        Allocation::Region(r) => r,
        Allocation::Pending => "",
    })?;
    if id.len() >= len {
        return Err(Failure::invalid_argument(format!(
            "buf holds {len} bytes; region id {id:?} needs {} with its NUL",
            id.len() + 1
        )));
    }
    // SAFETY: caller's contract: `buf` has `len` > id.len() writable bytes.
    unsafe {
        let at = buf.cast::<u8>();
        std::ptr::copy_nonoverlapping(id.as_ptr(), at, id.len());
        at.add(id.len()).write(0);
        if let Some(out) = out_len {
            out.write(id.len());
        }
        out_pending.write(matches!(answer, Allocation::Pending));
    }
    Ok(())
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
