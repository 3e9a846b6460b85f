//! Host services for the callback drivers: the in-memory backends (usable directly too) and
//! adapters that carry the core's calls to JavaScript objects.
//!
//! Each adapter finds its object through the frame of the native call under way (see
//! `error.rs`), so the adapters hold no JavaScript value and are `Send` as the core requires.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::objects::{LeaseHolder, LeaseOptions};
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::driver::{Clock, EntityHost, ManualClock as CoreClock, Transport};
use shardline_core::lease::{InMemoryLease as CoreLease, Lease, LeaseGrant};
use shardline_core::protocol::{EntityId, Envelope, FencingToken, Payload};
use shardline_core::store::{InMemoryStore as CoreStore, Store, StoredState, WriteOutcome};

use crate::conv;
use crate::error::{self, boundary, Code, Fail, R};
use crate::js::{Js, Type, V};
use crate::proto;
use crate::state::unknown;

fn failed(role: &str) -> shardline_core::Error {
    shardline_core::Error::invalid_state(format!("the {role} callback failed"))
}

/// `target` itself when it is a function, else its method `name`.
fn method(js: Js, target: V, role: &str, name: &str) -> R<(V, V)> {
    match js.type_of(target)? {
        Type::Function => Ok((js.undefined()?, target)),
        Type::Object => own_method(js, target, role, name),
        _ => Err(Fail::new(Code::CallbackFailed, format!("no {role} is set"))),
    }
}

/// `target[name]`, which must be a function.
pub fn own_method(js: Js, target: V, role: &str, name: &str) -> R<(V, V)> {
    let f = js.get(target, name)?;
    if js.type_of(f)? != Type::Function {
        return Err(Fail::new(
            Code::CallbackFailed,
            format!("the {role} has no {name} function"),
        ));
    }
    Ok((target, f))
}

/// Like [`method`], for optional methods: `None` when absent.
fn optional_method(js: Js, target: V, name: &str) -> R<Option<(V, V)>> {
    let f = js.get(target, name)?;
    Ok((js.type_of(f)? == Type::Function).then_some((target, f)))
}

pub fn call(js: Js, recv_f: (V, V), args: &[V]) -> R<V> {
    Ok(js.call(recv_f.0, recv_f.1, args)?)
}

/// Checks that an option meant as a callback object has the methods the core will call.
pub fn require_methods(js: Js, v: V, what: &str, names: &[&str], function_ok: bool) -> R<()> {
    match js.type_of(v)? {
        Type::Function if function_ok => Ok(()),
        Type::Object => {
            for n in names {
                if js.type_of(js.get(v, n)?)? != Type::Function {
                    return Err(Fail::invalid(format!("{what}.{n}: expected a function")));
                }
            }
            Ok(())
        }
        Type::Undefined | Type::Null => Err(conv::missing(what)),
        _ => Err(Fail::invalid(format!(
            "{what}: expected {}",
            if function_ok {
                "a function or an object"
            } else {
                "an object"
            }
        ))),
    }
}

// ---- adapters -------------------------------------------------------------------------------

pub struct JsTransport;

impl Transport for JsTransport {
    fn send(&mut self, envelope: Envelope) -> shardline_core::Result<()> {
        error::callback("transport", |js, t| {
            let m = method(js, t, "transport", "send")?;
            call(js, m, &[proto::envelope_js(js, &envelope)?])?;
            Ok(())
        })
        .ok_or_else(|| failed("transport"))
    }
}

/// A clock read from JavaScript; a failed read repeats the last good time (and the call
/// rethrows the failure).
#[derive(Default)]
pub struct JsClock {
    last: AtomicU64,
}

impl Clock for JsClock {
    fn now_ms(&self) -> u64 {
        let now = error::callback("clock", |js, c| {
            let m = method(js, c, "clock", "nowMs")?;
            let v = call(js, m, &[])?;
            conv::uint(js, v, "the clock's time").map_err(Fail::into_callback_failure)
        });
        match now {
            Some(n) => {
                self.last.fetch_max(n, Ordering::SeqCst);
                n
            }
            None => self.last.load(Ordering::SeqCst),
        }
    }
}

