//! `shardline_worker_id_registry` and `shardline_worker_id_holder`: worker ids and the fenced
//! Snowflake ids issued under them, as every binding has them (`shardline_bind::ids`). The
//! holder's clock is the host's (`shardline_id_clock_callbacks`) or the system's.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex, PoisonError};

use shardline_bind::ids::{Held, HolderInit, HostClock, SystemClock};
use shardline_bind::objects::{LayoutSpec, WorkerClaim};
use shardline_core::workerid::{InMemoryRegistry, Registry};

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::custom::shardline_userdata_free_callback;
use crate::status::{code_name, shardline_status, shardline_status_code};
use crate::step::{json_arg, versioned, write_json, write_opt_u64, Machine};

// ---- the in-memory registry -----------------------------------------------------------------

/// The embedded worker-id registry: holders acquiring from one registry compete for the same
/// ids. Its time moves only with shardline_worker_id_registry_advance_to, so a simulation
/// decides when a claim that was not kept alive expires. Made by
/// shardline_worker_id_registry_new, released by shardline_worker_id_registry_free.
pub struct shardline_worker_id_registry {
    registry: InMemoryRegistry,
}

/// Makes an empty registry whose time is 0.
///
/// @param out receives the registry.
/// @return SHARDLINE_STATUS_NULL_POINTER when `out` is NULL.
///
/// Ownership: the caller frees `*out` with shardline_worker_id_registry_free.
/// Thread safety: callable from any thread; the registry may be shared between threads.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_registry_new(
    out: *mut *mut shardline_worker_id_registry,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out, "out")?;
        let registry = shardline_worker_id_registry {
            registry: InMemoryRegistry::new(),
        };
        // SAFETY: caller's contract.
        unsafe { out.write(args::into_handle(registry)) };
        Ok(())
    })
}

/// Releases a registry. Holders acquired from it keep working: they share its contents.
///
/// @param registry the registry, or NULL (nothing happens).
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `registry` must not be used afterwards.
/// Thread safety: must not race with any other use of `registry`. Leaves the last error
/// untouched.
///
/// # Safety
/// `registry` is NULL or a live registry.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_registry_free(
    registry: *mut shardline_worker_id_registry,
) {
    // SAFETY: caller's contract.
    infallible((), || drop(unsafe { args::free(registry) }))
}

unsafe fn registry_of<'a>(
    registry: *const shardline_worker_id_registry,
) -> Result<&'a InMemoryRegistry> {
    // SAFETY: forwarded contract.
    Ok(&unsafe { args::handle(registry, "registry") }?.registry)
}

/// The registry's time.
///
/// @param registry the registry.
/// @param out_now_ms receives its time in milliseconds.
/// @return SHARDLINE_STATUS_NULL_POINTER for a NULL parameter.
///
/// Ownership: nothing to free.
/// Thread safety: any thread.
///
/// # Safety
/// `registry` is a live registry; `out_now_ms` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_registry_now_ms(
    registry: *const shardline_worker_id_registry,
    out_now_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for both.
        let r = unsafe { registry_of(registry) }?;
        let out = Out::new(out_now_ms, "out_now_ms")?;
        unsafe { out.write(r.now_ms()) };
        Ok(())
    })
}

/// Moves the registry's time forward to `now_ms` (never back): claims whose time to live has
/// passed without a keep-alive expire.
///
/// @param registry the registry.
/// @param now_ms the new time; an earlier one leaves the time as it is.
/// @param out_now_ms nullable; receives the registry's time afterwards.
/// @return SHARDLINE_STATUS_NULL_POINTER when `registry` is NULL.
///
/// Ownership: nothing to free.
/// Thread safety: any thread.
///
/// # Safety
/// `registry` is a live registry; `out_now_ms` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_registry_advance_to(
    registry: *const shardline_worker_id_registry,
    now_ms: u64,
    out_now_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let r = unsafe { registry_of(registry) }?;
        r.advance_to(now_ms);
        if let Some(out) = Out::nullable(out_now_ms) {
            // SAFETY: caller's contract.
            unsafe { out.write(r.now_ms()) };
        }
        Ok(())
    })
}

