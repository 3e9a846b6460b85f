//! The shard coordinator: `Coordinator` is the sans-IO step machine (feed inputs, carry out
//! outputs in order), `CoordinatorDriver` runs it against a transport, clock, lease and store.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::machine_init;
use shardline_core::coordinator::{Coordinator as CoreCoordinator, CoordinatorInput};
use shardline_core::host::CoordinatorDriver as CoreDriver;

use crate::backends;
use crate::conv;
use crate::error::R;
use crate::handle::{install, Handle};
use crate::host;
use crate::js::{Js, V};
use crate::proto;
use crate::state::unknown;
use crate::strategy::Spec;
use shardline_bind::driver_host as adapt;

pub(crate) struct Common {
    pub(crate) coordinator: CoreCoordinator,
    /// Set on the holder under `strategy` when the strategy is written in JavaScript.
    pub(crate) imp: Option<V>,
}

/// `{strategy, selfAddress, config?}`.
pub(crate) fn common(js: Js, options: V) -> R<Common> {
    let o = conv::object(js, options, "options")?;
    let spec = Spec::parse(js, js.get(o, "strategy")?, "options.strategy")?;
    let self_address = conv::string(js, js.get(o, "selfAddress")?, "options.selfAddress")?;
    let config = conv::config(js, o)?;
    let coordinator = machine_init::coordinator(spec.build()?, &self_address, config.as_ref())?;
    Ok(Common {
        coordinator,
        imp: spec.imp(),
    })
}

/// A step machine around the coordinator `{strategy, selfAddress, config?}` makes, with its
/// JavaScript strategy (if any) kept on `this`.
pub(crate) fn machine<T>(
    env: &Env,
    this: This,
    options: Unknown,
    what: &'static str,
    make: impl FnOnce(CoreCoordinator) -> T,
) -> Result<Handle<T>> {
    let this = this.object.raw();
    crate::error::boundary(env, None, |js| {
        let c = common(js, options.raw())?;
        let imp: Vec<_> = c.imp.map(|imp| ("strategy", imp)).into_iter().collect();
        let callbacks = install(js, this, &imp)?;
        Ok(Handle::new(what, make(c.coordinator)).calling_back(callbacks))
    })
}

#[napi]
pub struct Coordinator {
    pub(crate) inner: Handle<CoreCoordinator>,
}

#[napi]
impl Coordinator {
    /// `new Coordinator({strategy, selfAddress, config?})`: `selfAddress` is the node it runs
    /// on; `config` holds Pekko-style settings (`rebalanceIntervalMs`, `handoffTimeoutMs`, ...).
    #[napi(constructor, ts_args_type = "options: CoordinatorOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let inner = machine(env, this, options, "Coordinator", |c| c)?;
        Ok(Coordinator { inner })
    }

    #[napi(ts_args_type = "nowMs: number, input: CoordinatorInput")]
    pub fn handle(&self, env: &Env, this: This, now_ms: Unknown, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, c| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let input = proto::input(js, input.raw(), CoordinatorInput::from_json_value)?;
            Ok(c.handle(now, input)?)
        })
    }

    /// The next output to carry out, or null.
    #[napi(ts_args_type = "", ts_return_type = "CoordinatorOutput | null")]
    pub fn poll_output<'a>(&self, env: &'a Env) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, c| {
            Ok(unknown(js, proto::output(js, c.poll_output())?))
        })
    }
}

#[napi]
pub struct CoordinatorDriver {
    pub(crate) inner: Handle<CoreDriver>,
}

#[napi]
impl CoordinatorDriver {
    /// `{strategy, selfAddress, config?, transport, clock?, lease?, store?}`. Without `lease`
    /// the coordinator holds a lease of its own; without `store` its state lives in memory;
    /// without `clock` time is the process's monotonic clock.
    #[napi(constructor, ts_args_type = "options: CoordinatorDriverOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let this_raw = this.object.raw();
        crate::error::boundary(env, None, |js| {
            let o = conv::object(js, options.raw(), "options")?;
            let c = common(js, o)?;
            let mut holder: Vec<(&str, V)> = Vec::new();
            if let Some(imp) = c.imp {
                holder.push(("strategy", imp));
            }
            let transport = host::option(js, o, "transport", &adapt::TRANSPORT, &mut holder)?;
            let clock = backends::clock(js, conv::field(js, o, "clock")?, &mut holder)?;
            let owner = conv::string(js, js.get(o, "selfAddress")?, "options.selfAddress")?;
            let lease = backends::lease(js, conv::field(js, o, "lease")?, &owner, &mut holder)?;
            let store = backends::store(js, conv::field(js, o, "store")?, &mut holder)?;
            let callbacks = install(js, this_raw, &holder)?;
            let d = CoreDriver::new(
                c.coordinator,
                adapt::transport(transport),
                clock,
                lease,
                store,
            );
            Ok(CoordinatorDriver {
                inner: Handle::new("CoordinatorDriver", d).calling_back(callbacks),
            })
        })
    }

    /// One step input at the clock's time (what `receive`, `member`, `memberRemoved`,
    /// `reachability`, `regionTerminated`, `preparingForShutdown` and `stop` pass).
    #[napi(ts_args_type = "input: CoordinatorInput")]
    pub fn handle(&self, env: &Env, this: This, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, d| {
            Ok(d.input(proto::input(
                js,
                input.raw(),
                CoordinatorInput::from_json_value,
            )?)?)
        })
    }
}
