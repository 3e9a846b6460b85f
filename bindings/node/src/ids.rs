//! Worker ids and Snowflake ids: the sans-IO generator (pass the wall clock in), the
//! in-memory worker-id registry, and a holder that reserves an id, keeps it alive and issues
//! ids as bigints through a clock the host provides.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::driver_host as adapt;
use shardline_bind::ids::{self, HolderOptions, HostClock, SystemClock};
use shardline_bind::objects::{LayoutSpec, SnowflakeParts, WorkerClaim};
use shardline_core::workerid::snowflake::{Layout, Next, Snowflake as CoreSnowflake};
use shardline_core::workerid::{
    Identity, InMemoryRegistry, InMemorySession, Policy, ReserveConfig, TenureConfig,
};

use crate::backends;
use crate::conv;
use crate::error::{self, boundary, Fail, R};
use crate::handle::Handle;
use crate::host;
use crate::js::{Js, Type, V};
use crate::state::unknown;
use crate::strategy::HOLDER;

/// `{timestampBits = 41, workerBits = 10, sequenceBits = 12, epochMs = 2024-01-01}`.
fn layout(js: Js, v: Option<V>) -> R<Layout> {
    let spec = match v {
        Some(v) => conv::de::<LayoutSpec>(js, v, "layout")?,
        None => LayoutSpec::default(),
    };
    Ok(spec.build()?)
}

fn layout_js(js: Js, l: &Layout) -> R<V> {
    conv::ser(js, &LayoutSpec::from(l))
}

fn id_arg(js: Js, v: V) -> R<u64> {
    match js.type_of(v)? {
        Type::BigInt => js
            .bigint_u64_of(v)?
            .ok_or_else(|| Fail::invalid("id: out of range")),
        _ => conv::uint(js, v, "id"),
    }
}

/// Splits an id into its Unix millisecond, worker and sequence.
#[napi(
    ts_args_type = "id: bigint | number, layout?: SnowflakeLayout",
    ts_return_type = "{ unixMs: number; worker: number; sequence: number }"
)]
pub fn decompose_snowflake<'a>(
    env: &'a Env,
    id: Unknown,
    layout_v: Unknown,
) -> Result<Unknown<'a>> {
    boundary(env, None, |js| {
        let l = layout(
            js,
            (!js.is_nullish(layout_v.raw())?).then_some(layout_v.raw()),
        )?;
        let p = SnowflakeParts::from(l.decompose(id_arg(js, id.raw())?));
        Ok(unknown(js, conv::ser(js, &p)?))
    })
}

/// A Snowflake generator for one worker id. Sans-IO: `next(wallMs)` returns an id, or null
/// with `waitUntilMs` set when the caller must wait (sequence exhausted, clock behind).
#[napi]
pub struct Snowflake {
    inner: Handle<(CoreSnowflake, Option<u64>)>,
}

#[napi]
impl Snowflake {
    /// `floorMs`: timestamps a previous holder of this worker id may have used (never reissued).
    #[napi(
        constructor,
        ts_args_type = "worker: number, options?: { layout?: SnowflakeLayout; floorMs?: number }"
    )]
    pub fn new(env: &Env, worker: Unknown, options: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            let w = conv::uint(js, worker.raw(), "worker")?;
            let l = layout(js, conv::field_opt(js, options.raw(), "layout")?)?;
            let floor = match conv::field_opt(js, options.raw(), "floorMs")? {
                Some(f) => Some(conv::uint(js, f, "options.floorMs")?),
                None => None,
            };
            let g = if floor.is_some() {
                CoreSnowflake::fenced(l, w, floor)?
            } else {
                CoreSnowflake::new(l, w)?
            };
            Ok(Snowflake {
                inner: Handle::new("Snowflake", (g, None)),
            })
        })
    }

    /// The next id at wall time `wallMs` (Unix ms), or null: ask again at `waitUntilMs`.
    #[napi(ts_args_type = "wallMs: number", ts_return_type = "bigint | null")]
    pub fn next<'a>(&self, env: &'a Env, wall_ms: Unknown) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, (g, wait)| {
            let now = conv::uint(js, wall_ms.raw(), "wallMs")?;
            let v = match g.next(now).map_err(shardline_core::Error::from)? {
                Next::Id(id) => {
                    *wait = None;
                    js.bigint_u64(id)?
                }
                Next::WaitUntil(t) => {
                    *wait = Some(t);
                    js.null()?
                }
            };
            Ok(unknown(js, v))
        })
    }

    /// After `next` returned null: the wall time to ask again at.
    #[napi(getter)]
    pub fn wait_until_ms(&self, env: &Env) -> Result<Option<f64>> {
        self.inner.query(env, |_, (_, w)| Ok(w.map(|t| t as f64)))
    }

    /// Allows timestamps up to `ceilingMs` (the budget a worker-id tenure grants).
    #[napi(ts_args_type = "ceilingMs: number")]
    pub fn extend_budget(&self, env: &Env, ceiling_ms: Unknown) -> Result<()> {
        self.inner.query(env, |js, (g, _)| {
            g.extend_budget(conv::uint(js, ceiling_ms.raw(), "ceilingMs")?);
            Ok(())
        })
    }

    /// Stops issuing ids for good (the worker id was lost).
    #[napi(ts_args_type = "")]
    pub fn revoke(&self, env: &Env) -> Result<()> {
        self.inner.query(env, |_, (g, _)| {
            g.revoke();
            Ok(())
        })
    }

    #[napi(getter)]
    pub fn worker(&self, env: &Env) -> Result<f64> {
        self.inner.query(env, |_, (g, _)| Ok(g.worker() as f64))
    }

    #[napi(getter, ts_return_type = "SnowflakeLayout")]
    pub fn layout<'a>(&self, env: &'a Env) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, (g, _)| {
            Ok(unknown(js, layout_js(js, g.layout())?))
        })
    }

    #[napi(getter)]
    pub fn budget_ms(&self, env: &Env) -> Result<Option<f64>> {
        self.inner
            .query(env, |_, (g, _)| Ok(g.budget_ms().map(|t| t as f64)))
    }

    #[napi(getter)]
    pub fn floor_ms(&self, env: &Env) -> Result<Option<f64>> {
        self.inner
            .query(env, |_, (g, _)| Ok(g.floor_ms().map(|t| t as f64)))
    }

    #[napi(getter)]
    pub fn last_timestamp_ms(&self, env: &Env) -> Result<Option<f64>> {
        self.inner
            .query(env, |_, (g, _)| Ok(g.last_timestamp_ms().map(|t| t as f64)))
    }
}