/// The live claims, by worker id, as a JSON array of
/// `{"workerId":0,"owner":"a","incarnation":1,"epoch":1}`.
///
/// @param registry the registry.
/// @param out_json receives the array (`[]` when no id is claimed).
/// @return SHARDLINE_STATUS_NULL_POINTER for a NULL parameter.
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: any thread.
///
/// # Safety
/// `registry` is a live registry; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_registry_live_claims(
    registry: *const shardline_worker_id_registry,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for both.
        let r = unsafe { registry_of(registry) }?;
        let out = Out::new(out_json, "out_json")?;
        unsafe { write_json(out, &WorkerClaim::all(r.live_claims())) }
    })
}

/// The time fence of a worker id, which outlives its claims: the epoch of its last claim and
/// the timestamps its holders may have used (ids are never issued at or below them again).
///
/// @param registry the registry.
/// @param worker_id the worker id.
/// @param out_json receives `{"epoch":1,"floorMs":..,"hwmMs":..}`, or NULL when the id was
///        never claimed.
/// @return SHARDLINE_STATUS_NULL_POINTER for a NULL parameter.
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: any thread.
///
/// # Safety
/// `registry` is a live registry; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_registry_fence(
    registry: *const shardline_worker_id_registry,
    worker_id: u32,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for both.
        let r = unsafe { registry_of(registry) }?;
        let out = Out::new(out_json, "out_json")?;
        match r.fence(worker_id) {
            Some(fence) => unsafe { write_json(out, &fence) },
            None => {
                unsafe { out.write(std::ptr::null_mut()) };
                Ok(())
            }
        }
    })
}

// ---- the holder's clock ---------------------------------------------------------------------

/// Reads a clock: write `*out_ms` and return SHARDLINE_STATUS_OK.
pub type shardline_clock_read_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, out_ms: *mut u64) -> shardline_status_code>;

/// Returns once the monotonic clock reads `monotonic_ms` (at once when it already does).
pub type shardline_sleep_until_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, monotonic_ms: u64) -> shardline_status_code>;

/// The clocks a worker-id holder keeps its id on: a simulation's, or a wrapper of the real
/// ones. shardline copies the struct, so it may live on the stack. Fields are only ever
/// appended: set `struct_size` to `sizeof(struct shardline_id_clock_callbacks)`.
///
/// A callback that returns a status other than SHARDLINE_STATUS_OK fails the holder call that
/// needed it with SHARDLINE_STATUS_CALLBACK_FAILED naming the callback (whatever the call
/// produced is dropped). Meanwhile the holder goes on with the last reading that worked (the
/// monotonic one never goes back), and a wait that failed counts as done, so every wait
/// ends. Callbacks run on the thread that called into the holder, during that call.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct shardline_id_clock_callbacks {
    /// sizeof(struct shardline_id_clock_callbacks) as the host was compiled with.
    pub struct_size: u32,
    /// Passed to every callback; shardline never reads it.
    pub userdata: *mut c_void,
    /// Required: milliseconds since the Unix epoch (it may jump, even back).
    pub wall_ms: shardline_clock_read_callback,
    /// Required: a clock that never goes back, in milliseconds.
    pub monotonic_ms: shardline_clock_read_callback,
    /// Required.
    pub sleep_until: shardline_sleep_until_callback,
    /// Optional: called once with `userdata` when the holder is freed.
    pub userdata_free: shardline_userdata_free_callback,
}

/// The first clock failure of a call, kept for the call's status.
type Kept = Arc<Mutex<Option<Failure>>>;

