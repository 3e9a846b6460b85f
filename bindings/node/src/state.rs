//! `AllocationState`: the allocation map strategies decide on (regions in map order, their
//! shards oldest first, the cluster view), kept up to date by the caller. Its operations are
//! `shardline_bind::ops::state`; lib/state.cjs names them.
//!
//! Custom strategies receive a read-only view of the state being decided on; the view is
//! valid only while their callback runs.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::handle::Wait;
use shardline_bind::host_state::HostState;
use shardline_bind::ops::state as ops_state;
use shardline_bind::Failure;
use shardline_core::model::AllocationState as CoreState;

use crate::conv;
use crate::error::{boundary, Code, Fail, R};
use crate::js::{Js, V};
use crate::strategy::state_arg;

#[napi]
pub struct AllocationState {
    pub(crate) inner: HostState,
}

/// JavaScript runs on one thread: a state another call holds is a re-entry, never a wait.
pub(crate) fn run(w: Wait<'_, CoreState>) -> std::result::Result<(), Failure> {
    w.run()
}

impl AllocationState {
    /// A view of `state` for a callback.
    ///
    /// # Safety
    /// As `HostState::lend`: `end_view` before the borrow of `state` ends.
    pub unsafe fn lend(state: &CoreState) -> AllocationState {
        AllocationState {
            // SAFETY: passed on to our caller.
            inner: unsafe { HostState::lend(state) },
        }
    }

    pub fn end_view(&self) {
        self.inner.end_view()
    }

    pub fn read<T>(&self, f: impl FnOnce(&CoreState) -> R<T>) -> R<T> {
        self.inner.read(run, f)?
    }
}

#[napi]
impl AllocationState {
    /// An empty state; `selfAddress` is the coordinator's own node (local regions run there).
    #[napi(constructor, ts_args_type = "selfAddress?: string")]
    pub fn new(env: &Env, self_address: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            let a = conv::opt_string(js, self_address.raw(), "selfAddress")?;
            let state = ops_state::new(a.as_deref())?;
            Ok(AllocationState {
                inner: HostState::owned("AllocationState", state),
            })
        })
    }

    /// A state in one call, in the shape of the conformance vectors.
    #[napi(factory, ts_args_type = "init: StateInit")]
    pub fn build(env: &Env, init: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            let init = conv::tree_of(js, conv::object(js, init.raw(), "init")?, "init")?;
            Ok(AllocationState {
                inner: HostState::owned("AllocationState", ops_state::build(&init)?),
            })
        })
    }
}

/// `AllocationState.prototype.regionCount` (lib/state.cjs): one handle in, an integer out, the
/// cheapest call the binding makes (the benchmarks bound allocate's extra cost by it). A plain
/// function, for the reason `Strategy.allocate` is one.
#[napi(js_name = "_regionCount", skip_typescript)]
pub fn region_count(env: &Env, state: Unknown) -> Result<u32> {
    boundary(env, None, |js| {
        let n = state_arg(js, state.raw())?.read(|cs| Ok(cs.region_count()))?;
        u32::try_from(n).map_err(|_| Fail::new(Code::Internal, "more than 2^32 regions"))
    })
}

/// Hands a raw value back through napi-rs's typed return path.
pub fn unknown<'a>(js: Js, v: V) -> Unknown<'a> {
    // SAFETY: `v` was made in this call's scope on this env.
    unsafe { Unknown::from_raw_unchecked(js.env, v) }
}
