//! The embedded in-memory backends: `org.shardline.InMemoryLease` and
//! `org.shardline.InMemoryStore`. Handles made from one another (`contender`, clones handed
//! to a driver) share one backend, so fail-over can be played inside one JVM.

use jni::objects::JString;
use jni::sys::{jlong, jlongArray, jobjectArray, jstring};

use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::{InMemoryLease, Lease};
use shardline_core::host::{InMemoryStore, Store, WriteOutcome};
use shardline_core::protocol::FencingToken;

use crate::boundary::Result;
use crate::convert::{
    from_json as json, long_array, new_string, opt_long, string, string_array, to_json, ttl_ms,
    unsigned,
};
use crate::handle::{self, free_native, Handle};
use crate::native::native;

/// A clone sharing the backend of the lease behind `h` (for a driver).
pub fn lease(h: jlong) -> Result<InMemoryLease> {
    unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.clone())) }
}

pub fn store(h: jlong) -> Result<InMemoryStore> {
    unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.clone())) }
}

native! { fn Java_org_shardline_InMemoryLease_nNew(env, owner: JString<'l>, ttl: jlong) -> jlong {
    let owner = string(env, &owner, "owner")?;
    let ttl = ttl_ms(ttl)?;
    Ok(Handle::into_raw("lease", InMemoryLease::new(&owner, ttl)))
}}

native! { fn Java_org_shardline_InMemoryLease_nContender(
    env, h: jlong, owner: JString<'l>,
) -> jlong {
    let owner = string(env, &owner, "owner")?;
    let other = unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.contender(&owner))) }?;
    Ok(Handle::into_raw("lease", other))
}}

native! { fn Java_org_shardline_InMemoryLease_nWithSafety(
    _, h: jlong, margin: jlong, drift_ppm: jlong,
) {
    let margin = unsigned(margin, "marginMs")?;
    let drift = unsigned(drift_ppm, "driftPpm")?;
    unsafe {
        handle::with::<InMemoryLease, _>(h, |l| {
            *l = l.clone().with_safety(margin, drift);
            Ok(())
        })
    }
}}

native! { fn Java_org_shardline_InMemoryLease_nAcquire(env, h: jlong, now: jlong) -> jlongArray {
    let now = unsigned(now, "nowMs")?;
    match unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.acquire(now)?)) }? {
        None => Ok(std::ptr::null_mut()),
        Some(g) => long_array(
            env,
            &[opt_long(Some(g.token.0)), opt_long(Some(g.valid_until_ms))],
        ),
    }
}}

native! { fn Java_org_shardline_InMemoryLease_nRenew(
    _, h: jlong, token: jlong, now: jlong,
) -> jlong {
    let t = FencingToken(unsigned(token, "token")?);
    let now = unsigned(now, "nowMs")?;
    Ok(opt_long(unsafe {
        handle::with::<InMemoryLease, _>(h, |l| Ok(l.renew(t, now)?))
    }?))
}}

native! { fn Java_org_shardline_InMemoryLease_nRelease(_, h: jlong, token: jlong) {
    let t = FencingToken(unsigned(token, "token")?);
    unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.release(t)?)) }
}}

native! {
/// {owner, token} or null.
fn Java_org_shardline_InMemoryLease_nHolder(env, h: jlong, now: jlong) -> jobjectArray {
    let now = unsigned(now, "nowMs")?;
    match unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.holder(now))) }? {
        None => Ok(std::ptr::null_mut()),
        Some((owner, t)) => string_array(env, [owner, t.0.to_string()].iter()),
    }
}}

native! { fn Java_org_shardline_InMemoryLease_nExpireNow(_, h: jlong) {
    unsafe {
        handle::with::<InMemoryLease, _>(h, |l| {
            l.expire_now();
            Ok(())
        })
    }
}}

free_native!(Java_org_shardline_InMemoryLease_nFree, InMemoryLease);

native! { fn Java_org_shardline_InMemoryStore_nNew(env, state: JString<'l>) -> jlong {
    let store = if state.is_null() {
        InMemoryStore::new()
    } else {
        InMemoryStore::from_state(json::<StoredState>(env, &state, "stored state")?)
    };
    Ok(Handle::into_raw("store", store))
}}

fn outcome(o: WriteOutcome) -> jlong {
    match o {
        WriteOutcome::Written => -1,
        WriteOutcome::Fenced { highest } => opt_long(Some(highest.0)),
    }
}

native! { fn Java_org_shardline_InMemoryStore_nAppend(
    env, h: jlong, token: jlong, record: JString<'l>,
) -> jlong {
    let t = FencingToken(unsigned(token, "token")?);
    let record: Record = json(env, &record, "record")?;
    Ok(outcome(unsafe {
        handle::with::<InMemoryStore, _>(h, |s| Ok(s.append(t, &record)?))
    }?))
}}

native! { fn Java_org_shardline_InMemoryStore_nSaveSnapshot(
    env, h: jlong, token: jlong, snapshot: JString<'l>,
) -> jlong {
    let t = FencingToken(unsigned(token, "token")?);
    let snapshot: Snapshot = json(env, &snapshot, "snapshot")?;
    Ok(outcome(unsafe {
        handle::with::<InMemoryStore, _>(h, |s| Ok(s.save_snapshot(t, &snapshot)?))
    }?))
}}

native! {
/// The stored state as JSON, or null when a larger token has fenced `token` out.
fn Java_org_shardline_InMemoryStore_nLoad(env, h: jlong, token: jlong) -> jstring {
    let t = FencingToken(unsigned(token, "token")?);
    match unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.load(t)?)) }? {
        None => Ok(std::ptr::null_mut()),
        Some(state) => new_string(env, &to_json(&state)),
    }
}}

native! { fn Java_org_shardline_InMemoryStore_nContents(env, h: jlong) -> jstring {
    let state = unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.contents())) }?;
    new_string(env, &to_json(&state))
}}

native! { fn Java_org_shardline_InMemoryStore_nHighestToken(_, h: jlong) -> jlong {
    Ok(opt_long(Some(
        unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.highest_token())) }?.0,
    )))
}}

free_native!(Java_org_shardline_InMemoryStore_nFree, InMemoryStore);