/// The embedded worker-id registry: one process-local "server" whose time the host advances
/// (`advanceTo`), so session expiry is deterministic.
#[napi]
pub struct WorkerIdRegistry {
    inner: InMemoryRegistry,
}

#[napi]
impl WorkerIdRegistry {
    #[napi(constructor)]
    pub fn new() -> Self {
        WorkerIdRegistry {
            inner: InMemoryRegistry::new(),
        }
    }

    /// Moves server time forward; sessions past their expiry end, with their claims.
    #[napi(ts_args_type = "nowMs: number")]
    pub fn advance_to(&self, env: &Env, now_ms: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            self.inner
                .advance_to(conv::uint(js, now_ms.raw(), "nowMs")?);
            Ok(())
        })
    }

    #[napi(getter)]
    pub fn now_ms(&self) -> f64 {
        self.inner.now_ms() as f64
    }

    /// Live claims by worker id.
    #[napi(
        ts_return_type = "{ workerId: number; owner: string; incarnation: number; epoch: number }[]"
    )]
    pub fn live_claims<'a>(&self, env: &'a Env) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            let claims = WorkerClaim::all(self.inner.live_claims());
            let v = conv::ser(js, &claims)?;
            Ok(unknown(js, v))
        })
    }

    /// The timestamp fence of a worker id, or null if it was never used.
    #[napi(
        ts_args_type = "workerId: number",
        ts_return_type = "{ epoch: number; floorMs: number; hwmMs: number } | null"
    )]
    pub fn fence<'a>(&self, env: &'a Env, worker_id: Unknown) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            let id = u32::try_from(conv::uint(js, worker_id.raw(), "workerId")?)
                .map_err(|_| Fail::invalid("workerId is out of range"))?;
            let v = conv::ser(js, &self.inner.fence(id))?;
            Ok(unknown(js, v))
        })
    }
}

/// The clocks a holder waits on: a JavaScript `{wallMs(), monotonicMs(), sleepUntil(ms)}`
/// (a simulation's), or the system clocks, which block the thread while sleeping. What a
/// failure means is the shared rule (`IdClock`).
type NodeClock = Box<dyn HostClock + Send>;

type Held = shardline_bind::ids::Held<InMemorySession, NodeClock>;

/// Reserves a worker id in a registry, keeps it alive, and issues Snowflake ids under it.
#[napi]
pub struct WorkerIdHolder {
    inner: Handle<Held>,
}

