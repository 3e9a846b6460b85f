//! The embedded in-memory backends: `org.shardline.InMemoryLease` and
//! `org.shardline.InMemoryStore`. Handles made from one another (`contender`, clones handed
//! to a driver) share one backend, so fail-over can be played inside one JVM.

use jni::objects::{JObjectArray, JString};
use jni::sys::{jlong, jobject};

use shardline_bind::ops::backends as ops_backends;
use shardline_core::coordinator::StoredState;
use shardline_core::host::{InMemoryLease, InMemoryStore};

use crate::boundary::Result;
use crate::convert::{from_json as json, string, ttl_ms, unsigned};
use crate::handle::{self, free_native, Handle};
use crate::native::native;
use crate::ops;

/// A clone sharing the backend of the lease or store behind `h` (for a driver).
pub fn shared<T: Clone>(h: jlong) -> Result<T> {
    unsafe { handle::with::<T, _>(h, |b| Ok(b.clone())) }
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

native! {
/// The named operations (`shardline_bind::ops::backends::lease`), named in
/// `InMemoryLease.java`.
fn Java_org_shardline_InMemoryLease_nOp(
    env, h: jlong, op: JString<'l>, args: JObjectArray<'l>,
) -> jobject {
    ops::call(env, "InMemoryLease", &op, &args, |a| unsafe {
        handle::with::<InMemoryLease, _>(h, |l| Ok(ops_backends::lease(l, a)?))
    })
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

native! {
/// The named operations (`shardline_bind::ops::backends::store`), named in
/// `InMemoryStore.java`.
fn Java_org_shardline_InMemoryStore_nOp(
    env, h: jlong, op: JString<'l>, args: JObjectArray<'l>,
) -> jobject {
    ops::call(env, "InMemoryStore", &op, &args, |a| unsafe {
        handle::with::<InMemoryStore, _>(h, |s| Ok(ops_backends::store(s, a)?))
    })
}}

free_native!(Java_org_shardline_InMemoryStore_nFree, InMemoryStore);
