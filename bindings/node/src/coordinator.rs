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
use crate::handle::{construct, Handle, Holder};
use crate::host;
use crate::js::{Js, V};
use crate::proto;
use crate::strategy::Spec;
use shardline_bind::driver_host as adapt;

/// The coordinator `{strategy, selfAddress, config?}` makes; a JavaScript strategy joins the
/// callback holder as `strategy`.
pub(crate) fn common(js: Js, o: V, holder: &mut Holder) -> R<CoreCoordinator> {
    let spec = Spec::parse(js, js.get(o, "strategy")?, "options.strategy")?;
    let self_address = conv::string(js, js.get(o, "selfAddress")?, "options.selfAddress")?;
    let config = conv::config(js, o)?;
    let coordinator = machine_init::coordinator(spec.build()?, &self_address, config.as_ref())?;
    holder.extend(spec.imp().map(|imp| ("strategy", imp)));
    Ok(coordinator)
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
        let inner = construct(env, this, options, "Coordinator", common)?;
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
        self.inner
            .query(env, |js, c| proto::output(js, c.poll_output()))
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
        let inner = construct(env, this, options, "CoordinatorDriver", |js, o, holder| {
            let c = common(js, o, holder)?;
            let transport = host::option(js, o, "transport", &adapt::TRANSPORT, holder)?;
            let clock = backends::clock(js, conv::field(js, o, "clock")?, holder)?;
            let owner = conv::string(js, js.get(o, "selfAddress")?, "options.selfAddress")?;
            let lease = backends::lease(js, conv::field(js, o, "lease")?, &owner, holder)?;
            let store = backends::store(js, conv::field(js, o, "store")?, holder)?;
            let transport = adapt::transport(transport);
            Ok(CoreDriver::new(c, transport, clock, lease, store))
        })?;
        Ok(CoordinatorDriver { inner })
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
