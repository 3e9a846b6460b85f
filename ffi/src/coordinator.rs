//! `shardline_coordinator`: the shard coordinator's sans-IO step machine, driven with JSON
//! inputs and returning JSON outputs (the step form of `shardline_core::step_json`).

use std::ffi::{c_char, CStr};

use shardline_core::address::Address;
use shardline_core::coordinator::{Coordinator, CoordinatorConfig, Input, Phase};
use shardline_core::step_json;

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::status::shardline_status;
use crate::step::{json_arg, write_json, write_opt_u64, Machine};
use crate::strategy::shardline_strategy;
use crate::string::to_c;

/// A shard coordinator (Pekko's ShardCoordinator) gated by a fenced lease. Made by
/// shardline_coordinator_new, released by shardline_coordinator_free.
///
/// The host feeds inputs with its monotonic time in milliseconds, calls
/// shardline_coordinator_on_timeout at shardline_coordinator_next_deadline, and carries out
/// the outputs in order: a "persist" or "saveSnapshot" output must be durable before any later
/// output is carried out; when a write fails, drop the rest of the queue and feed
/// `{"type":"storeFailed","fenced":...}`.
///
/// Inputs are JSON objects tagged by "type":
/// `{"type":"receive","envelope":{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"getShardHome","shard":"7"}}}}`,
/// `{"type":"member","member":{"address":"pekko://sys@host:2552","status":"Up","appVersion":"1.0.0","dataCenter":"default","upNumber":1}}`
/// (all but address optional), `{"type":"memberRemoved","address":..}`,
/// `{"type":"reachability","address":..,"reachable":false}`, `{"type":"regionTerminated","region":..}`,
/// `{"type":"leaseGranted","token":1,"validUntilMs":..}`, `{"type":"leaseDenied"}`,
/// `{"type":"leaseRenewed","token":..,"validUntilMs":..}`, `{"type":"leaseRenewFailed","token":..}`,
/// `{"type":"leaseLost","token":..}`, `{"type":"stateLoaded","state":{"snapshot":null,"events":[]}}`,
/// `{"type":"stateLoadFailed","fenced":..}`, `{"type":"storeFailed","fenced":..}`,
/// `{"type":"preparingForShutdown"}`, `{"type":"stop"}`.
///
/// Outputs are JSON objects tagged by "type": `{"type":"send","envelope":{..}}`,
/// `{"type":"persist","token":..,"record":{..}}`, `{"type":"saveSnapshot","token":..,"snapshot":{..}}`,
/// `{"type":"lease","request":{"type":"acquire"|"renew"|"release",..}}`, `{"type":"loadState","token":..}`,
/// `{"type":"notice","notice":{"type":"active"|"steppedDown"|..,..}}`.
pub struct shardline_coordinator {
    machine: Machine<Coordinator>,
}

/// Creates a coordinator in the idle phase; shardline_coordinator_start begins contending for
/// the lease.
///
/// @param strategy the placement policy, built-in or custom. On success the coordinator takes
///        it over: do not use or free `strategy` afterwards (shardline_coordinator_free releases
///        it, calling a custom strategy's `userdata_free`). On failure it stays the caller's.
///        A custom strategy's callbacks then run during the coordinator's calls, with the
///        coordinator's allocation state as their view; an allocation they fail is reported as
///        an "allocationFailed" notice.
/// @param self_address the node the coordinator runs on, e.g. "pekko://app@10.0.0.1:2552" (a
///        region there may register without being an Up member, and counts as local).
/// @param config_json nullable (Pekko's defaults): settings such as
///        `{"rebalanceIntervalMs":10000,"handoffTimeoutMs":60000,"rememberEntities":false}`.
/// @param out receives the new coordinator.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a malformed address, invalid JSON or an
///         unknown or out-of-range setting (the message names the field);
///         SHARDLINE_STATUS_REENTRANT_CALL when `strategy` is running a decision (called from
///         one of its callbacks).
///
/// Ownership: the caller frees `*out` with shardline_coordinator_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `strategy` is a live strategy; strings are NUL-terminated (or NULL where nullable); `out`
/// is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_new(
    strategy: *mut shardline_strategy,
    self_address: *const c_char,
    config_json: *const c_char,
    out: *mut *mut shardline_coordinator,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let s = unsafe { args::handle(strategy, "strategy") }?;
        let self_address = unsafe { args::str(self_address, "self_address") }?;
        let self_address =
            Address::parse(self_address).map_err(|e| Failure::from(e.context("self_address")))?;
        let config = if config_json.is_null() {
            CoordinatorConfig::default()
        } else {
            let c: CoordinatorConfig = unsafe { json_arg(config_json, "config_json") }?;
            c.validate()?;
            c
        };
        let out = Out::new(out, "out")?;
        if s.in_use() {
            return Err(Failure::reentrant(
                "strategy is running a decision (a callback cannot hand its own strategy to a \
                 coordinator)",
            ));
        }
        // Validated above (Coordinator::new only re-checks the config), so ownership moves
        // only on success.
        // SAFETY: a live strategy handle per the contract; the caller gives it up here.
        let policy = unsafe { args::free(strategy) }
            .ok_or_else(|| Failure::null("strategy"))?
            .into_strategy();
        let coordinator = Coordinator::new(config, policy, self_address)?;
        // SAFETY: caller's contract.
        unsafe {
            out.write(args::into_handle(shardline_coordinator {
                machine: Machine::new("coordinator", coordinator),
            }))
        };
        Ok(())
    })
}

