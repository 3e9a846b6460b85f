//! `shardline_state`: the allocation map (regions, their shards, the cluster view) a host keeps
//! up to date incrementally and hands to strategies.

use std::ffi::c_char;
use std::ptr::NonNull;

use shardline_bind::HandleCell;
use shardline_core::model::Address;
use shardline_core::model::Version;
use shardline_core::model::{AllocationState, Region};
use shardline_core::model::{ClusterView, Member, MemberStatus};

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::shard_list::shardline_shard_list;
use crate::status::shardline_status;
use crate::string::to_c;

/// Regions (in map order, which breaks ties), their shards (oldest first), and the cluster
/// members strategies consult. Made by shardline_state_new, released by shardline_state_free.
/// Callbacks receive a read-only view of it.
pub struct shardline_state {
    access: Access,
}

// The owned variant already sits in the handle's own heap allocation, and views are
// short-lived stack values, so the size difference costs nothing worth an extra box.
#[allow(clippy::large_enum_variant)]
enum Access {
    Owned(HandleCell<AllocationState>),
    /// What a custom strategy's callback receives: the state being decided on, lent for the
    /// duration of the callback (see [`with_view`]).
    View(NonNull<AllocationState>),
}

/// Lends `state` to C code as a read-only `shardline_state` for the duration of `f`.
pub fn with_view<R>(state: &AllocationState, f: impl FnOnce(*const shardline_state) -> R) -> R {
    let view = shardline_state {
        access: Access::View(NonNull::from(state)),
    };
    f(&view)
}

impl shardline_state {
    pub fn read<R>(&self, f: impl FnOnce(&AllocationState) -> Result<R>) -> Result<R> {
        match &self.access {
            Access::Owned(cell) => {
                let state = cell.read()?;
                f(&state)
            }
            // SAFETY: a view only exists inside `with_view`, which holds the borrow.
            Access::View(p) => f(unsafe { p.as_ref() }),
        }
    }

    /// Runs `f` with `first` (a strategy) taken for the call and then this state for reading,
    /// both by one [`HandleCell::hold_and_read`]: the order and answers of taking `first` and
    /// then [`shardline_state::read`], with both given back together. A view is already
    /// borrowed, so only `first` is taken.
    #[inline]
    pub fn read_holding<A, R>(
        &self,
        first: &HandleCell<A>,
        f: impl FnOnce(&mut A, &AllocationState) -> Result<R>,
    ) -> Result<R> {
        match &self.access {
            Access::Owned(cell) => {
                let mut both = first.hold_and_read(cell)?;
                let (first, state) = both.parts();
                f(first, state)
            }
            Access::View(p) => {
                let mut first = first.hold()?;
                // SAFETY: a view only exists inside `with_view`, which holds the borrow.
                f(&mut first, unsafe { p.as_ref() })
            }
        }
    }

    fn write<R>(&self, f: impl FnOnce(&mut AllocationState) -> Result<R>) -> Result<R> {
        match &self.access {
            Access::Owned(cell) => {
                let mut state = cell.hold()?;
                f(&mut state)
            }
            Access::View(_) => Err(Failure::reentrant(
                "the state passed to a callback is read-only while the strategy decides",
            )),
        }
    }

    fn region_at<R>(&self, index: usize, f: impl FnOnce(&Region) -> Result<R>) -> Result<R> {
        self.read(|s| {
            let count = s.region_count();
            let r = s.regions().nth(index).ok_or_else(|| {
                Failure::invalid_argument(format!(
                    "index {index} is out of range: the state has {count} regions"
                ))
            })?;
            f(r)
        })
    }
}

fn address(text: &str, param: &str) -> Result<Address> {
    Address::parse(text).map_err(|e| Failure::from(e.context(param)))
}

/// Creates an empty allocation state.
///
/// @param self_address the coordinator's own node address, e.g. "pekko://app@10.0.0.1:2552"
///        (local regions run there; its data center decides which members gate rebalancing).
/// @param out receives the new state.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `self_address` is not an address.
///
/// Ownership: the caller frees `*out` with shardline_state_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `self_address` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_new(
    self_address: *const c_char,
    out: *mut *mut shardline_state,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let self_address = address(
            unsafe { args::str(self_address, "self_address") }?,
            "self_address",
        )?;
        let out = Out::new(out, "out")?;
        let state = shardline_state {
            access: Access::Owned(HandleCell::new(
                "state",
                AllocationState::new(ClusterView::new(self_address)),
            )),
        };
        // SAFETY: checked non-NULL; caller's contract.
        unsafe { out.write(args::into_handle(state)) };
        Ok(())
    })
}

