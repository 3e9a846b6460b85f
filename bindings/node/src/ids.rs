//! Worker ids and Snowflake ids: the sans-IO generator (pass the wall clock in), the
//! in-memory worker-id registry, and a holder that reserves an id, keeps it alive and issues
//! ids as bigints through a clock the host provides.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::driver_host as adapt;
use shardline_bind::ids::{Generator, HolderInit, HostClock, SystemClock};
use shardline_bind::ops::constructors::snowflake;
use shardline_core::workerid::{InMemoryRegistry, Registry};

use crate::backends;
use crate::conv;
use crate::error::{boundary, Fail};
use crate::handle::{install, Handle};
use crate::host;
use crate::ops::make;
use crate::strategy::holder_of;

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
        let g = make(env, "Snowflake", "new", &[&worker, &options], snowflake)?;
        Ok(Snowflake {
            inner: Handle::new("Snowflake", g),
        })
    }

    /// The next id at wall time `wallMs` (Unix ms), or null: ask again at `waitUntilMs`.
    #[napi(ts_args_type = "wallMs: number", ts_return_type = "bigint | null")]
    pub fn next(&self, env: &Env, wall_ms: Unknown) -> Result<Option<BigInt>> {
        self.inner.query(env, |js, g| {
            let id = g.next(conv::uint(js, wall_ms.raw(), "wallMs")?)?;
            Ok(id.map(BigInt::from))
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

type Held = shardline_bind::ids::Held<Box<dyn Registry + Send>, NodeClock>;

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
        ts_args_type = "registry: WorkerIdRegistry | Etcd, options: { owner: string; incarnation: number; clock?: IdClock; ttlMs?: number; workerBits?: number; layout?: SnowflakeLayout; policy?: string; seed?: number }"
    )]
    pub fn new(env: &Env, this: This, registry: Unknown, options: Unknown) -> Result<Self> {
        let this = this.object.raw();
        // The clock must be reachable while the reservation runs, inside this very call.
        let holder = boundary(env, None, |js| {
            let o = conv::object(js, options.raw(), "options")?;
            let clock: Vec<_> = conv::field(js, o, "clock")?
                .map(|c| ("clock", c))
                .into_iter()
                .collect();
            install(js, this, &clock)?;
            holder_of(js, this)
        })?;
        boundary(env, holder, |js| {
            let o = conv::object(js, options.raw(), "options")?;
            let (options, ttl) = conv::de::<HolderInit>(js, o, "options")?.options()?;
            let clock: NodeClock = match conv::field(js, o, "clock")? {
                Some(c) => {
                    let c = host::object(js, c, "clock", &adapt::ID_CLOCK)?;
                    Box::new(adapt::id_clock(c))
                }
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
                inner: Handle::new("WorkerIdHolder", held).calling_back(holder.is_some()),
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
