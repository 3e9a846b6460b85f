//! Host services for the callback drivers: the in-memory backends (usable directly too), and
//! the choice between them and JavaScript objects (see `host.rs`).

use std::any::TypeId;
use std::cell::Cell;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::driver_host as adapt;
use shardline_bind::etcd;
use shardline_bind::host_defaults as defaults;
use shardline_bind::ops::constructors::{in_memory_lease, in_memory_store, manual_clock};
use shardline_core::host::{Clock, ManualClock as CoreClock};
use shardline_core::host::{InMemoryLease as CoreLease, Lease};
use shardline_core::host::{InMemoryStore as CoreStore, Store};

use crate::conv;
use crate::error::{boundary, R};
use crate::etcd::{EtcdLease, EtcdStore};
use crate::handle::Holder;
use crate::host;
use crate::js::{Js, V};
use crate::ops::make;

// ---- choosing native or JavaScript services -------------------------------------------------

thread_local! {
    /// The object `instance` found last: a weak reference to it, its class and its native
    /// value. A step loop calls one object over and over, and the two checks below are
    /// private-property lookups, a fifth of a coordinator step.
    static LAST: Cell<Option<(napi::sys::napi_env, napi::sys::napi_ref, TypeId, usize)>> =
        const { Cell::new(None) };
}

/// The `T` behind `v`, if it is one: classes carry a type tag, checked first because a failed
/// unwrap builds an error message.
pub fn instance<'a, T: 'static + TypeTag>(js: Js, v: V) -> Option<&'a T> {
    use napi::sys;
    if let Some((env, r, class, p)) = LAST.get() {
        let mut last = std::ptr::null_mut();
        let mut same = false;
        // SAFETY: plain Node-API calls; a weak reference yields NULL once its object is
        // collected, and while it yields the object, the object's native value lives.
        let live = env == js.env
            && class == TypeId::of::<T>()
            && unsafe { sys::napi_get_reference_value(js.env, r, &mut last) } == 0
            && !last.is_null()
            && unsafe { sys::napi_strict_equals(js.env, last, v, &mut same) } == 0;
        if live && same {
            return Some(unsafe { &*(p as *const T) });
        }
    }
    let found = checked::<T>(js, v)?;
    let mut r = std::ptr::null_mut();
    // SAFETY: a weak (count 0) reference to an object of this env.
    if unsafe { sys::napi_create_reference(js.env, v, 0, &mut r) } == 0 {
        let old = LAST.replace(Some((
            js.env,
            r,
            TypeId::of::<T>(),
            found as *const T as usize,
        )));
        // A reference made in another environment stays: that one may be gone.
        if let Some((env, old, ..)) = old.filter(|(env, ..)| *env == js.env) {
            // SAFETY: made by this function on `env`, the environment of this call.
            unsafe { sys::napi_delete_reference(env, old) };
        }
    }
    Some(found)
}

/// The `T` behind `v`, if it is one (no cache: for arguments that change every call).
pub fn checked<'a, T: 'static + TypeTag>(js: Js, v: V) -> Option<&'a T> {
    let mut is = false;
    // SAFETY: a plain Node-API call on this env's value.
    let s = unsafe { napi::sys::napi_check_object_type_tag(js.env, v, &T::type_tag(), &mut is) };
    if s != napi::sys::Status::napi_ok || !is {
        return None;
    }
    let mut p = std::ptr::null_mut();
    // SAFETY: the tag says napi-rs wrapped a T in `v`; the object keeps it alive during this
    // call, the only time the reference is used.
    let s = unsafe { napi::sys::napi_unwrap(js.env, v, &mut p) };
    (s == napi::sys::Status::napi_ok && !p.is_null()).then(|| unsafe { &*(p as *const T) })
}

/// The clock option: a ManualClock (shared), a function or `{nowMs()}`, or the monotonic
/// clock when left out. A JavaScript clock joins the call's callback `holder`.
pub fn clock(js: Js, v: Option<V>, holder: &mut Holder) -> R<Box<dyn Clock>> {
    let Some(v) = v else {
        return Ok(defaults::clock());
    };
    if let Some(c) = instance::<ManualClock>(js, v) {
        return Ok(Box::new(c.inner.clone()));
    }
    let host = host::join(js, v, "clock", &adapt::CLOCK, holder)?;
    Ok(adapt::clock(host))
}

pub fn lease(js: Js, v: Option<V>, owner: &str, holder: &mut Holder) -> R<Box<dyn Lease>> {
    let Some(v) = v else {
        return Ok(defaults::lease(owner));
    };
    if let Some(l) = instance::<InMemoryLease>(js, v) {
        return Ok(Box::new(l.inner.clone()));
    }
    if let Some(l) = instance::<EtcdLease>(js, v) {
        return Ok(etcd::as_lease(l.inner.take()?));
    }
    let host = host::join(js, v, "lease", &adapt::LEASE, holder)?;
    Ok(adapt::lease(host))
}

pub fn store(js: Js, v: Option<V>, holder: &mut Holder) -> R<Box<dyn Store>> {
    let Some(v) = v else {
        return Ok(defaults::store());
    };
    if let Some(s) = instance::<InMemoryStore>(js, v) {
        return Ok(Box::new(s.inner.clone()));
    }
    if let Some(s) = instance::<EtcdStore>(js, v) {
        return Ok(etcd::as_store(s.inner.take()?));
    }
    let host = host::join(js, v, "store", &adapt::STORE, holder)?;
    Ok(adapt::store(host))
}

// ---- native backends ------------------------------------------------------------------------
// Their operations are `shardline_bind::ops::backends`; lib/ids.cjs names them.

/// A clock the host sets; drivers given the same ManualClock share its time.
#[napi]
pub struct ManualClock {
    pub(crate) inner: CoreClock,
}

#[napi]
impl ManualClock {
    #[napi(constructor, ts_args_type = "nowMs?: number")]
    pub fn new(env: &Env, now_ms: Unknown) -> Result<Self> {
        let inner = make(env, "ManualClock", "new", &[&now_ms], manual_clock)?;
        Ok(ManualClock { inner })
    }
}

/// The embedded coordinator lease: handles made with `contender` contend for the same lease.
/// Fencing tokens grow across holders; deadlines are local (`validUntilMs`).
#[napi]
pub struct InMemoryLease {
    pub(crate) inner: CoreLease,
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
        let args = [&owner, &ttl_ms, &options];
        let inner = make(env, "InMemoryLease", "new", &args, in_memory_lease)?;
        Ok(InMemoryLease { inner })
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
}

/// The embedded coordinator state store. Drivers given the same store share it, so a
/// failover can be played in one process; writes with a token below the highest seen are
/// refused.
#[napi]
pub struct InMemoryStore {
    pub(crate) inner: CoreStore,
}

#[napi]
impl InMemoryStore {
    /// An empty store, or one holding `state` (e.g. another store's `contents()`).
    #[napi(constructor, ts_args_type = "state?: StoredState")]
    pub fn new(env: &Env, state: Unknown) -> Result<Self> {
        let inner = make(env, "InMemoryStore", "new", &[&state], in_memory_store)?;
        Ok(InMemoryStore { inner })
    }
}