/// Releases a state.
///
/// @param state the state, or NULL (nothing happens). The read-only view a callback receives
///        is not released by this (calling it on one does nothing), nor is a state while a call
///        is using it.
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `state` must not be used afterwards.
/// Thread safety: must not race with any other use of `state`. Leaves the last error untouched.
///
/// # Safety
/// `state` is NULL or a live state from shardline_state_new.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_free(state: *mut shardline_state) {
    infallible((), || {
        // SAFETY: NULL or live per the contract.
        let releasable = match unsafe { state.as_ref() }.map(|s| &s.access) {
            Some(Access::Owned(cell)) => !cell.in_use(),
            _ => false,
        };
        if releasable {
            // SAFETY: an owned state comes from shardline_state_new; ownership returns once.
            drop(unsafe { args::free(state) });
        }
    })
}

/// Adds a cluster member, or replaces the member with the same address.
///
/// @param state the state.
/// @param address the member's node address.
/// @param status_name nullable (default "Up"): Joining, WeaklyUp, Up, Leaving, Exiting or Down.
/// @param app_version nullable (default "0.0.0"): the member's application version.
/// @param data_center nullable (default "default").
/// @param up_number Pekko's upNumber: lower means older (used by the age tie-break).
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a malformed address, status or version;
///         SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the state.
///
/// Ownership: strings are copied; the caller keeps its arguments.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; strings are NUL-terminated or, where nullable, NULL.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_upsert_member(
    state: *mut shardline_state,
    address: *const c_char,
    status_name: *const c_char,
    app_version: *const c_char,
    data_center: *const c_char,
    up_number: i32,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract, for this and the string parameters below.
        let state = unsafe { args::handle(state, "state") }?;
        let mut member = Member::new(self::address(
            unsafe { args::str(address, "address") }?,
            "address",
        )?);
        if let Some(s) = unsafe { args::opt_str(status_name, "status_name") }? {
            member.status = s
                .parse::<MemberStatus>()
                .map_err(|e| Failure::from(e.context("status_name")))?;
        }
        if let Some(v) = unsafe { args::opt_str(app_version, "app_version") }? {
            member.app_version =
                Version::parse(v).map_err(|e| Failure::from(e.context("app_version")))?;
        }
        if let Some(dc) = unsafe { args::opt_str(data_center, "data_center") }? {
            member.data_center = dc.to_owned();
        }
        member.up_number = up_number;
        state.write(|s| {
            s.upsert_member(member);
            Ok(())
        })
    })
}

/// Removes a cluster member (a Removed member in Pekko terms).
///
/// @param state the state.
/// @param address the member's node address.
/// @return SHARDLINE_STATUS_INVALID_STATE when no member has that address;
///         SHARDLINE_STATUS_INVALID_ARGUMENT for a malformed address;
///         SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the state.
///
/// Ownership: strings are copied; the caller keeps its arguments.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; `address` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_remove_member(
    state: *mut shardline_state,
    address: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let a = self::address(unsafe { args::str(address, "address") }?, "address")?;
        state.write(|s| {
            s.remove_member(a.as_str()).map(drop).ok_or_else(|| {
                Failure::invalid_state(format!("member {:?} is not known", a.as_str()))
            })
        })
    })
}

/// Marks a node reachable or unreachable (Pekko's unreachable set; unreachable members of the
/// coordinator's data center stop the Pekko strategies from rebalancing).
///
/// @param state the state.
/// @param address the node address (need not be a member yet).
/// @param reachable false to add it to the unreachable set, true to take it out.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a malformed address;
///         SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the state.
///
/// Ownership: strings are copied; the caller keeps its arguments.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; `address` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_set_reachable(
    state: *mut shardline_state,
    address: *const c_char,
    reachable: bool,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let a = self::address(unsafe { args::str(address, "address") }?, "address")?;
        state.write(|s| {
            s.set_reachable(a.as_str(), reachable);
            Ok(())
        })
    })
}

/// Registers a shard region at the end of map order; it starts eligible, with no shards.
///
/// @param state the state.
/// @param id the region's id (actor-ts uses the node address).
/// @param address the node the region runs on.
/// @param local true for the coordinator's own region (it then resolves to the self address).
/// @return SHARDLINE_STATUS_INVALID_STATE when `id` is already registered;
///         SHARDLINE_STATUS_INVALID_ARGUMENT for an empty id or a malformed address;
///         SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the state.
///
/// Ownership: strings are copied; the caller keeps its arguments.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; strings are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_add_region(
    state: *mut shardline_state,
    id: *const c_char,
    address: *const c_char,
    local: bool,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let id = unsafe { args::str(id, "id") }?;
        let a = self::address(unsafe { args::str(address, "address") }?, "address")?;
        state.write(|s| Ok(s.add_region(id, a, local)?))
    })
}

