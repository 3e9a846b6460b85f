//! Worker ids and Snowflake ids: the sans-IO generator (pass the wall clock in), the
//! in-memory worker-id registry, and a holder that reserves an id, keeps it alive and issues
//! ids as bigints through a clock the host provides.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::driver_host as adapt;
use shardline_bind::ids::{Generator, HolderInit, HostClock, SystemClock};
use shardline_bind::objects::{LayoutSpec, SnowflakeParts};
use shardline_bind::ops::ids as ops_ids;
use shardline_core::workerid::snowflake::Layout;
use shardline_core::workerid::{InMemoryRegistry, Registry};

use crate::backends;
use crate::conv;
use crate::error::{self, boundary, Fail, R};
use crate::handle::Handle;
use crate::host;
use crate::js::{Js, Type, V};
use crate::ops;
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
    inner: Handle<Generator>,
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
            Ok(Snowflake {
                inner: Handle::new("Snowflake", Generator::new(l, w, floor.is_some(), floor)?),
            })
        })
    }

    /// The next id at wall time `wallMs` (Unix ms), or null: ask again at `waitUntilMs`.
    #[napi(ts_args_type = "wallMs: number", ts_return_type = "bigint | null")]
    pub fn next<'a>(&self, env: &'a Env, wall_ms: Unknown) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, g| {
            let v = match g.next(conv::uint(js, wall_ms.raw(), "wallMs")?)? {
                Some(id) => js.bigint_u64(id)?,
                None => js.null()?,
            };
            Ok(unknown(js, v))
        })
    }

    /// `shardline_bind::ops::ids::snowflake`; lib/ids.cjs names them.
    /// The named operations; lib/ids.cjs names each.
    #[napi(
        ts_args_type = "name: string, args: unknown[]",
        ts_return_type = "unknown"
    )]
    pub fn op<'a>(&self, env: &'a Env, name: Unknown, args: Unknown) -> Result<Unknown<'a>> {
        self.inner.query(env, |js, g| {
            ops::call(js, "Snowflake", name.raw(), args.raw(), |a| {
                ops_ids::snowflake(g, a)
            })
        })
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

    /// `shardline_bind::ops::ids::registry`; lib/ids.cjs names them.
    /// The named operations; lib/ids.cjs names each.
    #[napi(
        ts_args_type = "name: string, args: unknown[]",
        ts_return_type = "unknown"
    )]
    pub fn op<'a>(&self, env: &'a Env, name: Unknown, args: Unknown) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            ops::call(js, "WorkerIdRegistry", name.raw(), args.raw(), |a| {
                ops_ids::registry(&self.inner, a)
            })
        })
    }
}

/// The clocks a holder waits on: a JavaScript `{wallMs(), monotonicMs(), sleepUntil(ms)}`
/// (a simulation's), or the system clocks, which block the thread while sleeping. What a
/// failure means is the shared rule (`IdClock`).
type NodeClock = Box<dyn HostClock + Send>;

type Held = shardline_bind::ids::Held<Box<dyn Registry + Send>, NodeClock>;

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
        ts_args_type = "registry: WorkerIdRegistry | Etcd, options: { owner: string; incarnation: number; clock?: IdClock; ttlMs?: number; workerBits?: number; layout?: SnowflakeLayout; policy?: string; seed?: number }"
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
            let (options, ttl) = conv::de::<HolderInit>(js, o, "options")?.options()?;
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
            let session: Box<dyn Registry + Send> =
                match backends::instance::<WorkerIdRegistry>(js, registry.raw()) {
                    Some(r) => Box::new(r.inner.session(ttl)),
                    None => crate::etcd::registry(js, registry.raw(), ttl).ok_or_else(|| {
                        Fail::invalid("registry: expected a WorkerIdRegistry or an Etcd")
                    })?,
                };
            let held = Held::acquire(session, options, clock)?;
            Ok(WorkerIdHolder {
                inner: Handle::new("WorkerIdHolder", held).calling_back(holder_obj.is_some()),
            })
        })
    }

    /// The next Snowflake id; keeps the reservation alive as needed.
    #[napi(ts_args_type = "")]
    pub fn next_id(&self, env: &Env, this: This) -> Result<BigInt> {
        self.inner
            .call(env, &this, |_, h| Ok(BigInt::from(h.next_id()?)))
    }

    /// `shardline_bind::ops::ids::holder`; lib/ids.cjs names them.
    /// The named operations; lib/ids.cjs names each.
    #[napi(
        ts_args_type = "name: string, args: unknown[]",
        ts_return_type = "unknown"
    )]
    pub fn op<'a>(
        &self,
        env: &'a Env,
        this: This,
        name: Unknown,
        args: Unknown,
    ) -> Result<Unknown<'a>> {
        self.inner.call(env, &this, |js, h| {
            ops::call(js, "WorkerIdHolder", name.raw(), args.raw(), |a| {
                ops_ids::holder(h, a)
            })
        })
    }

    /// Releases the id (if still held) and forgets the clock; idempotent.
    #[napi(ts_args_type = "")]
    pub fn close(&self, env: &Env, this: This) -> Result<()> {
        if self.inner.is_open() {
            self.inner.call(env, &this, |_, h| {
                drop(h.release());
                Ok(())
            })?;
        }
        self.inner.close(env, &this)
    }
}