/// Releases a coordinator and the strategy it took over.
///
/// @param coordinator the coordinator, or NULL (nothing happens). A coordinator whose call is
///        under way (freed from a strategy callback) is not released.
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `coordinator` must not be used afterwards. Outputs not
/// polled yet are dropped.
/// Thread safety: must not race with any other use of `coordinator`. Leaves the last error
/// untouched.
///
/// # Safety
/// `coordinator` is NULL or a live coordinator.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_free(coordinator: *mut shardline_coordinator) {
    infallible((), || {
        // SAFETY: NULL or live per the contract.
        if unsafe { coordinator.as_ref() }.is_some_and(|c| !c.machine.in_use()) {
            // SAFETY: ownership returns once, per the contract.
            drop(unsafe { args::free(coordinator) });
        }
    })
}

/// Runs `f` on the coordinator behind a handle parameter.
unsafe fn with<R>(
    coordinator: *const shardline_coordinator,
    f: impl FnOnce(&mut Coordinator) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { args::handle(coordinator, "coordinator") }?
        .machine
        .with(f)
}

/// Starts contending for the lease: queues a lease "acquire" request (nothing else happens
/// before it is granted). Does nothing after the first call.
///
/// @param coordinator the coordinator.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_start(
    coordinator: *mut shardline_coordinator,
    now_ms: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            with(coordinator, |c| {
                c.start(now_ms);
                Ok(())
            })
        }
    })
}

/// Feeds one input (see shardline_coordinator for the JSON forms); outputs it causes are
/// queued for shardline_coordinator_poll_output / _drain_outputs.
///
/// @param coordinator the coordinator.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @param input_json the input, e.g. `{"type":"leaseGranted","token":1,"validUntilMs":60000}`.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for invalid JSON, an unknown "type", a missing,
///         extra or mistyped field (the message names it, e.g.
///         "input_json.envelope.message: unknown variant ..."), or a malformed address;
///         SHARDLINE_STATUS_INVALID_STATE for a host mistake the coordinator refuses (a lease
///         token that does not exceed every token seen before, a stored state that breaks its
///         own rules); SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///         Protocol anomalies (late acks, unknown regions) are ignored, not errors. An input
///         refused as INVALID_ARGUMENT changes nothing.
///
/// Ownership: `input_json` stays the caller's.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `input_json` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_handle(
    coordinator: *mut shardline_coordinator,
    now_ms: u64,
    input_json: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(input_json, "input_json") }?;
        let input: Input = step_json::coordinator_input(text, "input_json")?;
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| Ok(c.handle(now_ms, input)?)) }
    })
}

/// Runs every timer due at `now_ms` (lease expiry and renewal, rebalancing, hand-off
/// timeouts, re-sends). Call it at shardline_coordinator_next_deadline; calling early or often
/// is harmless.
///
/// @param coordinator the coordinator.
/// @param now_ms the host's monotonic clock in milliseconds.
/// @return SHARDLINE_STATUS_INVALID_STATE when a timer finds the stored state broken;
///         SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_on_timeout(
    coordinator: *mut shardline_coordinator,
    now_ms: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| Ok(c.on_timeout(now_ms)?)) }
    })
}

/// When shardline_coordinator_on_timeout should run next.
///
/// @param coordinator the coordinator.
/// @param out_has receives false when no timer is set.
/// @param out_ms receives the deadline on the host's monotonic clock (0 when none).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `out_has` and `out_ms` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_next_deadline(
    coordinator: *const shardline_coordinator,
    out_has: *mut bool,
    out_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        let has = Out::new(out_has, "out_has")?;
        let ms = Out::new(out_ms, "out_ms")?;
        // SAFETY: caller's contract.
        let deadline = unsafe { with(coordinator, |c| Ok(c.next_deadline())) }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(has, ms, deadline) };
        Ok(())
    })
}