/// Milliseconds since the clock was made, from the OS monotonic clock.
pub struct Monotonic(Instant);

impl Monotonic {
    pub fn new() -> Monotonic {
        Monotonic(Instant::now())
    }
}

impl Clock for Monotonic {
    fn now_ms(&self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
}

pub struct JsLease;

impl Lease for JsLease {
    fn acquire(&mut self, now_ms: u64) -> shardline_core::Result<Option<LeaseGrant>> {
        error::callback("lease", |js, l| {
            let v = call(
                js,
                method(js, l, "lease", "acquire")?,
                &[js.number(now_ms as f64)?],
            )?;
            if js.is_nullish(v)? {
                return Ok(None);
            }
            conv::de::<LeaseGrant>(js, v, "the lease's grant")
                .map(Some)
                .map_err(Fail::into_callback_failure)
        })
        .ok_or_else(|| failed("lease acquire"))
    }

    fn renew(&mut self, token: FencingToken, now_ms: u64) -> shardline_core::Result<Option<u64>> {
        error::callback("lease", |js, l| {
            let args = [js.number(token.0 as f64)?, js.number(now_ms as f64)?];
            let v = call(js, method(js, l, "lease", "renew")?, &args)?;
            if js.is_nullish(v)? {
                return Ok(None);
            }
            conv::uint(js, v, "the lease's renewed deadline")
                .map(Some)
                .map_err(Fail::into_callback_failure)
        })
        .ok_or_else(|| failed("lease renew"))
    }

    fn release(&mut self, token: FencingToken) -> shardline_core::Result<()> {
        error::callback("lease", |js, l| {
            call(
                js,
                method(js, l, "lease", "release")?,
                &[js.number(token.0 as f64)?],
            )?;
            Ok(())
        })
        .ok_or_else(|| failed("lease release"))
    }
}

fn outcome(js: Js, v: V) -> R<WriteOutcome> {
    if js.is_nullish(v)? || js.type_of(v)? == Type::Boolean && js.bool_of(v)? {
        return Ok(WriteOutcome::Written);
    }
    conv::de(js, v, "the store's answer").map_err(Fail::into_callback_failure)
}

pub struct JsStore;

impl Store for JsStore {
    fn append(
        &mut self,
        token: FencingToken,
        record: &Record,
    ) -> shardline_core::Result<WriteOutcome> {
        error::callback("store", |js, s| {
            let args = [js.number(token.0 as f64)?, conv::ser(js, record)?];
            outcome(js, call(js, method(js, s, "store", "append")?, &args)?)
        })
        .ok_or_else(|| failed("store append"))
    }

    fn save_snapshot(
        &mut self,
        token: FencingToken,
        snapshot: &Snapshot,
    ) -> shardline_core::Result<WriteOutcome> {
        error::callback("store", |js, s| {
            let args = [js.number(token.0 as f64)?, conv::ser(js, snapshot)?];
            outcome(
                js,
                call(js, method(js, s, "store", "saveSnapshot")?, &args)?,
            )
        })
        .ok_or_else(|| failed("store saveSnapshot"))
    }

    fn load(&mut self, token: FencingToken) -> shardline_core::Result<Option<StoredState>> {
        error::callback("store", |js, s| {
            let v = call(
                js,
                method(js, s, "store", "load")?,
                &[js.number(token.0 as f64)?],
            )?;
            if js.is_nullish(v)? {
                return Ok(None);
            }
            conv::de::<StoredState>(js, v, "the stored state")
                .map(Some)
                .map_err(Fail::into_callback_failure)
        })
        .ok_or_else(|| failed("store load"))
    }
}

/// The entity host of a region driver: `startShard`, `deliver`, `stopShard` and the optional
/// `startEntities`, `undeliverable`, `stopped`.
pub struct JsHost;

impl EntityHost for JsHost {
    fn start_shard(&mut self, shard: &str, entities: &[EntityId]) -> shardline_core::Result<()> {
        error::callback("host", |js, h| {
            call(
                js,
                method(js, h, "host", "startShard")?,
                &[js.string(shard)?, js.strings(entities)?],
            )?;
            Ok(())
        })
        .ok_or_else(|| failed("host startShard"))
    }

