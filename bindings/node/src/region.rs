//! Shard regions: `Region` is the sans-IO step machine, `RegionDriver` runs it against a
//! transport, a clock and an entity host.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::machine_init;
use shardline_core::host::RegionDriver as CoreDriver;
use shardline_core::region::{Region as CoreRegion, RegionInput, ShardExtractor};
use shardline_core::Error as CoreError;

use crate::backends;
use crate::conv;
use crate::error::{self, Code, Fail, R};
use crate::handle::{construct, Handle, Holder};
use crate::host;
use crate::js::{Js, Type, V};
use crate::proto;
use shardline_bind::driver_host as adapt;

/// The region `{id, node, extractor, config?}` makes, and whether its extractor is written in
/// JavaScript: `extractor` is `{kind: 'pekko', numberOfShards}`, `{kind: 'actor-ts',
/// numShards}`, or a function from entity id to shard id, which joins the callback holder.
fn common(js: Js, o: V, holder: &mut Holder) -> R<(CoreRegion, bool)> {
    let id = conv::string(js, js.get(o, "id")?, "options.id")?;
    let node = conv::string(js, js.get(o, "node")?, "options.node")?;
    let e = js.get(o, "extractor")?;
    let js_extractor = js.type_of(e)? == Type::Function;
    let extractor = if js_extractor {
        holder.push(("extractor", e));
        ShardExtractor::custom(|e| e.into())
    } else {
        machine_init::extractor(conv::json(js, e, "options.extractor")?, "options.extractor")?
    };
    let config = conv::config(js, o)?;
    let region = machine_init::region(&id, &node, extractor, config.as_ref())?;
    Ok((region, js_extractor))
}

/// The shard of `entity`, from the JavaScript extractor when there is one.
fn shard_of(js_extractor: bool, region: &CoreRegion, entity: &str) -> R<String> {
    if !js_extractor {
        return Ok(region.shard_of(entity)?.into());
    }
    error::callback("extractor", |js, f| {
        let v = js.call(js.undefined()?, f, &[js.string(entity)?])?;
        conv::shard(js, v, "the extractor's shard id").map_err(Fail::into_callback_failure)
    })
    .ok_or_else(|| Fail::new(Code::CallbackFailed, "the extractor failed"))
}

/// A region's machine (the step machine or its driver) and whether its extractor is written
/// in JavaScript.
pub(crate) struct Routed<T> {
    pub(crate) machine: T,
    js_extractor: bool,
}

#[napi]
pub struct Region {
    pub(crate) inner: Handle<Routed<CoreRegion>>,
}

#[napi]
impl Region {
    /// `new Region({id, node, extractor, config?})`: `id` names this incarnation of the
    /// region, `node` is its cluster address.
    #[napi(constructor, ts_args_type = "options: RegionOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let inner = construct(env, this, options, "Region", |js, o, holder| {
            let (machine, js_extractor) = common(js, o, holder)?;
            Ok(Routed {
                machine,
                js_extractor,
            })
        })?;
        Ok(Region { inner })
    }

    /// Routes a message from a local sender; throws INVALID_STATE when the region cannot take
    /// it (buffer full, shut down), and nothing was queued then.
    #[napi(ts_args_type = "nowMs: number, entity: string, payload: Payload")]
    pub fn route(
        &self,
        env: &Env,
        this: This,
        now_ms: Unknown,
        entity: Unknown,
        payload: Unknown,
    ) -> Result<()> {
        self.inner.call(env, &this, |js, r| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let entity = conv::string(js, entity.raw(), "entity")?;
            let payload = conv::bytes(js, payload.raw(), "payload")?;
            let shard = shard_of(r.js_extractor, &r.machine, &entity)?;
            let routed = r.machine.route_to_shard(now, &shard, &entity, payload);
            Ok(routed.map_err(CoreError::from)?)
        })
    }

    #[napi(ts_args_type = "nowMs: number, shard: ShardId, entity: string, payload: Payload")]
    pub fn route_to_shard(
        &self,
        env: &Env,
        this: This,
        now_ms: Unknown,
        shard: Unknown,
        entity: Unknown,
        payload: Unknown,
    ) -> Result<()> {
        self.inner.call(env, &this, |js, r| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let shard = conv::shard(js, shard.raw(), "shard")?;
            let entity = conv::string(js, entity.raw(), "entity")?;
            let payload = conv::bytes(js, payload.raw(), "payload")?;
            let routed = r.machine.route_to_shard(now, &shard, &entity, payload);
            Ok(routed.map_err(CoreError::from)?)
        })
    }

    #[napi(ts_args_type = "nowMs: number, input: RegionInput")]
    pub fn handle(&self, env: &Env, this: This, now_ms: Unknown, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, r| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let input = proto::input(js, input.raw(), RegionInput::from_json_value)?;
            r.machine.handle(now, input);
            Ok(())
        })
    }

    #[napi(ts_args_type = "", ts_return_type = "RegionOutput | null")]
    pub fn poll_output<'a>(&self, env: &'a Env) -> Result<Unknown<'a>> {
        self.inner
            .query(env, |js, r| proto::output(js, r.machine.poll_output()))
    }

    #[napi(ts_args_type = "entity: string")]
    pub fn shard_of(&self, env: &Env, this: This, entity: Unknown) -> Result<String> {
        self.inner.call(env, &this, |js, r| {
            let e = conv::string(js, entity.raw(), "entity")?;
            shard_of(r.js_extractor, &r.machine, &e)
        })
    }
}

