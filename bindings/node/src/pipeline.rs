//! `CoordinatorPipeline`: the coordinator for an event-loop host. It hands out each host call
//! as `[ticket, role, method, args]` and takes its answer whenever the promise settles;
//! lib/aio.cjs makes the calls. The calls and how answers are read are
//! `shardline_bind::pipeline_host`'s, shared with every language.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::driver_host::Spelling;
use shardline_bind::pipeline_host;
use shardline_bind::tree::Tree;
use shardline_core::coordinator::CoordinatorInput;
use shardline_core::host::{Completion, CoordinatorPipeline as CorePipeline, Ticket};
use shardline_core::replay::CoordinatorStep;

use crate::conv;
use crate::coordinator::machine;
use crate::handle::Handle;
use crate::host;
use crate::proto;
use crate::state::unknown;
use shardline_bind::driver_host as adapt;

#[napi]
pub struct CoordinatorPipeline {
    pub(crate) inner: Handle<CorePipeline>,
}

impl CoordinatorPipeline {
    fn step(&self, env: &Env, this: &This, now_ms: Unknown, step: CoordinatorStep) -> Result<()> {
        self.inner.call(env, this, |js, h| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            Ok(h.step(now, step)?)
        })
    }
}

#[napi]
impl CoordinatorPipeline {
    /// `new CoordinatorPipeline({strategy, selfAddress, config?})`, as `Coordinator`.
    #[napi(constructor, ts_args_type = "options: CoordinatorOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let inner = machine(env, this, options, "CoordinatorPipeline", CorePipeline::new)?;
        Ok(CoordinatorPipeline { inner })
    }

    #[napi(ts_args_type = "nowMs: number")]
    pub fn start(&self, env: &Env, this: This, now_ms: Unknown) -> Result<()> {
        self.step(env, &this, now_ms, CoordinatorStep::Start)
    }

    #[napi(ts_args_type = "nowMs: number")]
    pub fn on_timeout(&self, env: &Env, this: This, now_ms: Unknown) -> Result<()> {
        self.step(env, &this, now_ms, CoordinatorStep::Timeout)
    }

    #[napi(ts_args_type = "nowMs: number, input: CoordinatorInput")]
    pub fn handle(&self, env: &Env, this: This, now_ms: Unknown, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, h| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let input = proto::input(js, input.raw(), CoordinatorInput::from_json_value)?;
            Ok(h.step(now, CoordinatorStep::Input(input))?)
        })
    }

    /// The next host call, `[ticket, role, method, args]` (method in camelCase), or null
    /// while there is none.
    #[napi(
        ts_args_type = "nowMs: number",
        ts_return_type = "[number, 'transport' | 'lease' | 'store', string, unknown[]] | null"
    )]
    pub fn next_call<'a>(&self, env: &'a Env, now_ms: Unknown) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, h| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let call = pipeline_host::next_call(h, now)?.map(|(ticket, call)| {
                let method = Spelling::Camel.spell(call.method);
                let (ticket, role, args) = (ticket.0.into(), call.role.name.into(), call.args);
                Tree::Array(vec![ticket, role, method.into(), Tree::Array(args)])
            });
            let v = conv::tree_js(js, call.as_ref().unwrap_or(&Tree::Null))?;
            Ok(unknown(js, v))
        })
    }

    /// What call `ticket` resolved to.
    #[napi(ts_args_type = "nowMs: number, ticket: number, value: unknown")]
    pub fn answer(
        &self,
        env: &Env,
        this: This,
        now_ms: Unknown,
        ticket: Unknown,
        value: Unknown,
    ) -> Result<()> {
        self.inner.call(env, &this, |js, h| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let ticket = Ticket(conv::uint(js, ticket.raw(), "ticket")?);
            let value = conv::tree_of(js, value.raw(), "value")?;
            Ok(pipeline_host::answer(
                h,
                now,
                ticket,
                &value,
                Spelling::Camel,
            )?)
        })
    }

    /// Call `ticket` rejected; the caller keeps the reason.
    #[napi(ts_args_type = "nowMs: number, ticket: number")]
    pub fn fail(&self, env: &Env, this: This, now_ms: Unknown, ticket: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, h| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let ticket = Ticket(conv::uint(js, ticket.raw(), "ticket")?);
            Ok(h.complete(now, ticket, Completion::Failed)?)
        })
    }

    #[napi(ts_args_type = "")]
    pub fn next_deadline(&self, env: &Env) -> Result<Option<f64>> {
        self.inner
            .query(env, |_, h| Ok(h.next_deadline().map(|d| d as f64)))
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
        host::object(
            js,
            transport.raw(),
            "options.transport",
            "transport",
            &adapt::TRANSPORT,
        )?;
        host::object(js, lease.raw(), "options.lease", "lease", &adapt::LEASE)?;
        host::object(js, store.raw(), "options.store", "store", &adapt::STORE)?;
        Ok(())
    })
}