/// Unregisters a region; its shards become unallocated.
///
/// @param state the state.
/// @param id the region's id.
/// @param out_shards nullable; receives the shards the region held, oldest first.
/// @return SHARDLINE_STATUS_INVALID_STATE when `id` is not registered;
///         SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the state.
///
/// Ownership: the caller frees `*out_shards` with shardline_shard_list_free.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; `id` is NUL-terminated; `out_shards` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_remove_region(
    state: *mut shardline_state,
    id: *const c_char,
    out_shards: *mut *mut shardline_shard_list,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let id = unsafe { args::str(id, "id") }?;
        let out = Out::nullable(out_shards);
        let shards = state.write(|s| Ok(s.remove_region(id)?))?;
        if let Some(out) = out {
            let list = shardline_shard_list::new(shards.iter().map(|s| &**s))?;
            // SAFETY: caller's contract.
            unsafe { out.write(args::into_handle(list)) };
        }
        Ok(())
    })
}

/// Sets whether a region may receive new shards (regions shutting down or not among the
/// candidates only give shards away). Becoming eligible moves a region to the end of candidate
/// order.
///
/// @param state the state.
/// @param id the region's id.
/// @param eligible the new setting.
/// @return SHARDLINE_STATUS_INVALID_STATE when `id` is not registered;
///         SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the state.
///
/// Ownership: strings are copied; the caller keeps its arguments.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; `id` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_set_eligible(
    state: *mut shardline_state,
    id: *const c_char,
    eligible: bool,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let id = unsafe { args::str(id, "id") }?;
        state.write(|s| Ok(s.set_eligible(id, eligible)?))
    })
}

/// Records that `shard` is allocated to `region` (appended to its shards, newest last).
///
/// @param state the state.
/// @param region the region's id.
/// @param shard the shard id.
/// @return SHARDLINE_STATUS_INVALID_STATE when the region is not registered or the shard is
///         already allocated; SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the
///         state.
///
/// Ownership: strings are copied; the caller keeps its arguments.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; strings are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_add_shard(
    state: *mut shardline_state,
    region: *const c_char,
    shard: *const c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let region = unsafe { args::str(region, "region") }?;
        let shard = unsafe { args::str(shard, "shard") }?;
        state.write(|s| Ok(s.add_shard(region, shard)?))
    })
}

/// Deallocates a shard.
///
/// @param state the state.
/// @param shard the shard id.
/// @param out_region nullable; receives the id of the region that held it.
/// @return SHARDLINE_STATUS_INVALID_STATE when the shard is not allocated;
///         SHARDLINE_STATUS_REENTRANT_CALL while a decision is using the state.
///
/// Ownership: the caller frees `*out_region` with shardline_string_free.
/// Thread safety: any thread; calls on one state are serialised (see the overview).
///
/// # Safety
/// `state` is a live state; `shard` is NUL-terminated; `out_region` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_remove_shard(
    state: *mut shardline_state,
    shard: *const c_char,
    out_region: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let shard = unsafe { args::str(shard, "shard") }?;
        let out = Out::nullable(out_region);
        let region = state.write(|s| Ok(s.remove_shard(shard)?))?;
        if let Some(out) = out {
            let region = to_c(&region)?;
            // SAFETY: caller's contract.
            unsafe { out.write(region.into_raw()) };
        }
        Ok(())
    })
}

/// The region a shard is allocated to.
///
/// @param state the state, or the view a callback received.
/// @param shard the shard id.
/// @param out_region receives the region id, or NULL when the shard is not allocated.
/// @return SHARDLINE_STATUS_REENTRANT_CALL while the state is being changed (never from a
///         callback, which may always read).
///
/// Ownership: the caller frees `*out_region` with shardline_string_free.
/// Thread safety: any thread; calls on one state are serialised; usable from callbacks.
///
/// # Safety
/// `state` is a live state or view; `shard` is NUL-terminated; `out_region` is valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_home_of(
    state: *const shardline_state,
    shard: *const c_char,
    out_region: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let shard = unsafe { args::str(shard, "shard") }?;
        let out = Out::new(out_region, "out_region")?;
        let home = state.read(|s| s.home_of(shard).map(|r| to_c(r.id())).transpose())?;
        // SAFETY: caller's contract.
        unsafe { out.write(home.map_or(std::ptr::null_mut(), |c| c.into_raw())) };
        Ok(())
    })
}

