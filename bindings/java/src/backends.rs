//! The embedded in-memory backends: `org.shardline.InMemoryLease` and
//! `org.shardline.InMemoryStore`. Handles made from one another (`contender`, clones handed
//! to a driver) share one backend, so fail-over can be played inside one JVM.

use jni::objects::JString;
use jni::sys::jlong;

use shardline_bind::ops::backends as ops_backends;
use shardline_core::coordinator::StoredState;
use shardline_core::host::{InMemoryLease, InMemoryStore};

use crate::boundary::Result;
use crate::convert::{from_json as json, string, ttl_ms, unsigned};
use crate::handle::{self, free_native, Handle};
use crate::native::native;
use crate::ops::ops_native;

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

ops_native!(
    Java_org_shardline_InMemoryLease_nOp,
    "InMemoryLease",
    InMemoryLease,
    ops_backends::lease
);

free_native!(Java_org_shardline_InMemoryLease_nFree, InMemoryLease);

native! { fn Java_org_shardline_InMemoryStore_nNew(env, state: JString<'l>) -> jlong {
    let store = if state.is_null() {
        InMemoryStore::new()
    } else {
        InMemoryStore::from_state(json::<StoredState>(env, &state, "stored state")?)
    };
    Ok(Handle::into_raw("store", store))
}}

ops_native!(
    Java_org_shardline_InMemoryStore_nOp,
    "InMemoryStore",
    InMemoryStore,
    ops_backends::store
);

free_native!(Java_org_shardline_InMemoryStore_nFree, InMemoryStore);