    fn start_entities(&mut self, shard: &str, entities: &[EntityId]) -> shardline_core::Result<()> {
        error::callback("host", |js, h| {
            let m = match optional_method(js, h, "startEntities")? {
                Some(m) => m,
                None => method(js, h, "host", "startShard")?,
            };
            call(js, m, &[js.string(shard)?, js.strings(entities)?])?;
            Ok(())
        })
        .ok_or_else(|| failed("host startEntities"))
    }

    fn deliver(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
    ) -> shardline_core::Result<()> {
        error::callback("host", |js, h| {
            let args = [js.string(shard)?, js.string(entity)?, js.buffer(&payload)?];
            call(js, method(js, h, "host", "deliver")?, &args)?;
            Ok(())
        })
        .ok_or_else(|| failed("host deliver"))
    }

    fn stop_shard(&mut self, shard: &str) -> shardline_core::Result<bool> {
        error::callback("host", |js, h| {
            let v = call(
                js,
                method(js, h, "host", "stopShard")?,
                &[js.string(shard)?],
            )?;
            Ok(js.type_of(v)? == Type::Boolean && js.bool_of(v)?)
        })
        .ok_or_else(|| failed("host stopShard"))
    }

    fn undeliverable(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
        reason: &str,
    ) -> shardline_core::Result<()> {
        error::callback("host", |js, h| {
            if let Some(m) = optional_method(js, h, "undeliverable")? {
                let args = [
                    js.string(shard)?,
                    js.string(entity)?,
                    js.buffer(&payload)?,
                    js.string(reason)?,
                ];
                call(js, m, &args)?;
            }
            Ok(())
        })
        .ok_or_else(|| failed("host undeliverable"))
    }

    fn stopped(&mut self) -> shardline_core::Result<()> {
        error::callback("host", |js, h| {
            if let Some(m) = optional_method(js, h, "stopped")? {
                call(js, m, &[])?;
            }
            Ok(())
        })
        .ok_or_else(|| failed("host stopped"))
    }
}

// ---- choosing native or JavaScript services -------------------------------------------------

pub fn instance<'a, T: 'static + JavaScriptClassExt + napi::bindgen_prelude::ObjectFinalize>(
    js: Js,
    v: V,
) -> Option<&'a T>
where
    ClassInstance<'a, T>: FromNapiValue,
{
    let env = Env::from_raw(js.env);
    if !T::instance_of(&env, &unknown(js, v)).unwrap_or(false) {
        return None;
    }
    // SAFETY: checked to be a T of this env; used during this call only.
    let inst = unsafe { ClassInstance::<T>::from_napi_value(js.env, v) }.ok()?;
    Some(unsafe { &*(&*inst as *const T) })
}

/// The clock option: a ManualClock (shared), a function or `{nowMs()}`, or the monotonic
/// clock when left out. `true` in the second place: the option is JavaScript.
pub fn clock(js: Js, v: Option<V>) -> R<(Box<dyn Clock>, bool)> {
    let Some(v) = v else {
        return Ok((Box::new(Monotonic::new()), false));
    };
    if let Some(c) = instance::<ManualClock>(js, v) {
        return Ok((Box::new(c.inner.clone()), false));
    }
    require_methods(js, v, "clock", &["nowMs"], true)?;
    Ok((Box::<JsClock>::default(), true))
}

pub fn lease(js: Js, v: Option<V>, owner: &str) -> R<(Box<dyn Lease>, bool)> {
    let Some(v) = v else {
        return Ok((Box::new(CoreLease::new(owner, 30_000)), false));
    };
    if let Some(l) = instance::<InMemoryLease>(js, v) {
        return Ok((Box::new(l.inner.clone()), false));
    }
    require_methods(js, v, "lease", &["acquire", "renew", "release"], false)?;
    Ok((Box::new(JsLease), true))
}

pub fn store(js: Js, v: Option<V>) -> R<(Box<dyn Store>, bool)> {
    let Some(v) = v else {
        return Ok((Box::new(CoreStore::new()), false));
    };
    if let Some(s) = instance::<InMemoryStore>(js, v) {
        return Ok((Box::new(s.inner.clone()), false));
    }
    require_methods(js, v, "store", &["append", "saveSnapshot", "load"], false)?;
    Ok((Box::new(JsStore), true))
}

// ---- native backends ------------------------------------------------------------------------

/// A clock the host sets; drivers given the same ManualClock share its time.
#[napi]
pub struct ManualClock {
    inner: CoreClock,
}

#[napi]
impl ManualClock {
    #[napi(constructor, ts_args_type = "nowMs?: number")]
    pub fn new(env: &Env, now_ms: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            let n = if js.is_nullish(now_ms.raw())? {
                0
            } else {
                conv::uint(js, now_ms.raw(), "nowMs")?
            };
            Ok(ManualClock {
                inner: CoreClock::new(n),
            })
        })
    }

    #[napi]
    pub fn now_ms(&self) -> f64 {
        self.inner.now_ms() as f64
    }

    /// Moves the time forward to `nowMs` (never backwards).
    #[napi(ts_args_type = "nowMs: number")]
    pub fn set(&self, env: &Env, now_ms: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            self.inner.set(conv::uint(js, now_ms.raw(), "nowMs")?);
            Ok(())
        })
    }

    #[napi(ts_args_type = "ms: number")]
    pub fn advance(&self, env: &Env, ms: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            self.inner.advance(conv::uint(js, ms.raw(), "ms")?);
            Ok(())
        })
    }
}

