//! Custom strategies: a host's own placement policy, plugged in as C function pointers and
//! driven through the same `AllocationStrategy` trait as the built-in ones.

use std::ffi::{c_char, c_void};
use std::mem::size_of;
use std::ptr;

use shardline_core::allocation::{AllocationState, ShardId};
use shardline_core::strategy::{Allocation, AllocationStrategy, Explanation, InProgress};
use shardline_core::Error;

use crate::args::{self, Out};
use crate::boundary::{guard, Failure, Result};
use crate::decision::{describe, shardline_decision, Op};
use crate::state::{shardline_state, with_view};
use crate::status::{code_name, shardline_status, shardline_status_code};
use crate::strategy::{shardline_strategy, Inner};
use crate::string::to_c;

/// Chooses a home for `shard`: call shardline_decision_set_region or
/// shardline_decision_set_pending on `out`, then return SHARDLINE_STATUS_OK. Any other return
/// value fails the allocation with SHARDLINE_STATUS_CALLBACK_FAILED.
///
/// `state` is a read-only view for the read accessors (shardline_state_region_count, ...);
/// `requester` is the asking region's id, or NULL for allocations the coordinator starts
/// itself. All pointers are valid only until the callback returns.
pub type shardline_allocate_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        state: *const shardline_state,
        requester: *const c_char,
        shard: *const c_char,
        out: *mut shardline_decision,
    ) -> shardline_status_code,
>;

/// Chooses shards to hand off: call shardline_decision_add_shard on `out` for each, in
/// decision order, then return SHARDLINE_STATUS_OK. `in_progress` lists the `n_in_progress`
/// shards whose hand-off is already under way (sorted; NULL when there are none). All pointers
/// are valid only until the callback returns.
pub type shardline_rebalance_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        state: *const shardline_state,
        in_progress: *const *const c_char,
        n_in_progress: usize,
        out: *mut shardline_decision,
    ) -> shardline_status_code,
>;

/// Releases the userdata of a custom strategy.
pub type shardline_userdata_free_callback = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// The callbacks of a custom strategy. shardline copies the struct, so it may live on the stack.
/// Fields are only ever appended: set `struct_size` to `sizeof(struct shardline_custom_strategy)`
/// so that a newer library knows which fields this host filled in.
#[repr(C)]
pub struct shardline_custom_strategy {
    /// sizeof(struct shardline_custom_strategy) as the host was compiled with.
    pub struct_size: u32,
    /// Passed as the first argument of every callback; shardline never reads it.
    pub userdata: *mut c_void,
    /// Required.
    pub allocate: shardline_allocate_callback,
    /// Optional: NULL means the strategy never hands shards off.
    pub rebalance: shardline_rebalance_callback,
    /// Optional: called once with `userdata` when the strategy is freed.
    pub userdata_free: shardline_userdata_free_callback,
}

pub struct CustomStrategy {
    name: String,
    userdata: *mut c_void,
    allocate: unsafe extern "C" fn(
        *mut c_void,
        *const shardline_state,
        *const c_char,
        *const c_char,
        *mut shardline_decision,
    ) -> shardline_status_code,
    rebalance: shardline_rebalance_callback,
    userdata_free: shardline_userdata_free_callback,
    /// The precise reason the last decision failed; the trait can only carry a core error.
    failure: Option<Failure>,
}

// SAFETY: the header makes the host promise that userdata and callbacks may be used from
// whichever thread uses the strategy; shardline calls them only on the calling thread, during
// a call, one call at a time (the strategy is not Sync).
unsafe impl Send for CustomStrategy {}

impl Drop for CustomStrategy {
    fn drop(&mut self) {
        if let Some(free) = self.userdata_free {
            // SAFETY: the host supplied this callback for exactly this userdata.
            unsafe { free(self.userdata) }
        }
    }
}

impl CustomStrategy {
    pub fn take_failure(&mut self) -> Option<Failure> {
        self.failure.take()
    }

    fn fail<T>(&mut self, failure: Failure) -> shardline_core::Result<T> {
        let e = Error::invalid_state(failure.message.clone());
        self.failure = Some(failure);
        Err(e)
    }

    fn callback_failed(&self, which: &str, code: shardline_status_code) -> Failure {
        Failure::new(
            shardline_status::CallbackFailed,
            format!(
                "the {which} callback of custom strategy {:?} returned {}",
                self.name,
                code_name(code)
            ),
        )
    }
}