fn take_kept(kept: &Kept) -> Option<Failure> {
    kept.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// The host's clock callbacks as the shared holder's clock.
struct CallbackClock {
    cb: shardline_id_clock_callbacks,
    kept: Kept,
}

// SAFETY: the host promises that userdata and callbacks may be used from whichever thread uses
// the holder; shardline calls them only on the calling thread, one call at a time.
unsafe impl Send for CallbackClock {}

impl CallbackClock {
    fn check(&self, name: &str, code: shardline_status_code) -> std::result::Result<(), Failure> {
        if code == shardline_status::Ok as u32 {
            return Ok(());
        }
        Err(Failure::new(
            shardline_status::CallbackFailed,
            format!("the clock's {name} returned {}", code_name(code)),
        ))
    }

    fn read(
        &self,
        name: &str,
        f: shardline_clock_read_callback,
    ) -> std::result::Result<u64, shardline_bind::Failure> {
        let f = f.ok_or_else(|| Failure::internal(format!("the clock's {name} is NULL")))?;
        let mut ms = 0;
        // SAFETY: the host vouched for the callback; `ms` lives across the call.
        let code = unsafe { f(self.cb.userdata, &mut ms) };
        self.check(name, code)?;
        Ok(ms)
    }
}

impl HostClock for CallbackClock {
    fn wall_ms(&mut self) -> std::result::Result<u64, shardline_bind::Failure> {
        self.read("wall_ms", self.cb.wall_ms)
    }

    fn monotonic_ms(&mut self) -> std::result::Result<u64, shardline_bind::Failure> {
        self.read("monotonic_ms", self.cb.monotonic_ms)
    }

    fn sleep_until(
        &mut self,
        monotonic_ms: u64,
    ) -> std::result::Result<(), shardline_bind::Failure> {
        let f = self
            .cb
            .sleep_until
            .ok_or_else(|| Failure::internal("the clock's sleep_until is NULL"))?;
        // SAFETY: the host vouched for the callback.
        let code = unsafe { f(self.cb.userdata, monotonic_ms) };
        Ok(self.check("sleep_until", code)?)
    }

    fn keep(&mut self, failure: shardline_bind::Failure) {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(failure.into());
    }
}

/// Calls `userdata_free` once, when the holder handle goes (after the holder and its clock).
struct ClockUserdata(Option<shardline_id_clock_callbacks>);

impl Drop for ClockUserdata {
    fn drop(&mut self) {
        if let Some(free) = self
            .0
            .and_then(|cb| cb.userdata_free.map(|f| (f, cb.userdata)))
        {
            // SAFETY: the host supplied this callback for exactly this userdata.
            unsafe { (free.0)(free.1) }
        }
    }
}

// ---- the holder -----------------------------------------------------------------------------

type Holding = Held<Box<dyn Registry + Send>, Box<dyn HostClock + Send>>;

/// The holder and what outlives it. Fields drop in order: the clock's userdata goes last.
struct HolderState {
    held: Holding,
    kept: Kept,
    _userdata: ClockUserdata,
}

impl HolderState {
    /// Runs one holder call; a clock failure during it wins over its result.
    fn call<R>(
        &mut self,
        f: impl FnOnce(&mut Holding) -> std::result::Result<R, shardline_bind::Failure>,
    ) -> Result<R> {
        take_kept(&self.kept);
        let r = f(&mut self.held);
        match take_kept(&self.kept) {
            Some(failure) => Err(failure),
            None => r.map_err(Failure::from),
        }
    }
}

/// A reserved worker id, kept alive through the clock, and the fenced Snowflake generator
/// under it. Made by shardline_worker_id_holder_acquire (or, with etcd,
/// shardline_worker_id_holder_acquire_etcd); released by shardline_worker_id_holder_free.
/// Every call does the upkeep that is due (keep-alive, budget), waiting through the clock's
/// `sleep_until` only when the generator must. After shardline_worker_id_holder_release every
/// call but release and free gives SHARDLINE_STATUS_INVALID_STATE.
pub struct shardline_worker_id_holder {
    machine: Machine<HolderState>,
}

/// Reserves a worker id in `session` and makes the handle; shared by every registry.
///
/// # Safety
/// `clock` is NULL or as for [`versioned`]; `options_json` is NULL or NUL-terminated; `out` is
/// valid for a write.
pub(crate) unsafe fn acquire(
    session: impl FnOnce(u64) -> Box<dyn Registry + Send>,
    clock: *const shardline_id_clock_callbacks,
    options_json: *const c_char,
    out: *mut *mut shardline_worker_id_holder,
) -> Result<()> {
    // SAFETY: caller's contract, for every parameter.
    let init: HolderInit = unsafe { json_arg(options_json, "options_json") }?;
    let callbacks = if clock.is_null() {
        None
    } else {
        let cb = *unsafe { versioned(clock, "clock", "shardline_id_clock_callbacks") }?;
        let missing = [
            ("wall_ms", cb.wall_ms.is_none()),
            ("monotonic_ms", cb.monotonic_ms.is_none()),
            ("sleep_until", cb.sleep_until.is_none()),
        ];
        if let Some((name, _)) = missing.iter().find(|(_, m)| *m) {
            return Err(Failure::invalid_argument(format!(
                "clock->{name} is NULL (it is required)"
            )));
        }
        Some(cb)
    };
    let out = Out::new(out, "out")?;
    let (options, ttl_ms) = init.options()?;
    let kept = Kept::default();
    let host: Box<dyn HostClock + Send> = match callbacks {
        Some(cb) => Box::new(CallbackClock {
            cb,
            kept: kept.clone(),
        }),
        None => Box::new(SystemClock::default()),
    };
    let held = Held::acquire(session(ttl_ms), options, host);
    let held = match take_kept(&kept) {
        Some(failure) => Err(failure),
        None => held.map_err(Failure::from),
    }?;
    let state = HolderState {
        held,
        kept,
        _userdata: ClockUserdata(callbacks),
    };
    let holder = shardline_worker_id_holder {
        machine: Machine::new("worker-id holder", state),
    };
    // SAFETY: caller's contract.
    unsafe { out.write(args::into_handle(holder)) };
    Ok(())
}

/// Reserves the lowest free worker id in `registry` (or one of the lowest, with
/// `"policy":"spread:N"`), confirms it, and returns a holder issuing Snowflake ids under it.
///
/// @param registry the registry to reserve in.
/// @param clock nullable: the clocks to keep the id on; NULL uses the system's (the wall clock
///        and a monotonic one; waits then block the calling thread).
/// @param options_json the options: `{"owner":"node-1","incarnation":1}` plus, optionally,
///        `"ttlMs"` (10000: how long a claim lives without a keep-alive), `"workerBits"` (10),
///        `"layout"` (`{"timestampBits","workerBits","sequenceBits","epochMs"}`),
///        `"policy"` ("lowest" or "spread:N") and `"seed"` (0).
/// @param out receives the holder.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for options that do not parse or fit (the message
///         names the field), a too small `clock->struct_size` or a NULL required callback;
///         SHARDLINE_STATUS_NO_CANDIDATES when every worker id is taken;
///         SHARDLINE_STATUS_CALLBACK_FAILED naming the clock callback that failed;
///         SHARDLINE_STATUS_INVALID_STATE when the registry failed.
///
/// Ownership: the caller frees `*out` with shardline_worker_id_holder_free, which calls
/// `clock->userdata_free(clock->userdata)` once. On failure `userdata` stays the caller's and
/// `userdata_free` is not called. `registry` stays the caller's and may be freed before the
/// holder.
/// Thread safety: callable from any thread. The clock's callbacks run on whichever thread uses
/// the holder, so `userdata` must be usable there.
///
/// # Safety
/// `registry` is a live registry; `clock` is NULL or points to a readable struct of at least
/// `clock->struct_size` bytes; `options_json` is NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_acquire(
    registry: *const shardline_worker_id_registry,
    clock: *const shardline_id_clock_callbacks,
    options_json: *const c_char,
    out: *mut *mut shardline_worker_id_holder,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for every parameter.
        let r = unsafe { registry_of(registry) }?;
        unsafe { acquire(|ttl| Box::new(r.session(ttl)), clock, options_json, out) }
    })
}