/// The embedded coordinator lease: handles made with `contender` contend for the same lease.
/// Fencing tokens grow across holders; deadlines are local (`validUntilMs`).
#[napi]
pub struct InMemoryLease {
    inner: CoreLease,
}

fn grant_js(js: Js, g: Option<LeaseGrant>) -> R<V> {
    match g {
        Some(g) => conv::ser(js, &g),
        None => js.null(),
    }
}

#[napi]
impl InMemoryLease {
    /// A new lease nobody holds; this handle contends as `owner`. `marginMs` and `driftPpm`
    /// shorten local deadlines (defaults: ttl/10 capped at 1 s, and 1000 ppm).
    #[napi(
        constructor,
        ts_args_type = "owner: string, ttlMs: number, options?: { marginMs?: number; driftPpm?: number }"
    )]
    pub fn new(env: &Env, owner: Unknown, ttl_ms: Unknown, options: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            let owner = conv::string(js, owner.raw(), "owner")?;
            let ttl = conv::uint(js, ttl_ms.raw(), "ttlMs")?;
            let mut l = CoreLease::new(&owner, ttl);
            let opts = if js.is_nullish(options.raw())? {
                LeaseOptions::default()
            } else {
                conv::de::<LeaseOptions>(js, options.raw(), "options")?
            };
            if let Some((margin, drift)) = opts.safety(ttl) {
                l = l.with_safety(margin, drift);
            }
            Ok(InMemoryLease { inner: l })
        })
    }

    /// Another contender for the same lease.
    #[napi(ts_args_type = "owner: string")]
    pub fn contender(&self, env: &Env, owner: Unknown) -> Result<InMemoryLease> {
        boundary(env, None, |js| {
            let owner = conv::string(js, owner.raw(), "owner")?;
            Ok(InMemoryLease {
                inner: self.inner.contender(&owner),
            })
        })
    }

    /// The holder and token as the backend sees them at `nowMs`.
    #[napi(
        ts_args_type = "nowMs: number",
        ts_return_type = "{ owner: string; token: number } | null"
    )]
    pub fn holder<'a>(&self, env: &'a Env, now_ms: Unknown) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let h = self
                .inner
                .holder(now)
                .map(|(owner, t)| LeaseHolder { owner, token: t.0 });
            Ok(unknown(js, conv::ser(js, &h)?))
        })
    }

    /// Test hook: the backend forgets the holder, as when its session expires server-side.
    #[napi]
    pub fn expire_now(&self) {
        self.inner.expire_now()
    }

    #[napi(ts_args_type = "nowMs: number", ts_return_type = "LeaseGrant | null")]
    pub fn acquire<'a>(&self, env: &'a Env, now_ms: Unknown) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            let g = self.inner.clone().acquire(now)?;
            Ok(unknown(js, grant_js(js, g)?))
        })
    }

    #[napi(ts_args_type = "token: number, nowMs: number")]
    pub fn renew(&self, env: &Env, token: Unknown, now_ms: Unknown) -> Result<Option<f64>> {
        boundary(env, None, |js| {
            let t = FencingToken(conv::uint(js, token.raw(), "token")?);
            let now = conv::uint(js, now_ms.raw(), "nowMs")?;
            Ok(self.inner.clone().renew(t, now)?.map(|d| d as f64))
        })
    }

    #[napi(ts_args_type = "token: number")]
    pub fn release(&self, env: &Env, token: Unknown) -> Result<()> {
        boundary(env, None, |js| {
            let t = FencingToken(conv::uint(js, token.raw(), "token")?);
            Ok(self.inner.clone().release(t)?)
        })
    }
}

