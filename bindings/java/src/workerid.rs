//! Worker ids and Snowflake ids: `org.shardline.Snowflake`, `org.shardline.InMemoryRegistry`
//! (with its sessions) and `org.shardline.WorkerIdHolder`.
//!
//! The holder waits (backoff, sequence overflow) through the host's `IdClock`, called back on
//! the calling thread like every other callback.

use jni::objects::{JLongArray, JObject, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;

use shardline_bind::driver_host::{self, Adapter};
use shardline_bind::ids::{Generator, HolderOptions};
use shardline_bind::ops::ids as ops_ids;
use shardline_bind::workerid_fields;
use shardline_core::workerid::snowflake::Layout;
use shardline_core::workerid::{Identity, InMemoryRegistry, InMemorySession, Registry};

use crate::boundary::{Failure, Result};
use crate::convert::{long_array, opt_long, string, ttl_ms, unsigned};
use crate::handle::{self, free_native, Handle};
use crate::host::JavaHost;
use crate::native::native;
use crate::ops::ops_native;

fn layout(t: jint, w: jint, s: jint, epoch: jlong) -> Result<Layout> {
    let v = [t.into(), w.into(), s.into(), epoch];
    let v: Vec<u64> = (v.iter().zip(workerid_fields::LAYOUT))
        .map(|(x, name)| unsigned(*x, name))
        .collect::<Result<_>>()?;
    Ok(workerid_fields::layout(&v)?)
}

/// A `long[]` of options as unsigned numbers; `what` names it.
fn longs(env: &mut JNIEnv, a: &JLongArray, what: &str) -> Result<Vec<u64>> {
    if a.is_null() {
        return Err(Failure::null(what));
    }
    let mut v = vec![0; env.get_array_length(a)? as usize];
    env.get_long_array_region(a, 0, &mut v)?;
    v.iter().map(|x| unsigned(*x, what)).collect()
}

// ---- Snowflake -----------------------------------------------------------------------------

native! {
/// `floor` < 0: no floor.
fn Java_org_shardline_Snowflake_nNew(
    _, t: jint, w: jint, s: jint, epoch: jlong, worker: jlong, floor: jlong, fenced: jboolean,
) -> jlong {
    let l = layout(t, w, s, epoch)?;
    let worker = unsigned(worker, "worker")?;
    let g = Generator::new(l, worker, fenced != JNI_FALSE, u64::try_from(floor).ok())?;
    Ok(Handle::into_raw("Snowflake", g))
}}

free_native!(Java_org_shardline_Snowflake_nFree, Generator);

native! {
/// {0, id} or {1, wait until (wall ms)}.
fn Java_org_shardline_Snowflake_nNext(env, h: jlong, now: jlong) -> jlongArray {
    let now = unsigned(now, "wallMs")?;
    let (id, wait) = unsafe {
        handle::with::<Generator, _>(h, |g| Ok((g.next(now)?, g.wait_until_ms)))
    }?;
    match id {
        Some(id) => long_array(env, &[0, opt_long(Some(id))]),
        None => long_array(env, &[1, opt_long(wait)]),
    }
}}

ops_native!(
    Java_org_shardline_Snowflake_nOp,
    "Snowflake",
    Generator,
    ops_ids::snowflake
);

native! {
/// {unix ms, worker, sequence}.
fn Java_org_shardline_Snowflake_nDecompose(
    env, t: jint, w: jint, s: jint, epoch: jlong, id: jlong,
) -> jlongArray {
    let p = layout(t, w, s, epoch)?.decompose(unsigned(id, "id")?);
    long_array(env, &[p.unix_ms, p.worker, p.sequence].map(|v| opt_long(Some(v))))
}}

native! { fn Java_org_shardline_Snowflake_nValidate(_, t: jint, w: jint, s: jint, epoch: jlong) {
    layout(t, w, s, epoch).map(|_| ())
}}

// ---- InMemoryRegistry ----------------------------------------------------------------------

native! { fn Java_org_shardline_InMemoryRegistry_nNew(_) -> jlong {
    Ok(Handle::into_raw(
        "InMemoryRegistry",
        InMemoryRegistry::new(),
    ))
}}

free_native!(Java_org_shardline_InMemoryRegistry_nFree, InMemoryRegistry);

native! { fn Java_org_shardline_InMemoryRegistry_nSession(_, h: jlong, ttl: jlong) -> jlong {
    let ttl = ttl_ms(ttl)?;
    let s = unsafe { handle::with::<InMemoryRegistry, _>(h, |r| Ok(r.session(ttl))) }?;
    Ok(Handle::into_raw("InMemorySession", s))
}}

ops_native!(
    Java_org_shardline_InMemoryRegistry_nOp,
    "InMemoryRegistry",
    InMemoryRegistry,
    ops_ids::registry
);

native! { fn Java_org_shardline_InMemorySession_nIsLive(_, h: jlong) -> jboolean {
    let live = unsafe { handle::with::<InMemorySession, _>(h, |s| Ok(s.is_live())) }?;
    Ok(if live { JNI_TRUE } else { JNI_FALSE })
}}

native! {
/// Ends the session (its claims go with it) and frees the handle.
fn Java_org_shardline_InMemorySession_nFree(_, h: jlong) {
    // SAFETY: Java frees a handle once, after its last call.
    let handle = unsafe { Handle::<InMemorySession>::get(h) }?;
    // Already moved into a holder: only the shell is left.
    if let Ok(mut s) = handle.take() {
        s.close();
    }
    unsafe { Handle::<InMemorySession>::free(h) };
    Ok(())
}}

// ---- WorkerIdHolder ------------------------------------------------------------------------

/// The host's `IdClock` through the shared adapter; what a failure means is the shared rule.
pub type Holder = shardline_bind::ids::Held<Box<dyn Registry + Send>, Adapter<JavaHost>>;

native! {
/// `config`: {workerBits, spreadWindow (0: lowest first), backoffBaseMs, backoffMaxMs,
/// maxFailures}; `tenure`: {ttlMs, renewEveryMs, lookaheadMs, marginMs, driftPpm}; `layout`:
/// {timestampBits, workerBits, sequenceBits, epochMs}.
fn Java_org_shardline_WorkerIdHolder_nAcquire(
    env, session: jlong, config: JLongArray<'l>, tenure: JLongArray<'l>,
    layout_fields: JLongArray<'l>, owner: JString<'l>, incarnation: jlong, seed: jlong,
    clock: JObject<'l>,
) -> jlong {
    let terms = HolderTerms { config, tenure, layout: layout_fields, owner, incarnation, seed, clock };
    acquire(env, terms, |_| Ok(Box::new(unsafe { Handle::<InMemorySession>::get(session) }?.take()?)))
}}

/// What `WorkerIdHolder.acquire` passes for any registry.
pub struct HolderTerms<'l> {
    pub config: JLongArray<'l>,
    pub tenure: JLongArray<'l>,
    pub layout: JLongArray<'l>,
    pub owner: JString<'l>,
    pub incarnation: jlong,
    pub seed: jlong,
    pub clock: JObject<'l>,
}