/// Releases the worker id when still held (handing back what its budget did not use, so a
/// successor may start right away), the holder, and the clock's userdata (through
/// `userdata_free`).
///
/// @param holder the holder, or NULL (nothing happens). A holder whose call is under way (freed
///        from one of its clock's callbacks) is not released.
/// @return nothing; it cannot fail (a clock or registry failure during the release is ignored:
///         the claim then expires after its time to live).
///
/// Ownership: takes back ownership; `holder` must not be used afterwards.
/// Thread safety: must not race with any other use of `holder`. Leaves the last error
/// untouched.
///
/// # Safety
/// `holder` is NULL or a live holder.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_free(holder: *mut shardline_worker_id_holder) {
    infallible((), || {
        // SAFETY: NULL or live per the contract.
        if unsafe { holder.as_ref() }.is_some_and(|h| !h.machine.in_use()) {
            // SAFETY: ownership returns once, per the contract.
            if let Some(h) = unsafe { args::free(holder) } {
                let mut state = h.machine.into_inner();
                drop(state.held.release());
            }
        }
    })
}

unsafe fn with_holder<R>(
    holder: *const shardline_worker_id_holder,
    f: impl FnOnce(&mut HolderState) -> Result<R>,
) -> Result<R> {
    // SAFETY: forwarded contract.
    unsafe { args::handle(holder, "holder") }?.machine.with(f)
}

