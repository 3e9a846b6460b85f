//! `shardline_strategy`: a placement policy, built from JSON configuration or supplied by the
//! host as callbacks.

use std::ffi::c_char;

use serde_json::Value;
use shardline_bind::HandleCell;
use shardline_core::model::AllocationState;
use shardline_core::strategy::{AllocationStrategy, StrategyConfig};

use crate::args::{self, Out};
use crate::boundary::{guard, infallible, Failure, Result};
use crate::custom::{take_failure, HostStrategy};
use crate::state::shardline_state;
use crate::status::shardline_status;

/// A placement policy. Made by shardline_strategy_new or shardline_strategy_new_custom,
/// released by shardline_strategy_free.
pub struct shardline_strategy {
    inner: HandleCell<Inner>,
}

pub enum Inner {
    BuiltIn(Box<dyn AllocationStrategy>),
    Custom(HostStrategy),
}

impl shardline_strategy {
    pub fn new(inner: Inner) -> shardline_strategy {
        shardline_strategy {
            inner: HandleCell::new("strategy", inner),
        }
    }

    /// Runs one decision on `state` with exclusive use of the strategy. A custom strategy's
    /// callback that calls back into this same strategy finds it borrowed and gets
    /// REENTRANT_CALL. When the decision fails inside a callback, the callback's own status
    /// replaces the core error. The strategy is taken before the state, the order every
    /// language uses, so a second thread waits for a busy strategy the same way everywhere.
    #[inline]
    pub fn decide<R>(
        &self,
        state: &shardline_state,
        f: impl FnOnce(&mut dyn AllocationStrategy, &AllocationState) -> shardline_core::Result<R>,
    ) -> Result<R> {
        state.read_holding(&self.inner, |inner, st| match inner {
            Inner::BuiltIn(s) => f(&mut **s, st).map_err(Failure::from),
            Inner::Custom(c) => {
                let result = f(c, st);
                let failure = take_failure(c);
                result.map_err(|e| failure.unwrap_or_else(|| e.into()))
            }
        })
    }

    pub(crate) fn in_use(&self) -> bool {
        self.inner.in_use()
    }

    /// The policy itself, for a state machine that takes the strategy over. A custom
    /// strategy's callback failures then reach the machine as core errors carrying the
    /// callback's message.
    pub(crate) fn into_strategy(self) -> Box<dyn AllocationStrategy> {
        match self.inner.into_inner() {
            Inner::BuiltIn(s) => s,
            Inner::Custom(c) => Box::new(c),
        }
    }
}

/// Builds a built-in strategy from its JSON configuration.
///
/// @param config_json the `strategy` object of the conformance vectors, e.g.
///        `{"kind": "least-shard", "absoluteLimit": 20, "relativeLimit": 0.1}`. `kind` is one
///        of least-shard, least-shard-legacy, consistent-hashing, external, actor-ts-hash,
///        actor-ts-least-shard; omitted parameters take the reference implementation's defaults.
/// @param out receives the new strategy.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for invalid JSON, an unknown kind or field, or a
///         parameter out of range (the message names it).
///
/// Ownership: the caller frees `*out` with shardline_strategy_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `config_json` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_strategy_new(
    config_json: *const c_char,
    out: *mut *mut shardline_strategy,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(config_json, "config_json") }?;
        let out = Out::new(out, "out")?;
        let value: Value = serde_json::from_str(text).map_err(|e| {
            Failure::invalid_argument(format!("config_json is not valid JSON: {e}"))
        })?;
        let strategy = StrategyConfig::from_json(&value)?.build()?;
        // SAFETY: caller's contract.
        unsafe {
            out.write(args::into_handle(shardline_strategy::new(Inner::BuiltIn(
                strategy,
            ))))
        };
        Ok(())
    })
}

/// Releases a strategy; for a custom strategy, calls its `userdata_free` (once).
///
/// @param strategy the strategy, or NULL (nothing happens). A strategy whose decision is under
///        way (a callback freeing its own strategy) is not released.
/// @return nothing; it cannot fail.
///
/// Ownership: takes back ownership; `strategy` must not be used afterwards.
/// Thread safety: must not race with any other use of `strategy`. Leaves the last error
/// untouched.
///
/// # Safety
/// `strategy` is NULL or a live strategy.
#[no_mangle]
pub unsafe extern "C" fn shardline_strategy_free(strategy: *mut shardline_strategy) {
    infallible((), || {
        // SAFETY: NULL or live per the contract.
        if unsafe { strategy.as_ref() }.is_some_and(|s| !s.in_use()) {
            // SAFETY: ownership returns once, per the contract.
            drop(unsafe { args::free(strategy) });
        }
    })
}
