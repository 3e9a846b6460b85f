//! `shardline_coordinator_pipeline`: the coordinator for an asynchronous C host. Each output
//! is handed out as an operation with a ticket, the host carries it out however it likes
//! (an event loop, a thread pool) and reports how it ended with the ticket, whenever that is.
//! Nothing queued after a store write is handed out before the write is completed.

use std::ffi::c_char;

use shardline_core::coordinator::CoordinatorInput;
use shardline_core::host::{Completion, CoordinatorPipeline, Ticket};
use shardline_core::protocol::json;
use shardline_core::replay::CoordinatorStep;

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::coordinator::shardline_coordinator;
use crate::status::shardline_status;
use crate::step::{write_json, write_opt_u64, Machine};

/// A coordinator whose outputs are operations the host completes later. Made by
/// shardline_coordinator_pipeline_new, released by shardline_coordinator_pipeline_free.
///
/// Operations are JSON objects tagged by "type": `{"type":"send","envelope":{..}}`,
/// `{"type":"append","token":..,"record":{..}}`, `{"type":"saveSnapshot","token":..,"snapshot":{..}}`,
/// `{"type":"load","token":..}`, `{"type":"acquire"}`, `{"type":"renew","token":..}`,
/// `{"type":"release","token":..}`. Completions: `{"type":"sent"}`, `{"type":"written"}`,
/// `{"type":"fenced"}` (a write or load fenced by a larger token; `"highest"` optional),
/// `{"type":"loaded","state":{"snapshot":null,"events":[]}}`,
/// `{"type":"granted","token":1,"validUntilMs":..}`, `{"type":"denied"}`,
/// `{"type":"renewed","validUntilMs":..}`, `{"type":"lost"}`, `{"type":"released"}`, and
/// `{"type":"failed"}` for any operation whose call failed.
pub struct shardline_coordinator_pipeline {
    machine: Machine<CoordinatorPipeline>,
}

/// Makes a pipeline of a coordinator. Call shardline_coordinator_pipeline_start next.
///
/// @param coordinator a coordinator, typically fresh from shardline_coordinator_new. On success
///        the pipeline takes it over (with its strategy): do not use or free it afterwards. On
///        failure it stays the caller's.
/// @param out receives the new pipeline.
/// @return SHARDLINE_STATUS_REENTRANT_CALL when called from a callback of the coordinator's own
///         strategy.
///
/// Ownership: the caller frees `*out` with shardline_coordinator_pipeline_free.
/// Thread safety: callable from any thread; calls on one pipeline are serialised.
///
/// # Safety
/// `coordinator` is a live coordinator; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_new(
    coordinator: *mut shardline_coordinator,
    out: *mut *mut shardline_coordinator_pipeline,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        if unsafe { args::handle(coordinator, "coordinator") }?.in_use() {
            return Err(Failure::reentrant(
                "coordinator is running a decision (a callback cannot hand its own coordinator \
                 to a pipeline)",
            ));
        }
        // SAFETY: a live handle per the contract; the caller gives it up here.
        let c = unsafe { args::free(coordinator) }.ok_or_else(|| Failure::null("coordinator"))?;
        let pipeline = shardline_coordinator_pipeline {
            machine: Machine::new(
                "coordinator pipeline",
                CoordinatorPipeline::new(c.into_coordinator()),
            ),
        };
        // SAFETY: caller's contract.
        unsafe { out.write(args::into_handle(pipeline)) };
        Ok(())
    })
}

/// Releases a pipeline and the coordinator it took over. Operations still in flight are
/// forgotten.
///
/// @param pipeline the pipeline, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `pipeline` must not be used afterwards.
/// Thread safety: must not race with any other use of `pipeline`.
///
/// # Safety
/// `pipeline` is NULL or a live pipeline.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_free(
    pipeline: *mut shardline_coordinator_pipeline,
) {
    infallible((), || {
        // SAFETY: NULL or live per the contract.
        if unsafe { pipeline.as_ref() }.is_some_and(|p| !p.machine.in_use()) {
            // SAFETY: ownership returns once, per the contract.
            drop(unsafe { args::free(pipeline) });
        }
    })
}

/// Runs `f` on the pipeline behind a handle parameter.
unsafe fn with<R>(
    pipeline: *const shardline_coordinator_pipeline,
    f: impl FnOnce(&mut CoordinatorPipeline) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { args::handle(pipeline, "pipeline") }?
        .machine
        .with(f)
}

unsafe fn step(
    pipeline: *mut shardline_coordinator_pipeline,
    now_ms: u64,
    step: CoordinatorStep,
) -> shardline_status {
    guard(|| {
        // SAFETY: forwarded contract.
        unsafe { with(pipeline, |p| Ok(p.step(now_ms, step)?)) }
    })
}

/// Starts contending for the lease (the first operation is an "acquire").
///
/// @param pipeline the pipeline.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// # Safety
/// `pipeline` is a live pipeline.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_start(
    pipeline: *mut shardline_coordinator_pipeline,
    now_ms: u64,
) -> shardline_status {
    // SAFETY: caller's contract.
    unsafe { step(pipeline, now_ms, CoordinatorStep::Start) }
}