/// Runs `f` on the holder and writes what it answers.
unsafe fn answer<T>(
    holder: *const shardline_worker_id_holder,
    out: *mut T,
    param: &str,
    f: impl FnOnce(&mut HolderState) -> Result<T>,
) -> Result<()> {
    let out = Out::new(out, param)?;
    // SAFETY: caller's contract.
    let v = unsafe { with_holder(holder, f) }?;
    // SAFETY: caller's contract.
    unsafe { out.write(v) };
    Ok(())
}

/// Issues the next Snowflake id: unique among every holder of the registry, and above every
/// timestamp an earlier holder of the same worker id may have used. Keeps the reservation alive
/// as needed and waits through the clock when the generator must (sequence exhausted, clock
/// behind).
///
/// @param holder the holder.
/// @param out_id receives the id.
/// @return SHARDLINE_STATUS_INVALID_STATE when the id was lost (expired, taken over) or
///         released, the registry failed, or the clock stuck;
///         SHARDLINE_STATUS_CALLBACK_FAILED naming the clock callback that failed (no id is
///         written then); SHARDLINE_STATUS_REENTRANT_CALL from one of its clock's callbacks.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder; `out_id` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_next_id(
    holder: *const shardline_worker_id_holder,
    out_id: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { answer(holder, out_id, "out_id", |s| s.call(|h| h.next_id())) }
    })
}

/// Does the upkeep that is due now (keep-alive, extending the budget) and reports when the next
/// is due; a host that issues ids rarely calls it at that time to keep its id.
///
/// @param holder the holder.
/// @param out_next_ms receives the monotonic time at which to call again.
/// @return SHARDLINE_STATUS_INVALID_STATE when the id was lost or released;
///         SHARDLINE_STATUS_CALLBACK_FAILED naming the clock callback that failed;
///         SHARDLINE_STATUS_REENTRANT_CALL from one of its clock's callbacks.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder; `out_next_ms` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_maintain(
    holder: *const shardline_worker_id_holder,
    out_next_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            answer(holder, out_next_ms, "out_next_ms", |s| {
                s.call(|h| h.maintain())
            })
        }
    })
}

/// Keeps the id alive, sleeping through the clock, until the monotonic clock reads `until_ms`.
///
/// @param holder the holder.
/// @param until_ms the monotonic time to hold until.
/// @return as shardline_worker_id_holder_maintain.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_hold_until(
    holder: *const shardline_worker_id_holder,
    until_ms: u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe { with_holder(holder, |s| s.call(|h| h.hold_until(until_ms))) }
    })
}