/// Number of registered regions; indexes 0 .. count-1 address them in map order.
///
/// @param state the state, or the view a callback received.
/// @param out receives the count.
/// @return SHARDLINE_STATUS_REENTRANT_CALL while the state is being changed.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one state are serialised; usable from callbacks.
///
/// # Safety
/// `state` is a live state or view; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_region_count(
    state: *const shardline_state,
    out: *mut usize,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let state = unsafe { args::handle(state, "state") }?;
        let out = Out::new(out, "out")?;
        let n = state.read(|s| Ok(s.region_count()))?;
        // SAFETY: caller's contract.
        unsafe { out.write(n) };
        Ok(())
    })
}

/// Copies one property of the region at a map-order index into an out-parameter.
unsafe fn region_property<T>(
    state: *const shardline_state,
    index: usize,
    out: *mut T,
    get: impl FnOnce(&Region) -> Result<T>,
) -> shardline_status {
    guard(|| {
        // SAFETY: forwarded contract.
        let state = unsafe { args::handle(state, "state") }?;
        let out = Out::new(out, "out")?;
        let value = state.region_at(index, get)?;
        // SAFETY: forwarded contract.
        unsafe { out.write(value) };
        Ok(())
    })
}

/// The id of the region at a map-order index (O(index)).
///
/// @param state the state, or the view a callback received.
/// @param index from 0 to shardline_state_region_count() - 1.
/// @param out receives the id.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `index` is out of range.
///
/// Ownership: the caller frees `*out` with shardline_string_free.
/// Thread safety: any thread; calls on one state are serialised; usable from callbacks.
///
/// # Safety
/// `state` is a live state or view; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_region_id(
    state: *const shardline_state,
    index: usize,
    out: *mut *mut c_char,
) -> shardline_status {
    // SAFETY: forwarded contract.
    unsafe { region_property(state, index, out, |r| Ok(to_c(r.id())?.into_raw())) }
}

/// The node address the region at a map-order index was registered with (O(index)).
///
/// @param state the state, or the view a callback received.
/// @param index from 0 to shardline_state_region_count() - 1.
/// @param out receives the address in canonical form.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `index` is out of range.
///
/// Ownership: the caller frees `*out` with shardline_string_free.
/// Thread safety: any thread; calls on one state are serialised; usable from callbacks.
///
/// # Safety
/// `state` is a live state or view; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_region_address(
    state: *const shardline_state,
    index: usize,
    out: *mut *mut c_char,
) -> shardline_status {
    // SAFETY: forwarded contract.
    unsafe {
        region_property(state, index, out, |r| {
            Ok(to_c(r.address().as_str())?.into_raw())
        })
    }
}

/// How many shards the region at a map-order index holds (O(index)).
///
/// @param state the state, or the view a callback received.
/// @param index from 0 to shardline_state_region_count() - 1.
/// @param out receives the count.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `index` is out of range.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one state are serialised; usable from callbacks.
///
/// # Safety
/// `state` is a live state or view; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_region_shard_count(
    state: *const shardline_state,
    index: usize,
    out: *mut usize,
) -> shardline_status {
    // SAFETY: forwarded contract.
    unsafe { region_property(state, index, out, |r| Ok(r.shard_count())) }
}

/// Whether the region at a map-order index may receive new shards (O(index)).
///
/// @param state the state, or the view a callback received.
/// @param index from 0 to shardline_state_region_count() - 1.
/// @param out receives the flag.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `index` is out of range.
///
/// Ownership: nothing to free.
/// Thread safety: any thread; calls on one state are serialised; usable from callbacks.
///
/// # Safety
/// `state` is a live state or view; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_region_is_eligible(
    state: *const shardline_state,
    index: usize,
    out: *mut bool,
) -> shardline_status {
    // SAFETY: forwarded contract.
    unsafe { region_property(state, index, out, |r| Ok(r.is_eligible())) }
}

/// The shards of the region at a map-order index, oldest first (O(index + shards)).
///
/// @param state the state, or the view a callback received.
/// @param index from 0 to shardline_state_region_count() - 1.
/// @param out receives the list.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `index` is out of range.
///
/// Ownership: the caller frees `*out` with shardline_shard_list_free.
/// Thread safety: any thread; calls on one state are serialised; usable from callbacks.
///
/// # Safety
/// `state` is a live state or view; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_state_region_shards(
    state: *const shardline_state,
    index: usize,
    out: *mut *mut shardline_shard_list,
) -> shardline_status {
    // SAFETY: forwarded contract.
    unsafe {
        region_property(state, index, out, |r| {
            Ok(args::into_handle(shardline_shard_list::new(
                r.shards().map(|s| &**s),
            )?))
        })
    }
}