/// The embedded coordinator state store. Drivers given the same store share it, so a
/// failover can be played in one process; writes with a token below the highest seen are
/// refused.
#[napi]
pub struct InMemoryStore {
    inner: CoreStore,
}

#[napi]
impl InMemoryStore {
    /// An empty store, or one holding `state` (e.g. another store's `contents()`).
    #[napi(constructor, ts_args_type = "state?: StoredState")]
    pub fn new(env: &Env, state: Unknown) -> Result<Self> {
        boundary(env, None, |js| {
            let inner = if js.is_nullish(state.raw())? {
                CoreStore::new()
            } else {
                CoreStore::from_state(conv::de(js, state.raw(), "state")?)
            };
            Ok(InMemoryStore { inner })
        })
    }

    /// What a load would return now, without fencing anyone.
    #[napi(ts_return_type = "StoredState")]
    pub fn contents<'a>(&self, env: &'a Env) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            Ok(unknown(js, conv::ser(js, &self.inner.contents())?))
        })
    }

    #[napi(getter)]
    pub fn highest_token(&self) -> f64 {
        self.inner.highest_token().0 as f64
    }

    #[napi(
        ts_args_type = "token: number, record: StoredRecord",
        ts_return_type = "WriteOutcome"
    )]
    pub fn append<'a>(&self, env: &'a Env, token: Unknown, record: Unknown) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            let t = FencingToken(conv::uint(js, token.raw(), "token")?);
            let r: Record = conv::de(js, record.raw(), "record")?;
            let o = self.inner.clone().append(t, &r)?;
            Ok(unknown(js, conv::ser(js, &o)?))
        })
    }

    #[napi(
        ts_args_type = "token: number, snapshot: Snapshot",
        ts_return_type = "WriteOutcome"
    )]
    pub fn save_snapshot<'a>(
        &self,
        env: &'a Env,
        token: Unknown,
        snapshot: Unknown,
    ) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            let t = FencingToken(conv::uint(js, token.raw(), "token")?);
            let s: Snapshot = conv::de(js, snapshot.raw(), "snapshot")?;
            let o = self.inner.clone().save_snapshot(t, &s)?;
            Ok(unknown(js, conv::ser(js, &o)?))
        })
    }

    /// Reads the state and fences every token below `token`; null when `token` is fenced.
    #[napi(ts_args_type = "token: number", ts_return_type = "StoredState | null")]
    pub fn load<'a>(&self, env: &'a Env, token: Unknown) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            let t = FencingToken(conv::uint(js, token.raw(), "token")?);
            let v = match self.inner.clone().load(t)? {
                Some(s) => conv::ser(js, &s)?,
                None => js.null()?,
            };
            Ok(unknown(js, v))
        })
    }
}