/// Runs every timer due at `now_ms`; call it at shardline_coordinator_pipeline_next_deadline.
///
/// @param pipeline the pipeline.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return as shardline_coordinator_on_timeout.
///
/// # Safety
/// `pipeline` is a live pipeline.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_on_timeout(
    pipeline: *mut shardline_coordinator_pipeline,
    now_ms: u64,
) -> shardline_status {
    // SAFETY: caller's contract.
    unsafe { step(pipeline, now_ms, CoordinatorStep::Timeout) }
}

/// Feeds one input in the JSON form shardline_coordinator_handle takes (a received envelope,
/// a member event, "stop", ...). Lease, load and store answers are not inputs here: they are
/// completions.
///
/// @param pipeline the pipeline.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param input_json the input.
/// @return as shardline_coordinator_handle.
///
/// Ownership: `input_json` stays the caller's.
///
/// # Safety
/// `pipeline` is a live pipeline; `input_json` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_handle(
    pipeline: *mut shardline_coordinator_pipeline,
    now_ms: u64,
    input_json: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(input_json, "input_json") }?;
        let input = CoordinatorInput::from_json(text, "input_json")?;
        // SAFETY: caller's contract.
        unsafe {
            with(pipeline, |p| {
                Ok(p.step(now_ms, CoordinatorStep::Input(input))?)
            })
        }
    })
}

/// Takes the next operation to carry out.
///
/// @param pipeline the pipeline.
/// @param out_ticket receives the operation's ticket (0 when there is none).
/// @param out_operation_json receives the operation as a JSON object, or NULL when there is
///        none now: nothing is queued, or everything waits behind a store write in flight.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_operation_json` with shardline_string_free.
///
/// # Safety
/// `pipeline` is a live pipeline; both outs are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_next_operation(
    pipeline: *mut shardline_coordinator_pipeline,
    out_ticket: *mut u64,
    out_operation_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let ticket = Out::new(out_ticket, "out_ticket")?;
        let out = Out::new(out_operation_json, "out_operation_json")?;
        // SAFETY: caller's contract.
        let next = unsafe { with(pipeline, |p| Ok(p.next_operation())) }?;
        // SAFETY: caller's contract.
        unsafe {
            match next {
                Some((t, op)) => {
                    ticket.write(t.0);
                    write_json(out, &op)
                }
                None => {
                    ticket.write(0);
                    out.write(std::ptr::null_mut());
                    Ok(())
                }
            }
        }
    })
}

/// Reports how operation `ticket` ended; the coordinator is told what it means, and what it
/// held behind a completed write can be taken next.
///
/// @param pipeline the pipeline.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param ticket the operation's ticket.
/// @param completion_json how it ended (see shardline_coordinator_pipeline).
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for invalid JSON, a ticket not in flight, or a
///         completion that does not answer that operation (the message names both); nothing
///         changes then. SHARDLINE_STATUS_INVALID_STATE for an answer the coordinator refuses
///         (a lease token that does not grow).
///
/// Ownership: `completion_json` stays the caller's.
///
/// # Safety
/// `pipeline` is a live pipeline; `completion_json` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_complete(
    pipeline: *mut shardline_coordinator_pipeline,
    now_ms: u64,
    ticket: u64,
    completion_json: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(completion_json, "completion_json") }?;
        let done: Completion = json::from_str(text, "completion_json")?;
        // SAFETY: caller's contract.
        unsafe {
            with(pipeline, |p| {
                Ok(p.complete(now_ms, Ticket(ticket), done)?)
            })
        }
    })
}

/// When shardline_coordinator_pipeline_on_timeout should run next.
///
/// @param pipeline the pipeline.
/// @param out_has receives false when no timer is set.
/// @param out_ms receives the deadline (0 when none).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// # Safety
/// `pipeline` is a live pipeline; the outs are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_next_deadline(
    pipeline: *const shardline_coordinator_pipeline,
    out_has: *mut bool,
    out_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        let has = Out::new(out_has, "out_has")?;
        let ms = Out::new(out_ms, "out_ms")?;
        // SAFETY: caller's contract.
        let deadline = unsafe { with(pipeline, |p| Ok(p.next_deadline())) }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(has, ms, deadline) };
        Ok(())
    })
}

/// Operations handed out and not completed yet.
///
/// @param pipeline the pipeline.
/// @param out_count receives the number.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// # Safety
/// `pipeline` is a live pipeline; `out_count` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_in_flight(
    pipeline: *const shardline_coordinator_pipeline,
    out_count: *mut usize,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_count, "out_count")?;
        // SAFETY: caller's contract.
        let n = unsafe { with(pipeline, |p| Ok(p.in_flight())) }?;
        // SAFETY: caller's contract.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// Takes the notices collected since the last call.
///
/// @param pipeline the pipeline.
/// @param out_json_array receives a JSON array of notices (`[]` when none).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_json_array` with shardline_string_free.
///
/// # Safety
/// `pipeline` is a live pipeline; `out_json_array` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_pipeline_take_notices(
    pipeline: *mut shardline_coordinator_pipeline,
    out_json_array: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json_array, "out_json_array")?;
        // SAFETY: caller's contract.
        let notices = unsafe { with(pipeline, |p| Ok(p.take_notices())) }?;
        // SAFETY: caller's contract.
        unsafe { write_json(out, &notices) }
    })
}
