//! Worker ids and Snowflake ids: `org.shardline.Snowflake`, `org.shardline.InMemoryRegistry`
//! (with its sessions) and `org.shardline.WorkerIdHolder`.
//!
//! The holder waits (backoff, sequence overflow) through the host's `IdClock`, called back on
//! the calling thread like every other callback.

use jni::objects::{JLongArray, JObject, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray, jobjectArray, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;

use shardline_bind::driver_host::{self, Adapter};
use shardline_bind::ids::HolderOptions;
use shardline_bind::workerid_fields;
use shardline_core::workerid::snowflake::{Layout, Next, Snowflake};
use shardline_core::workerid::{Identity, InMemoryRegistry, InMemorySession};

use crate::boundary::{Failure, Result};
use crate::convert::{long_array, opt_long, string, string_array, ttl_ms, unsigned};
use crate::handle::{self, free_native, Handle};
use crate::host::JavaHost;
use crate::native::native;

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
/// `floor` < 0: unfenced (no floor, unlimited budget).
fn Java_org_shardline_Snowflake_nNew(
    _, t: jint, w: jint, s: jint, epoch: jlong, worker: jlong, floor: jlong, fenced: jboolean,
) -> jlong {
    let l = layout(t, w, s, epoch)?;
    let worker = unsigned(worker, "worker")?;
    let g = if fenced != JNI_FALSE {
        Snowflake::fenced(l, worker, u64::try_from(floor).ok())?
    } else {
        Snowflake::new(l, worker)?
    };
    Ok(Handle::into_raw("Snowflake", g))
}}

free_native!(Java_org_shardline_Snowflake_nFree, Snowflake);

native! {
/// {0, id} or {1, wait until (wall ms)}.
fn Java_org_shardline_Snowflake_nNext(env, h: jlong, now: jlong) -> jlongArray {
    let now = unsigned(now, "wallMs")?;
    let next = unsafe {
        handle::with::<Snowflake, _>(h, |g| {
            Ok(g.next(now).map_err(shardline_core::Error::from)?)
        })
    }?;
    match next {
        Next::Id(id) => long_array(env, &[0, opt_long(Some(id))]),
        Next::WaitUntil(t) => long_array(env, &[1, opt_long(Some(t))]),
    }
}}

native! {
/// Kind 0: extend budget to `v`; 1: revoke; 2: rollback tolerance `v`; 3: max fence wait `v`.
fn Java_org_shardline_Snowflake_nSet(_, h: jlong, kind: jint, v: jlong) {
    let v = if kind == 1 { 0 } else { unsigned(v, "value")? };
    unsafe {
        handle::with::<Snowflake, _>(h, |g| {
            match kind {
                0 => g.extend_budget(v),
                1 => g.revoke(),
                2 => *g = g.clone().with_rollback_tolerance(v),
                3 => *g = g.clone().with_max_fence_wait(v),
                other => {
                    return Err(Failure::invalid_argument(format!(
                        "unknown setting {other}"
                    )))
                }
            }
            Ok(())
        })
    }
}}

native! {
/// {worker, last timestamp, floor, budget}; -1 where absent.
fn Java_org_shardline_Snowflake_nInfo(env, h: jlong) -> jlongArray {
    let info = unsafe {
        handle::with::<Snowflake, _>(h, |g| {
            Ok([
                opt_long(Some(g.worker())),
                opt_long(g.last_timestamp_ms()),
                opt_long(g.floor_ms()),
                opt_long(g.budget_ms()),
            ])
        })
    }?;
    long_array(env, &info)
}}