/// Hands the id back: the unused budget and the claim, so the lowest free id is this one again
/// for the next holder. Idempotent; the handle stays to be freed.
///
/// @param holder the holder.
/// @return SHARDLINE_STATUS_CALLBACK_FAILED naming the clock callback that failed (the id is
///         released all the same); SHARDLINE_STATUS_REENTRANT_CALL from one of its clock's
///         callbacks. A registry that cannot be reached is not an error: the claim then expires
///         after its time to live.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_release(
    holder: *const shardline_worker_id_holder,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            with_holder(holder, |s| {
                s.call(|h| {
                    drop(h.release());
                    Ok(())
                })
            })
        }
    })
}

/// The worker id held.
///
/// @param holder the holder.
/// @param out_worker_id receives the id.
/// @return SHARDLINE_STATUS_INVALID_STATE after shardline_worker_id_holder_release.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder; `out_worker_id` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_worker_id(
    holder: *const shardline_worker_id_holder,
    out_worker_id: *mut u32,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            answer(holder, out_worker_id, "out_worker_id", |s| {
                Ok(s.held.holder()?.worker_id())
            })
        }
    })
}

/// The epoch of the claim: it grows every time the worker id is claimed again.
///
/// @param holder the holder.
/// @param out_epoch receives the epoch.
/// @return SHARDLINE_STATUS_INVALID_STATE after shardline_worker_id_holder_release.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder; `out_epoch` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_epoch(
    holder: *const shardline_worker_id_holder,
    out_epoch: *mut u64,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        unsafe {
            answer(holder, out_epoch, "out_epoch", |s| {
                Ok(s.held.holder()?.epoch())
            })
        }
    })
}

/// The tenure of the claim: the wall-clock floor ids are issued above (timestamps an earlier
/// holder may have used), the budget (the wall time ids may be issued up to before the
/// registry must raise it), and the monotonic time the claim is valid until (none before it
/// was confirmed).
///
/// @param holder the holder.
/// @param out_floor_ms receives the floor (Unix ms).
/// @param out_budget_ms receives the budget (Unix ms).
/// @param out_has_valid_until receives whether the claim has a deadline.
/// @param out_valid_until_ms receives the deadline (monotonic ms; 0 when none).
/// @return SHARDLINE_STATUS_INVALID_STATE after shardline_worker_id_holder_release.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder; the out-parameters are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_tenure(
    holder: *const shardline_worker_id_holder,
    out_floor_ms: *mut u64,
    out_budget_ms: *mut u64,
    out_has_valid_until: *mut bool,
    out_valid_until_ms: *mut u64,
) -> shardline_status {
    guard(|| {
        let floor = Out::new(out_floor_ms, "out_floor_ms")?;
        let budget = Out::new(out_budget_ms, "out_budget_ms")?;
        let has = Out::new(out_has_valid_until, "out_has_valid_until")?;
        let until = Out::new(out_valid_until_ms, "out_valid_until_ms")?;
        // SAFETY: caller's contract.
        let (f, b, u) = unsafe {
            with_holder(holder, |s| {
                let t = s.held.holder()?.tenure();
                Ok((t.floor_ms(), t.budget_ms(), t.valid_until_ms()))
            })
        }?;
        // SAFETY: caller's contract.
        unsafe {
            floor.write(f);
            budget.write(b);
            write_opt_u64(has, until, u);
        }
        Ok(())
    })
}

/// The Snowflake layout ids are issued in, as JSON
/// `{"timestampBits":41,"workerBits":10,"sequenceBits":12,"epochMs":..}`.
///
/// @param holder the holder.
/// @param out_json receives the layout.
/// @return SHARDLINE_STATUS_INVALID_STATE after shardline_worker_id_holder_release.
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: any thread; calls on one holder are serialised (see the overview).
///
/// # Safety
/// `holder` is a live holder; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_worker_id_holder_layout(
    holder: *const shardline_worker_id_holder,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        let out = Out::new(out_json, "out_json")?;
        // SAFETY: caller's contract.
        let spec = unsafe {
            with_holder(holder, |s| {
                Ok(LayoutSpec::from(s.held.holder()?.generator().layout()))
            })
        }?;
        // SAFETY: caller's contract.
        unsafe { write_json(out, &spec) }
    })
}