#[napi]
pub struct RegionDriver {
    pub(crate) inner: Handle<Routed<CoreDriver>>,
}

#[napi]
impl RegionDriver {
    /// `{id, node, extractor, config?, transport, clock?, host}`; `host` starts and stops
    /// shards and receives the messages for their entities.
    #[napi(constructor, ts_args_type = "options: RegionDriverOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let inner = construct(env, this, options, "RegionDriver", |js, o, holder| {
            let (region, js_extractor) = common(js, o, holder)?;
            let transport = host::option(js, o, "transport", &adapt::TRANSPORT, holder)?;
            let entity_host = host::option(js, o, "host", &adapt::ENTITY_HOST, holder)?;
            let clock = backends::clock(js, conv::field(js, o, "clock")?, holder)?;
            let (transport, entity_host) =
                (adapt::transport(transport), adapt::entity_host(entity_host));
            Ok(Routed {
                machine: CoreDriver::new(region, transport, clock, entity_host),
                js_extractor,
            })
        })?;
        Ok(RegionDriver { inner })
    }

    /// Routes a message to its entity wherever the entity's shard lives. Throws INVALID_STATE
    /// when the region cannot take it (buffer full, shut down).
    #[napi(ts_args_type = "entity: string, payload: Payload")]
    pub fn route(&self, env: &Env, this: This, entity: Unknown, payload: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, d| {
            let entity = conv::string(js, entity.raw(), "entity")?;
            let payload = conv::bytes(js, payload.raw(), "payload")?;
            let shard = shard_of(d.js_extractor, d.machine.region(), &entity)?;
            Ok(d.machine.route_to_shard(&shard, &entity, payload)?)
        })
    }

    #[napi(ts_args_type = "shard: ShardId, entity: string, payload: Payload")]
    pub fn route_to_shard(
        &self,
        env: &Env,
        this: This,
        shard: Unknown,
        entity: Unknown,
        payload: Unknown,
    ) -> Result<()> {
        self.inner.call(env, &this, |js, d| {
            let shard = conv::shard(js, shard.raw(), "shard")?;
            let entity = conv::string(js, entity.raw(), "entity")?;
            let payload = conv::bytes(js, payload.raw(), "payload")?;
            Ok(d.machine.route_to_shard(&shard, &entity, payload)?)
        })
    }

    /// One step input at the clock's time (what `receive`, `shardStopped`,
    /// `entityPassivated`, `coordinatorChanged`, `regionTerminated` and `gracefulShutdown`
    /// pass).
    #[napi(ts_args_type = "input: RegionInput")]
    pub fn handle(&self, env: &Env, this: This, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, d| {
            Ok(d.machine
                .input(proto::input(js, input.raw(), RegionInput::from_json_value)?)?)
        })
    }

    #[napi(ts_args_type = "entity: string")]
    pub fn shard_of(&self, env: &Env, this: This, entity: Unknown) -> Result<String> {
        self.inner.call(env, &this, |js, d| {
            let e = conv::string(js, entity.raw(), "entity")?;
            shard_of(d.js_extractor, d.machine.region(), &e)
        })
    }
}