impl AllocationStrategy for CustomStrategy {
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
        self.failure = None;
        let strings = requester
            .map(to_c)
            .transpose()
            .and_then(|r| Ok((r, to_c(shard)?)));
        let (requester_c, shard_c) = match strings {
            Ok(s) => s,
            Err(f) => return self.fail(f),
        };
        let mut decision = shardline_decision::new(Op::Allocate);
        let code = with_view(state, |view| {
            // SAFETY: every pointer is live for the call; the host vouched for the callback.
            unsafe {
                (self.allocate)(
                    self.userdata,
                    view,
                    requester_c.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
                    shard_c.as_ptr(),
                    &mut decision,
                )
            }
        });
        if code != shardline_status::Ok as u32 {
            let f = self.callback_failed("allocate", code);
            return self.fail(f);
        }
        let answer = match decision.allocation() {
            None => {
                return self.fail(Failure::invalid_state(format!(
                    "the allocate callback of custom strategy {:?} returned OK without deciding \
                     (call shardline_decision_set_region or shardline_decision_set_pending)",
                    self.name
                )))
            }
            Some(Allocation::Region(r)) if state.region(r).is_none() => {
                return self.fail(Failure::invalid_state(format!(
                    "the allocate callback of custom strategy {:?} chose region {r:?}, which is \
                     not registered",
                    self.name
                )))
            }
            Some(a) => a.clone(),
        };
        if let Some(e) = explain {
            *e = Explanation::new(&self.name, "allocate");
            e.summary = format!(
                "custom strategy decided {} for shard {shard:?}",
                describe(&answer)
            );
        }
        Ok(answer)
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &InProgress,
        explain: Option<&mut Explanation>,
    ) -> shardline_core::Result<Vec<ShardId>> {
        self.failure = None;
        let picked = match self.rebalance {
            None => Vec::new(),
            Some(callback) => {
                let mut sorted: Vec<&str> = in_progress.iter().map(|s| &**s).collect();
                sorted.sort_unstable();
                let owned = match sorted.into_iter().map(to_c).collect::<Result<Vec<_>>>() {
                    Ok(v) => v,
                    Err(f) => return self.fail(f),
                };
                let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
                let mut decision = shardline_decision::new(Op::Rebalance);
                let code = with_view(state, |view| {
                    // SAFETY: every pointer is live for the call; the host vouched for it.
                    unsafe {
                        callback(
                            self.userdata,
                            view,
                            if ptrs.is_empty() {
                                ptr::null()
                            } else {
                                ptrs.as_ptr()
                            },
                            ptrs.len(),
                            &mut decision,
                        )
                    }
                });
                if code != shardline_status::Ok as u32 {
                    let f = self.callback_failed("rebalance", code);
                    return self.fail(f);
                }
                let picked = decision.into_shards();
                if let Some(s) = picked.iter().find(|s| state.home_of(s).is_none()) {
                    return self.fail(Failure::invalid_state(format!(
                        "the rebalance callback of custom strategy {:?} picked shard {s:?}, \
                         which is not allocated",
                        self.name
                    )));
                }
                picked
            }
        };
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

/// Builds a strategy whose decisions the host makes through callbacks.
///
/// @param custom the callbacks; copied, so the struct itself need not outlive this call.
///        `struct_size` must be at least the size this library knows; `allocate` is required.
/// @param name nullable (default "custom"): the strategy's name in explanations and messages.
/// @param out receives the new strategy.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a too small `struct_size` or a NULL
///         `allocate`.
///
/// Ownership: the caller frees `*out` with shardline_strategy_free, which calls
/// `custom->userdata_free(custom->userdata)` once. On failure `userdata` stays the caller's
/// and `userdata_free` is not called.
/// Thread safety: callable from any thread. The callbacks run on whichever thread uses the
/// strategy, so `userdata` must be usable there.
///
/// # Safety
/// `custom` points to a readable struct of at least `custom->struct_size` bytes; `name` is NULL
/// or NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_strategy_new_custom(
    custom: *const shardline_custom_strategy,
    name: *const c_char,
    out: *mut *mut shardline_strategy,
) -> shardline_status {
    guard(|| {
        if custom.is_null() {
            return Err(Failure::null("custom"));
        }
        // SAFETY: caller's contract. Only the size is read until it proves the host's struct
        // is at least as large as ours (an older host's struct may be shorter).
        let struct_size = unsafe { ptr::addr_of!((*custom).struct_size).read() };
        let known = size_of::<shardline_custom_strategy>();
        if (struct_size as usize) < known {
            return Err(Failure::invalid_argument(format!(
                "custom.struct_size is {struct_size}, expected at least {known} \
                 (set it to sizeof(struct shardline_custom_strategy))"
            )));
        }
        // SAFETY: checked above: the struct is complete.
        let custom = unsafe { &*custom };
        // SAFETY: caller's contract.
        let name = unsafe { args::opt_str(name, "name") }?.unwrap_or("custom");
        let out = Out::new(out, "out")?;
        let allocate = custom
            .allocate
            .ok_or_else(|| Failure::invalid_argument("custom.allocate is NULL"))?;
        let strategy = CustomStrategy {
            name: name.to_owned(),
            userdata: custom.userdata,
            allocate,
            rebalance: custom.rebalance,
            userdata_free: custom.userdata_free,
            failure: None,
        };
        // SAFETY: caller's contract.
        unsafe {
            out.write(args::into_handle(shardline_strategy::new(Inner::Custom(
                strategy,
            ))))
        };
        Ok(())
    })
}
