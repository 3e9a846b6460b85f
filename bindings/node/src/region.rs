//! Shard regions: `Region` is the sans-IO step machine, `RegionDriver` runs it against a
//! transport, a clock and an entity host.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::machine_init;
use shardline_core::host::RegionDriver as CoreDriver;
use shardline_core::region::{Region as CoreRegion, RegionInput, ShardExtractor};

use crate::backends;
use crate::conv;
use crate::error::{self, boundary, Code, Fail, R};
use crate::handle::{install, Handle};
use crate::host;
use crate::js::{Js, Type, V};
use crate::proto;
use crate::state::unknown;
use shardline_bind::driver_host as adapt;

struct Common {
    region: CoreRegion,
    js_extractor: Option<V>,
}

/// `{id, node, extractor, config?}`; `extractor` is `{kind: 'pekko', numberOfShards}`,
/// `{kind: 'actor-ts', numShards}`, or a function from entity id to shard id.
fn common(js: Js, o: V) -> R<Common> {
    let id = conv::string(js, js.get(o, "id")?, "options.id")?;
    let node = conv::string(js, js.get(o, "node")?, "options.node")?;
    let e = js.get(o, "extractor")?;
    let (e, js_extractor) = match js.type_of(e)? {
        Type::Function => (ShardExtractor::custom(|e| e.to_owned()), Some(e)),
        _ => (
            machine_init::extractor(conv::json(js, e, "options.extractor")?, "options.extractor")?,
            None,
        ),
    };
    let config = conv::config(js, o)?;
    Ok(Common {
        region: machine_init::region(&id, &node, e, config.as_ref())?,
        js_extractor,
    })
}

/// The shard of `entity`, from the JavaScript extractor when there is one.
fn shard_of(js: Js, js_extractor: bool, region: &CoreRegion, entity: &str) -> R<String> {
    if !js_extractor {
        return Ok(region.shard_of(entity)?);
    }
    let _ = js;
    error::callback("extractor", |js, f| {
        let v = js.call(js.undefined()?, f, &[js.string(entity)?])?;
        conv::shard(js, v, "the extractor's shard id").map_err(Fail::into_callback_failure)
    })
    .ok_or_else(|| Fail::new(Code::CallbackFailed, "the extractor failed"))
}

pub(crate) struct StepRegion {
    pub(crate) region: CoreRegion,
    js_extractor: bool,
}

#[napi]
pub struct Region {
    pub(crate) inner: Handle<StepRegion>,
}

#[napi]
impl Region {
    /// `new Region({id, node, extractor, config?})`: `id` names this incarnation of the
    /// region, `node` is its cluster address.
    #[napi(constructor, ts_args_type = "options: RegionOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let this_raw = this.object.raw();
        boundary(env, None, |js| {
            let c = common(js, conv::object(js, options.raw(), "options")?)?;
            let f: Vec<_> = c
                .js_extractor
                .map(|f| ("extractor", f))
                .into_iter()
                .collect();
            let callbacks = install(js, this_raw, &f)?;
            let js_extractor = c.js_extractor.is_some();
            let region = StepRegion {
                region: c.region,
                js_extractor,
            };
            Ok(Region {
                inner: Handle::new("Region", region).calling_back(callbacks),
            })
        })
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
            let shard = shard_of(js, r.js_extractor, &r.region, &entity)?;
            r.region
                .route_to_shard(now, &shard, &entity, payload)
                .map_err(proto::fail_from_rejected)
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
            r.region
                .route_to_shard(now, &shard, &entity, payload)
                .map_err(proto::fail_from_rejected)
        })
    }

    #[napi(ts_args_type = "nowMs: number, input: RegionInput")]
    pub fn handle(&self, env: &Env, this: This, now_ms: Unknown, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, r| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let input = proto::input(js, input.raw(), RegionInput::from_json_value)?;
            r.region.handle(now, input);
            Ok(())
        })
    }

    #[napi(ts_args_type = "", ts_return_type = "RegionOutput | null")]
    pub fn poll_output<'a>(&self, env: &'a Env) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, r| {
            Ok(unknown(js, proto::output(js, r.region.poll_output())?))
        })
    }

    #[napi(ts_args_type = "entity: string")]
    pub fn shard_of(&self, env: &Env, this: This, entity: Unknown) -> Result<String> {
        self.inner.call(env, &this, |js, r| {
            let e = conv::string(js, entity.raw(), "entity")?;
            shard_of(js, r.js_extractor, &r.region, &e)
        })
    }
}

pub(crate) struct DriverState {
    pub(crate) driver: CoreDriver,
    js_extractor: bool,
}

#[napi]
pub struct RegionDriver {
    pub(crate) inner: Handle<DriverState>,
}

#[napi]
impl RegionDriver {
    /// `{id, node, extractor, config?, transport, clock?, host}`; `host` starts and stops
    /// shards and receives the messages for their entities.
    #[napi(constructor, ts_args_type = "options: RegionDriverOptions")]
    pub fn new(env: &Env, this: This, options: Unknown) -> Result<Self> {
        let this_raw = this.object.raw();
        boundary(env, None, |js| {
            let o = conv::object(js, options.raw(), "options")?;
            let c = common(js, o)?;
            let mut holder: Vec<(&str, V)> = Vec::new();
            if let Some(f) = c.js_extractor {
                holder.push(("extractor", f));
            }
            let transport = host::option(js, o, "transport", &adapt::TRANSPORT, &mut holder)?;
            let entity_host = host::option(js, o, "host", &adapt::ENTITY_HOST, &mut holder)?;
            let clock = backends::clock(js, conv::field(js, o, "clock")?, &mut holder)?;
            let callbacks = install(js, this_raw, &holder)?;
            let driver = CoreDriver::new(
                c.region,
                adapt::transport(transport),
                clock,
                adapt::entity_host(entity_host),
            );
            let js_extractor = c.js_extractor.is_some();
            let driver = DriverState {
                driver,
                js_extractor,
            };
            Ok(RegionDriver {
                inner: Handle::new("RegionDriver", driver).calling_back(callbacks),
            })
        })
    }

    /// Routes a message to its entity wherever the entity's shard lives. Throws INVALID_STATE
    /// when the region cannot take it (buffer full, shut down).
    #[napi(ts_args_type = "entity: string, payload: Payload")]
    pub fn route(&self, env: &Env, this: This, entity: Unknown, payload: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, d| {
            let entity = conv::string(js, entity.raw(), "entity")?;
            let payload = conv::bytes(js, payload.raw(), "payload")?;
            let shard = shard_of(js, d.js_extractor, d.driver.region(), &entity)?;
            Ok(d.driver.route_to_shard(&shard, &entity, payload)?)
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
            Ok(d.driver.route_to_shard(&shard, &entity, payload)?)
        })
    }

    /// One step input at the clock's time (what `receive`, `shardStopped`,
    /// `entityPassivated`, `coordinatorChanged`, `regionTerminated` and `gracefulShutdown`
    /// pass).
    #[napi(ts_args_type = "input: RegionInput")]
    pub fn handle(&self, env: &Env, this: This, input: Unknown) -> Result<()> {
        self.inner.call(env, &this, |js, d| {
            Ok(d.driver
                .input(proto::input(js, input.raw(), RegionInput::from_json_value)?)?)
        })
    }

    #[napi(ts_args_type = "entity: string")]
    pub fn shard_of(&self, env: &Env, this: This, entity: Unknown) -> Result<String> {
        self.inner.call(env, &this, |js, d| {
            let e = conv::string(js, entity.raw(), "entity")?;
            shard_of(js, d.js_extractor, d.driver.region(), &e)
        })
    }
}