#[napi]
impl WorkerIdHolder {
    /// Reserves the lowest free worker id (or one of the lowest `spread:N`) and confirms it.
    /// `clock` defaults to the system clocks (waits then block the thread).
    #[napi(
        constructor,
        ts_args_type = "registry: WorkerIdRegistry, options: { owner: string; incarnation: number; clock?: IdClock; ttlMs?: number; workerBits?: number; layout?: SnowflakeLayout; policy?: string; seed?: number }"
    )]
    pub fn new(env: &Env, this: This, registry: Unknown, options: Unknown) -> Result<Self> {
        let this_raw = this.object.raw();
        let js0 = Js::new(env.raw());
        // The clock must be reachable while the reservation runs, inside this very call.
        let holder_obj = (|| -> R<Option<V>> {
            let o = conv::object(js0, options.raw(), "options")?;
            match conv::field(js0, o, "clock")? {
                Some(c) => {
                    let h = js0.object()?;
                    js0.set(h, "clock", c)?;
                    js0.define_hidden(this_raw, HOLDER, h)?;
                    Ok(Some(h))
                }
                None => Ok(None),
            }
        })();
        let holder_obj = match holder_obj {
            Ok(h) => h,
            Err(f) => return Err(error::raise(js0, f)),
        };
        boundary(env, holder_obj, |js| {
            let o = conv::object(js, options.raw(), "options")?;
            let owner = conv::string(js, js.get(o, "owner")?, "options.owner")?;
            let incarnation = conv::uint(js, js.get(o, "incarnation")?, "options.incarnation")?;
            let ttl = match conv::field(js, o, "ttlMs")? {
                Some(v) => conv::uint(js, v, "options.ttlMs")?,
                None => 10_000,
            };
            let worker_bits = match conv::field(js, o, "workerBits")? {
                Some(v) => u8::try_from(conv::uint(js, v, "options.workerBits")?)
                    .map_err(|_| Fail::invalid("options.workerBits is out of range"))?,
                None => 10,
            };
            let l = layout(js, conv::field(js, o, "layout")?)?;
            let policy = match conv::field(js, o, "policy")? {
                None => Policy::Lowest,
                Some(p) => ids::policy(&conv::string(js, p, "options.policy")?, "options.policy")?,
            };
            let seed = match conv::field(js, o, "seed")? {
                Some(v) => conv::uint(js, v, "options.seed")?,
                None => 0,
            };
            let clock: NodeClock = match conv::field(js, o, "clock")? {
                Some(c) => Box::new(adapt::id_clock(host::object(
                    js,
                    c,
                    "options.clock",
                    "clock",
                    &adapt::ID_CLOCK,
                )?)),
                None => Box::new(SystemClock::default()),
            };
            let registry = backends::instance::<WorkerIdRegistry>(js, registry.raw())
                .ok_or_else(|| Fail::invalid("registry: expected a WorkerIdRegistry"))?;
            let options = HolderOptions {
                identity: Identity { owner, incarnation },
                reserve: ReserveConfig {
                    worker_bits,
                    policy,
                    ..Default::default()
                },
                tenure: TenureConfig::for_ttl(ttl),
                layout: l,
                seed,
            };
            let held = Held::acquire(registry.inner.session(ttl), options, clock)?;
            Ok(WorkerIdHolder {
                inner: Handle::new("WorkerIdHolder", held).calling_back(holder_obj.is_some()),
            })
        })
    }

    #[napi(getter)]
    pub fn worker_id(&self, env: &Env) -> Result<u32> {
        self.inner.query(env, |_, h| Ok(h.holder()?.worker_id()))
    }

    #[napi(getter)]
    pub fn epoch(&self, env: &Env) -> Result<f64> {
        self.inner.query(env, |_, h| Ok(h.holder()?.epoch() as f64))
    }

    /// Timestamps below this were allowed to earlier holders of the id.
    #[napi(getter)]
    pub fn floor_ms(&self, env: &Env) -> Result<f64> {
        self.inner
            .query(env, |_, h| Ok(h.holder()?.tenure().floor_ms() as f64))
    }

    /// Timestamps up to this are acknowledged by the registry.
    #[napi(getter)]
    pub fn budget_ms(&self, env: &Env) -> Result<f64> {
        self.inner
            .query(env, |_, h| Ok(h.holder()?.tenure().budget_ms() as f64))
    }

    /// The local (monotonic) deadline of the reservation.
    #[napi(getter)]
    pub fn valid_until_ms(&self, env: &Env) -> Result<Option<f64>> {
        self.inner.query(env, |_, h| {
            Ok(h.holder()?.tenure().valid_until_ms().map(|t| t as f64))
        })
    }

    #[napi(getter, ts_return_type = "SnowflakeLayout")]
    pub fn layout<'a>(&self, env: &'a Env) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, h| {
            Ok(unknown(
                js,
                layout_js(js, h.holder()?.generator().layout())?,
            ))
        })
    }

    /// The next Snowflake id; keeps the reservation alive as needed.
    #[napi(ts_args_type = "")]
    pub fn next_id(&self, env: &Env, this: This) -> Result<BigInt> {
        self.inner
            .call(env, &this, |_, h| Ok(BigInt::from(h.next_id()?)))
    }

    /// Does the upkeep that is due; returns the monotonic time of the next.
    #[napi(ts_args_type = "")]
    pub fn maintain(&self, env: &Env, this: This) -> Result<f64> {
        self.inner.call(env, &this, |_, h| Ok(h.maintain()? as f64))
    }

    /// Returns the unused budget and deletes the claim; the id is free for others at once.
    #[napi(ts_args_type = "")]
    pub fn release(&self, env: &Env, this: This) -> Result<()> {
        self.inner.call(env, &this, |_, h| {
            drop(h.release());
            Ok(())
        })
    }

    /// Releases the id (if still held) and forgets the clock; idempotent.
    #[napi(ts_args_type = "")]
    pub fn close(&self, env: &Env, this: This) -> Result<()> {
        if self.inner.is_open() {
            self.release(env, this)?;
        }
        self.inner.close(env, &this)
    }
}
