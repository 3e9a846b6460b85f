//! The embedded in-memory backends: `org.shardline.InMemoryLease` and
//! `org.shardline.InMemoryStore`. Handles made from one another (`contender`, clones handed
//! to a driver) share one backend, so fail-over can be played inside one JVM.

use jni::objects::{JClass, JString};
use jni::sys::{jlong, jlongArray, jobjectArray, jstring};
use jni::JNIEnv;

use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::{InMemoryLease, Lease};
use shardline_core::host::{InMemoryStore, Store, WriteOutcome};
use shardline_core::protocol::FencingToken;

use crate::boundary::{entry, Result};
use crate::convert::{
    from_json as json, long_array, new_string, opt_long, string, string_array, to_json, ttl_ms,
    unsigned,
};
use crate::handle::{self, free_native, Handle};

/// A clone sharing the backend of the lease behind `h` (for a driver).
pub fn lease(h: jlong) -> Result<InMemoryLease> {
    unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.clone())) }
}

pub fn store(h: jlong) -> Result<InMemoryStore> {
    unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.clone())) }
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    owner: JString<'l>,
    ttl: jlong,
) -> jlong {
    entry(&mut env, 0, |env| {
        let owner = string(env, &owner, "owner")?;
        let ttl = ttl_ms(ttl)?;
        Ok(Handle::into_raw("lease", InMemoryLease::new(&owner, ttl)))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nContender<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    owner: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let owner = string(env, &owner, "owner")?;
        let other = unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.contender(&owner))) }?;
        Ok(Handle::into_raw("lease", other))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nWithSafety<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    margin: jlong,
    drift_ppm: jlong,
) {
    entry(&mut env, (), |_| {
        let margin = unsigned(margin, "marginMs")?;
        let drift = unsigned(drift_ppm, "driftPpm")?;
        unsafe {
            handle::with::<InMemoryLease, _>(h, |l| {
                *l = l.clone().with_safety(margin, drift);
                Ok(())
            })
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nAcquire<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jlongArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let now = unsigned(now, "nowMs")?;
        match unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.acquire(now)?)) }? {
            None => Ok(std::ptr::null_mut()),
            Some(g) => long_array(
                env,
                &[opt_long(Some(g.token.0)), opt_long(Some(g.valid_until_ms))],
            ),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nRenew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    token: jlong,
    now: jlong,
) -> jlong {
    entry(&mut env, -1, |_| {
        let t = FencingToken(unsigned(token, "token")?);
        let now = unsigned(now, "nowMs")?;
        Ok(opt_long(unsafe {
            handle::with::<InMemoryLease, _>(h, |l| Ok(l.renew(t, now)?))
        }?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nRelease<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    token: jlong,
) {
    entry(&mut env, (), |_| {
        let t = FencingToken(unsigned(token, "token")?);
        unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.release(t)?)) }
    })
}

/// {owner, token} or null.
#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nHolder<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let now = unsigned(now, "nowMs")?;
        match unsafe { handle::with::<InMemoryLease, _>(h, |l| Ok(l.holder(now))) }? {
            None => Ok(std::ptr::null_mut()),
            Some((owner, t)) => string_array(env, [owner, t.0.to_string()].iter()),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryLease_nExpireNow<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| unsafe {
        handle::with::<InMemoryLease, _>(h, |l| {
            l.expire_now();
            Ok(())
        })
    })
}

free_native!(Java_org_shardline_InMemoryLease_nFree, InMemoryLease);

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryStore_nNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    state: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let store = if state.is_null() {
            InMemoryStore::new()
        } else {
            InMemoryStore::from_state(json::<StoredState>(env, &state, "stored state")?)
        };
        Ok(Handle::into_raw("store", store))
    })
}

fn outcome(o: WriteOutcome) -> jlong {
    match o {
        WriteOutcome::Written => -1,
        WriteOutcome::Fenced { highest } => opt_long(Some(highest.0)),
    }
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryStore_nAppend<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    token: jlong,
    record: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let t = FencingToken(unsigned(token, "token")?);
        let record: Record = json(env, &record, "record")?;
        Ok(outcome(unsafe {
            handle::with::<InMemoryStore, _>(h, |s| Ok(s.append(t, &record)?))
        }?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryStore_nSaveSnapshot<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    token: jlong,
    snapshot: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let t = FencingToken(unsigned(token, "token")?);
        let snapshot: Snapshot = json(env, &snapshot, "snapshot")?;
        Ok(outcome(unsafe {
            handle::with::<InMemoryStore, _>(h, |s| Ok(s.save_snapshot(t, &snapshot)?))
        }?))
    })
}

/// The stored state as JSON, or null when a larger token has fenced `token` out.
#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryStore_nLoad<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    token: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let t = FencingToken(unsigned(token, "token")?);
        match unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.load(t)?)) }? {
            None => Ok(std::ptr::null_mut()),
            Some(state) => new_string(env, &to_json(&state)),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryStore_nContents<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let state = unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.contents())) }?;
        new_string(env, &to_json(&state))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_InMemoryStore_nHighestToken<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, 0, |_| {
        Ok(opt_long(Some(
            unsafe { handle::with::<InMemoryStore, _>(h, |s| Ok(s.highest_token())) }?.0,
        )))
    })
}

free_native!(Java_org_shardline_InMemoryStore_nFree, InMemoryStore);