/// Takes the next queued output (see shardline_coordinator for the JSON forms).
///
/// @param coordinator the coordinator.
/// @param out_json receives the output as a JSON object, or NULL when the queue is empty.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_poll_output(
    coordinator: *mut shardline_coordinator,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json, "out_json")?;
        // SAFETY: caller's contract.
        unsafe {
            with(coordinator, |c| match c.poll_output() {
                Some(o) => write_json(out, &o),
                None => {
                    out.write(std::ptr::null_mut());
                    Ok(())
                }
            })
        }
    })
}

/// Takes every queued output at once, in the order they must be carried out.
///
/// @param coordinator the coordinator.
/// @param out_json_array receives a JSON array of outputs (`[]` when the queue is empty).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_json_array` with shardline_string_free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `out_json_array` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_drain_outputs(
    coordinator: *mut shardline_coordinator,
    out_json_array: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json_array, "out_json_array")?;
        // SAFETY: caller's contract.
        unsafe { with(coordinator, |c| write_json(out, &c.drain_outputs())) }
    })
}

fn phase_cstr(p: Phase) -> &'static CStr {
    match p {
        Phase::Idle => c"idle",
        Phase::AcquiringLease => c"acquiringLease",
        Phase::Loading => c"loading",
        Phase::Active => c"active",
        Phase::Stopped => c"stopped",
    }
}

/// The coordinator's phase: "idle", "acquiringLease", "loading", "active" or "stopped".
///
/// @param coordinator the coordinator.
/// @param out receives a static string.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: static; never freed.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_phase(
    coordinator: *const shardline_coordinator,
    out: *mut *const c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let phase = unsafe { with(coordinator, |c| Ok(c.phase())) }?;
        debug_assert_eq!(
            phase_cstr(phase).to_str().ok(),
            Some(step_json::phase_name(phase))
        );
        // SAFETY: caller's contract.
        unsafe { out.write(phase_cstr(phase).as_ptr()) };
        Ok(())
    })
}

/// Whether the coordinator holds the lease and has restored its state (it answers regions
/// only then).
///
/// @param coordinator the coordinator.
/// @param out receives the flag.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_is_active(
    coordinator: *const shardline_coordinator,
    out: *mut bool,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        // SAFETY: caller's contract.
        let active = unsafe { with(coordinator, |c| Ok(c.is_active())) }?;
        // SAFETY: caller's contract.
        unsafe { out.write(active) };
        Ok(())
    })
}

/// The fencing token of the lease grant the coordinator holds.
///
/// @param coordinator the coordinator.
/// @param out_has receives false when it holds no grant.
/// @param out_token receives the token (0 when none).
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: nothing to free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `out_has` and `out_token` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_token(
    coordinator: *const shardline_coordinator,
    out_has: *mut bool,
    out_token: *mut u64,
) -> shardline_status {
    guard(|| {
        let has = Out::new(out_has, "out_has")?;
        let token = Out::new(out_token, "out_token")?;
        // SAFETY: caller's contract.
        let t = unsafe { with(coordinator, |c| Ok(c.token().map(|t| t.0))) }?;
        // SAFETY: caller's contract.
        unsafe { write_opt_u64(has, token, t) };
        Ok(())
    })
}

/// The region a shard is allocated to in the coordinator's stored state.
///
/// @param coordinator the coordinator.
/// @param shard the shard id.
/// @param out_region receives the region id, or NULL when the shard is not allocated.
/// @return SHARDLINE_STATUS_REENTRANT_CALL from a callback of its own strategy.
///
/// Ownership: the caller frees `*out_region` with shardline_string_free.
/// Thread safety: one thread at a time per coordinator.
///
/// # Safety
/// `coordinator` is a live coordinator; `shard` is NUL-terminated; `out_region` is valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_coordinator_home_of(
    coordinator: *const shardline_coordinator,
    shard: *const c_char,
    out_region: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let shard = unsafe { args::str(shard, "shard") }?;
        let out = Out::new(out_region, "out_region")?;
        // SAFETY: caller's contract.
        let home = unsafe {
            with(coordinator, |c| {
                c.state().home_of(shard).map(|r| to_c(r)).transpose()
            })
        }?;
        // SAFETY: caller's contract.
        unsafe { out.write(home.map_or(std::ptr::null_mut(), |r| r.into_raw())) };
        Ok(())
    })
}
