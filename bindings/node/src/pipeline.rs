//! `CoordinatorPipeline`: the coordinator for an event-loop host. It hands out each host call
//! as `[ticket, role, method, args]` and takes its answer whenever the promise settles;
//! lib/aio.cjs makes the calls. The calls and how answers are read are
//! `shardline_bind::pipeline_host`'s, shared with every language.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_core::coordinator::CoordinatorInput;
use shardline_core::host::CoordinatorPipeline as CorePipeline;
use shardline_core::replay::CoordinatorStep;

use crate::conv;
use crate::coordinator::common;
use crate::handle::{construct, Handle};
use crate::host;
use crate::proto;
use shardline_bind::driver_host as adapt;

#[napi]
pub struct CoordinatorPipeline {
    pub(crate) inner: Handle<CorePipeline>,
}

#[napi]
impl CoordinatorPipeline {
    /// `new CoordinatorPipeline({strategy, selfAddress, config?})`, as `Coordinator`.
    #[napi(constructor, ts_args_type = "options: CoordinatorOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let inner = construct(
            env,
            this,
            options,
            "CoordinatorPipeline",
            |js, o, holder| Ok(CorePipeline::new(common(js, o, holder)?)),
        )?;
        Ok(CoordinatorPipeline { inner })
    }

    #[napi(ts_args_type = "nowMs: number, input: CoordinatorInput")]
    pub fn handle(&self, env: &Env, this: This, now_ms: Unknown, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, h| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let input = proto::input(js, input.raw(), CoordinatorInput::from_json_value)?;
            Ok(h.step(now, CoordinatorStep::Input(input))?)
        })
    }
}

/// Checks an asynchronous driver's host objects as the synchronous drivers do (a missing
/// method throws, naming it).
#[napi(
    js_name = "_checkHosts",
    ts_args_type = "transport: unknown, lease: unknown, store: unknown"
)]
pub fn check_hosts(env: &Env, transport: Unknown, lease: Unknown, store: Unknown) -> Result<()> {
    crate::error::boundary(env, None, |js| {
        host::object(js, transport.raw(), "transport", &adapt::TRANSPORT)?;
        host::object(js, lease.raw(), "lease", &adapt::LEASE)?;
        host::object(js, store.raw(), "store", &adapt::STORE)?;
        Ok(())
    })
}