/// Reserves an id in the registry `session` makes (given the session TTL) and keeps the holder.
pub fn acquire(
    env: &mut JNIEnv,
    t: HolderTerms,
    session: impl FnOnce(u64) -> Result<Box<dyn Registry + Send>>,
) -> Result<jlong> {
    let reserve = workerid_fields::reserve_config(&longs(env, &t.config, "reserve config")?)?;
    let tenure = workerid_fields::tenure_config(&longs(env, &t.tenure, "tenure config")?)?;
    let layout = workerid_fields::layout(&longs(env, &t.layout, "layout")?)?;
    let me = Identity {
        owner: string(env, &t.owner, "owner")?,
        incarnation: unsigned(t.incarnation, "incarnation")?,
    };
    let clock = driver_host::id_clock(JavaHost::new(env, &t.clock, "clock")?);
    let registry = session(tenure.ttl_ms)?;
    let options = HolderOptions {
        identity: me,
        reserve,
        tenure,
        layout,
        seed: t.seed as u64,
    };
    let held = Holder::acquire(registry, options, clock)?;
    Ok(Handle::into_raw("WorkerIdHolder", held))
}

native! { fn Java_org_shardline_WorkerIdHolder_nFree(_, h: jlong) {
    // Releases the id if it is still held, so closing never leaves a claim behind.
    let released = unsafe {
        handle::with::<Holder, _>(h, |x| {
            drop(x.release());
            Ok(())
        })
    };
    // SAFETY: Java frees a handle once, after its last call.
    unsafe { Handle::<Holder>::free(h) };
    released
}}

native! { fn Java_org_shardline_WorkerIdHolder_nNextId(_, h: jlong) -> jlong {
    unsafe {
        handle::with::<Holder, _>(h, |x| Ok(opt_long(Some(x.next_id()?))))
    }
}}

ops_native!(
    Java_org_shardline_WorkerIdHolder_nOp,
    "WorkerIdHolder",
    Holder,
    ops_ids::holder
);

native! {
/// Core defaults, so Java never restates them: kind 0: reserve config {workerBits,
/// spreadWindow, backoffBaseMs, backoffMaxMs, maxFailures}; kind 1: `TenureConfig::for_ttl(arg)`
/// {ttlMs, renewEveryMs, lookaheadMs, marginMs, driftPpm}; kind 2: layout {timestampBits,
/// workerBits, sequenceBits, epochMs}.
fn Java_org_shardline_WorkerIdHolder_nDefaults(env, kind: jint, arg: jlong) -> jlongArray {
    let v: Vec<u64> = match kind {
        0 => workerid_fields::default_reserve().into(),
        1 => workerid_fields::default_tenure(unsigned(arg, "ttlMs")?).into(),
        _ => workerid_fields::default_layout().into(),
    };
    let v: Vec<jlong> = v.into_iter().map(|x| opt_long(Some(x))).collect();
    long_array(env, &v)
}}
