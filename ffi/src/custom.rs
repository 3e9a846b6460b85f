//! Custom strategies: a host's own placement policy, plugged in as C function pointers and
//! driven through the same `AllocationStrategy` trait as the built-in ones.

use std::ffi::{c_char, c_void};
use std::mem::size_of;
use std::ptr;

use shardline_bind::strategy::{wrong_allocation, StrategyHost};
use shardline_bind::Failure as BindFailure;
use shardline_core::model::AllocationState;
use shardline_core::strategy::Allocation;

use crate::args::{self, Out};
use crate::boundary::{guard, Failure, Result};
use crate::decision::{shardline_decision, Op};
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

/// The host side of a custom strategy: its callbacks and userdata. Checking the answers and
/// explaining them is the shared adapter's job ([`shardline_bind::CustomStrategy`]).
pub struct CallbackHost {
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

pub(crate) type HostStrategy = shardline_bind::CustomStrategy<CallbackHost>;

/// The status and message of the last failed decision of `strategy`, taken.
pub fn take_failure(strategy: &mut HostStrategy) -> Option<Failure> {
    strategy.host_mut().failure.take()
}

// SAFETY: the header makes the host promise that userdata and callbacks may be used from
// whichever thread uses the strategy; shardline calls them only on the calling thread, during
// a call, one call at a time (the strategy is not Sync).
unsafe impl Send for CallbackHost {}

impl Drop for CallbackHost {
    fn drop(&mut self) {
        if let Some(free) = self.userdata_free {
            // SAFETY: the host supplied this callback for exactly this userdata.
            unsafe { free(self.userdata) }
        }
    }
}

fn checked(code: shardline_status_code) -> Result<(), BindFailure> {
    if code == shardline_status::Ok as u32 {
        return Ok(());
    }
    Err(BindFailure::callback_failed(format!(
        "returned {}",
        code_name(code)
    )))
}

impl StrategyHost for CallbackHost {
    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
    ) -> Result<Option<String>, BindFailure> {
        let requester_c = requester.map(to_c).transpose()?;
        let shard_c = to_c(shard)?;
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
        checked(code)?;
        match decision.allocation() {
            None => Err(wrong_allocation(
                "OK without deciding (call shardline_decision_set_region or \
                 shardline_decision_set_pending)",
            )),
            Some(Allocation::Region(r)) => Ok(Some(r.to_string())),
            Some(Allocation::Pending) => Ok(None),
        }
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &[&str],
    ) -> Result<Vec<String>, BindFailure> {
        let Some(callback) = self.rebalance else {
            return Ok(Vec::new());
        };
        let owned = in_progress
            .iter()
            .map(|s| to_c(s))
            .collect::<Result<Vec<_>>>()?;
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
        checked(code)?;
        Ok(decision
            .into_shards()
            .into_iter()
            .map(|s| s.to_string())
            .collect())
    }

    fn keep(&mut self, failure: BindFailure) -> shardline_core::Error {
        let e = failure.to_core();
        self.failure = Some(failure.into());
        e
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
        let strategy = HostStrategy::new(
            name,
            CallbackHost {
                userdata: custom.userdata,
                allocate,
                rebalance: custom.rebalance,
                userdata_free: custom.userdata_free,
                failure: None,
            },
        );
        // SAFETY: caller's contract.
        unsafe {
            out.write(args::into_handle(shardline_strategy::new(Inner::Custom(
                strategy,
            ))))
        };
        Ok(())
    })
}