native! {
/// {unix ms, worker, sequence}.
fn Java_org_shardline_Snowflake_nDecompose(
    env, t: jint, w: jint, s: jint, epoch: jlong, id: jlong,
) -> jlongArray {
    let p = layout(t, w, s, epoch)?.decompose(unsigned(id, "id")?);
    long_array(
        env,
        &[
            opt_long(Some(p.unix_ms)),
            opt_long(Some(p.worker)),
            opt_long(Some(p.sequence)),
        ],
    )
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

native! { fn Java_org_shardline_InMemoryRegistry_nAdvanceTo(_, h: jlong, now: jlong) -> jlong {
    let now = unsigned(now, "nowMs")?;
    unsafe {
        handle::with::<InMemoryRegistry, _>(h, |r| {
            r.advance_to(now);
            Ok(opt_long(Some(r.now_ms())))
        })
    }
}}

native! {
/// Flat {id, owner, incarnation, epoch, ...} of the live claims.
fn Java_org_shardline_InMemoryRegistry_nLiveClaims(env, h: jlong) -> jobjectArray {
    let claims = unsafe { handle::with::<InMemoryRegistry, _>(h, |r| Ok(r.live_claims())) }?;
    let flat: Vec<String> = claims
        .iter()
        .flat_map(|(id, c)| {
            [
                id.to_string(),
                c.owner.clone(),
                c.incarnation.to_string(),
                c.epoch.to_string(),
            ]
        })
        .collect();
    string_array(env, flat.iter())
}}

native! {
/// {epoch, floor, hwm} or null.
fn Java_org_shardline_InMemoryRegistry_nFence(env, h: jlong, id: jint) -> jlongArray {
    let id = u32::try_from(id)
        .map_err(|_| Failure::invalid_argument(format!("worker id is negative: {id}")))?;
    match unsafe { handle::with::<InMemoryRegistry, _>(h, |r| Ok(r.fence(id))) }? {
        None => Ok(std::ptr::null_mut()),
        Some(f) => long_array(
            env,
            &[
                opt_long(Some(f.epoch)),
                opt_long(Some(f.floor_ms)),
                opt_long(Some(f.hwm_ms)),
            ],
        ),
    }
}}

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
pub type Holder = shardline_bind::ids::Held<InMemorySession, Adapter<JavaHost>>;

native! {
/// `config`: {workerBits, spreadWindow (0: lowest first), backoffBaseMs, backoffMaxMs,
/// maxFailures}; `tenure`: {ttlMs, renewEveryMs, lookaheadMs, marginMs, driftPpm}; `layout`:
/// {timestampBits, workerBits, sequenceBits, epochMs}.
fn Java_org_shardline_WorkerIdHolder_nAcquire(
    env, session: jlong, config: JLongArray<'l>, tenure: JLongArray<'l>,
    layout_fields: JLongArray<'l>, owner: JString<'l>, incarnation: jlong, seed: jlong,
    clock: JObject<'l>,
) -> jlong {
    let reserve = workerid_fields::reserve_config(&longs(env, &config, "reserve config")?)?;
    let tenure = workerid_fields::tenure_config(&longs(env, &tenure, "tenure config")?)?;
    let layout = workerid_fields::layout(&longs(env, &layout_fields, "layout")?)?;
    let me = Identity {
        owner: string(env, &owner, "owner")?,
        incarnation: unsigned(incarnation, "incarnation")?,
    };
    let clock = driver_host::id_clock(JavaHost::new(env, &clock, "clock")?);
    let registry = unsafe { Handle::<InMemorySession>::get(session) }?.take()?;
    let options = HolderOptions {
        identity: me,
        reserve,
        tenure,
        layout,
        seed: seed as u64,
    };
    let held = Holder::acquire(registry, options, clock)?;
    Ok(Handle::into_raw("WorkerIdHolder", held))
}}

native! { fn Java_org_shardline_WorkerIdHolder_nFree(_, h: jlong) {
    // Releases the id if it is still held, so closing never leaves a claim behind.
    let released = unsafe { handle::with::<Holder, _>(h, release) };
    // SAFETY: Java frees a handle once, after its last call.
    unsafe { Handle::<Holder>::free(h) };
    released
}}

fn release(x: &mut Holder) -> Result<()> {
    if let Some(mut session) = x.release() {
        session.close();
    }
    Ok(())
}

native! {
/// {worker id, epoch, floor, budget, local deadline (-1 none)}.
fn Java_org_shardline_WorkerIdHolder_nInfo(env, h: jlong) -> jlongArray {
    let info = unsafe {
        handle::with::<Holder, _>(h, |x| {
            let w = x.holder()?;
            Ok([
                jlong::from(w.worker_id()),
                opt_long(Some(w.epoch())),
                opt_long(Some(w.tenure().floor_ms())),
                opt_long(Some(w.tenure().budget_ms())),
                opt_long(w.tenure().valid_until_ms()),
            ])
        })
    }?;
    long_array(env, &info)
}}

native! { fn Java_org_shardline_WorkerIdHolder_nNextId(_, h: jlong) -> jlong {
    unsafe {
        handle::with::<Holder, _>(h, |x| Ok(opt_long(Some(x.next_id()?))))
    }
}}

native! {
/// `until` < 0: one round of upkeep; returns when the next is due. Otherwise keeps the id
/// alive until the monotonic clock reads `until`.
fn Java_org_shardline_WorkerIdHolder_nMaintain(_, h: jlong, until: jlong) -> jlong {
    unsafe {
        handle::with::<Holder, _>(h, |x| match u64::try_from(until) {
            Err(_) => Ok(opt_long(Some(x.maintain()?))),
            Ok(u) => {
                x.hold_until(u)?;
                Ok(-1)
            }
        })
    }
}}

native! {
/// Hands the id back (returns the unused budget, deletes the claim) and ends the session.
fn Java_org_shardline_WorkerIdHolder_nRelease(_, h: jlong) {
    unsafe {
        handle::with::<Holder, _>(h, release)
    }
}}

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
