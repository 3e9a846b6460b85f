//! Worker ids and Snowflake ids: the sans-IO generator (pass the wall clock in), the
//! in-memory worker-id registry, and a holder that reserves an id, keeps it alive and issues
//! ids as bigints through a clock the host provides.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::driver_host as adapt;
use shardline_bind::ids::{Generator, HolderInit, HostClock, SystemClock};
use shardline_bind::objects::LayoutSpec;
use shardline_core::workerid::snowflake::Layout;
use shardline_core::workerid::{InMemoryRegistry, InMemorySession};

use crate::backends;
use crate::conv;
use crate::error::{self, boundary, Fail, R};
use crate::handle::Handle;
use crate::host;
use crate::js::{Js, V};
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

/// A Snowflake generator for one worker id. Sans-IO: `next(wallMs)` returns an id, or null
/// with `waitUntilMs` set when the caller must wait (sequence exhausted, clock behind).
#[napi]
pub struct Snowflake {
    pub(crate) inner: Handle<Generator>,
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
                Some(id) => js.to(BigInt::from(id))?,
                None => js.null()?,
            };
            Ok(unknown(js, v))
        })
    }
}

/// The embedded worker-id registry: one process-local "server" whose time the host advances
/// (`advanceTo`), so session expiry is deterministic.
#[napi]
pub struct WorkerIdRegistry {
    pub(crate) inner: InMemoryRegistry,
}

#[napi]
impl WorkerIdRegistry {
    #[napi(constructor)]
    pub fn new() -> Self {
        WorkerIdRegistry {
            inner: InMemoryRegistry::new(),
        }
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
    pub(crate) inner: Handle<Held>,
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
            let registry = backends::instance::<WorkerIdRegistry>(js, registry.raw())
                .ok_or_else(|| Fail::invalid("registry: expected a WorkerIdRegistry"))?;
            let held = Held::acquire(registry.inner.session(ttl), options, clock)?;
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

    /// Releases the id (if still held) and forgets the clock; idempotent.
    #[napi(ts_args_type = "")]
    pub fn close(&self, env: &Env, this: This) -> Result<()> {
        if self.inner.is_open() {
            self.inner.call(env, &this, |_, h| {
                drop(h.release());
                Ok(())
            })?;
        }
        self.inner.close(env, this.object.raw())
    }
}
