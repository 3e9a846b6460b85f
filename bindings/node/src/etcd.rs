//! etcd (`shardline_bind::etcd`): `Etcd`, and the `EtcdLease` and `EtcdStore` it hands out.
//!
//! Every etcd request of a lease or store object runs on the libuv thread pool and answers a
//! Promise, so the event-loop `AsyncCoordinatorDriver` can take them as host objects without
//! blocking the loop. A synchronous driver (or a worker-id holder, given an `Etcd`) takes the
//! backend itself and blocks the calling thread as its other host calls do.
//!
//! The classes exist in every build; without the cargo feature `etcd`, `new Etcd(...)` throws
//! INVALID_STATE saying so, and the generated loader and typings stay the same.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::Task;
use napi_derive::napi;

use shardline_bind::etcd::{self as bind, Serving};
use shardline_bind::etcd::{ConnectOptions, LeaseOptions, StoreOptions};
use shardline_bind::ops::{etcd as ops_etcd, Args, Reply, Tree};
use shardline_core::host::{Lease, Store};
use shardline_core::workerid::Registry;

use crate::backends::instance;
use crate::conv;
use crate::error::{boundary, R};
use crate::js::{Js, V};
use crate::ops;
use crate::state::unknown;

/// Optional options object `v` as `T`.
fn options<T: Default + serde::de::DeserializeOwned>(js: Js, v: V) -> R<T> {
    if js.is_nullish(v)? {
        return Ok(T::default());
    }
    conv::de(js, v, "options")
}

/// A connection to an etcd cluster, under one key namespace.
#[napi]
pub struct Etcd {
    inner: bind::Etcd,
}

#[napi]
impl Etcd {
    /// Connects to `endpoints` (e.g. `http://127.0.0.1:2379`); keys go under `namespace/`.
    /// Blocks until connected or `timeoutMs` (per request, default 5000) has passed.
    #[napi(
        constructor,
        ts_args_type = "endpoints: string[], namespace: string, options?: { timeoutMs?: number }"
    )]
    pub fn new(
        env: &Env,
        endpoints: Unknown,
        namespace: Unknown,
        options: Unknown,
    ) -> Result<Self> {
        boundary(env, None, |js| {
            let endpoints = conv::strings(js, endpoints.raw(), "endpoints")?;
            let namespace = conv::string(js, namespace.raw(), "namespace")?;
            let o: ConnectOptions = self::options(js, options.raw())?;
            Ok(Etcd {
                inner: bind::connect(&endpoints, &namespace, o.timeout_ms)?,
            })
        })
    }

    /// The coordinator lease `name`, contended for as `owner` (`ttlMs` default 30000). Give it
    /// to one driver.
    #[napi(ts_args_type = "name: string, owner: string, options?: { ttlMs?: number }")]
    pub fn lease(
        &self,
        env: &Env,
        name: Unknown,
        owner: Unknown,
        options: Unknown,
    ) -> Result<EtcdLease> {
        boundary(env, None, |js| {
            let name = conv::string(js, name.raw(), "name")?;
            let owner = conv::string(js, owner.raw(), "owner")?;
            let o: LeaseOptions = self::options(js, options.raw())?;
            Ok(EtcdLease {
                inner: Arc::new(bind::lease(&self.inner, &name, &owner, o.ttl_ms)?),
            })
        })
    }

    /// Coordinator state `name`; with `boundToLease`, writes also require that lease to still
    /// carry the writer's token. Give it to one driver.
    #[napi(ts_args_type = "name: string, options?: { boundToLease?: string }")]
    pub fn store(&self, env: &Env, name: Unknown, options: Unknown) -> Result<EtcdStore> {
        boundary(env, None, |js| {
            let name = conv::string(js, name.raw(), "name")?;
            let o: StoreOptions = self::options(js, options.raw())?;
            Ok(EtcdStore {
                inner: Arc::new(bind::store(&self.inner, &name, o.bound_to_lease.as_deref())),
            })
        })
    }

    /// The named operations (`shardline_bind::ops::etcd::connection`); lib/etcd.cjs names
    /// them.
    #[napi(
        ts_args_type = "name: string, args: unknown[]",
        ts_return_type = "unknown"
    )]
    pub fn op<'a>(&self, env: &'a Env, name: Unknown, args: Unknown) -> Result<Unknown<'a>> {
        boundary(env, None, |js| {
            ops::call(js, "Etcd", name.raw(), args.raw(), |a| {
                ops_etcd::connection(&self.inner, a)
            })
        })
    }
}

/// One named operation on a lease or store, run on the libuv thread pool.
pub struct Call {
    run: Option<Box<dyn FnOnce() -> Reply + Send>>,
}

impl Call {
    /// `kind.name(...args)` on the backend in `slot`, by `op`.
    fn new<T: Send + 'static>(
        js: Js,
        kind: &'static str,
        slot: &Arc<Serving<T>>,
        name: V,
        args: V,
        op: fn(&mut T, Args<'_>) -> Reply,
    ) -> R<AsyncTask<Call>> {
        let name = conv::string(js, name, &format!("{kind}.op: name"))?;
        let values: Vec<Tree> = ops::arguments(js, args, &format!("{kind}.{name}"))?;
        let slot = Arc::clone(slot);
        let run = move || slot.with(|backend| op(backend, Args::new(kind, &name, &values)));
        Ok(AsyncTask::new(Call {
            run: Some(Box::new(run)),
        }))
    }
}

impl Task for Call {
    type Output = Reply;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Reply> {
        let run = self
            .run
            .take()
            .ok_or_else(|| Error::from_reason("an etcd call ran twice"))?;
        Ok(run())
    }

    fn resolve(&mut self, env: Env, output: Reply) -> Result<Unknown<'static>> {
        let js = Js::new(env.raw());
        let settled = match output {
            Ok(answer) => conv::tree_js(js, &answer).map(Ok),
            Err(f) => js.error(f.status, &f.message).map(Err),
        };
        match settled {
            Ok(Ok(v)) => Ok(unknown(js, v)),
            // An error object with the failure's `code`, as a synchronous call throws it.
            Ok(Err(e)) => Err(Error::from(unknown(js, e))),
            Err(_) => Err(Error::from_reason("cannot convert an etcd answer")),
        }
    }
}

/// The coordinator lease on etcd. Its methods (`holder()`, and a driver's `acquire(nowMs)`,
/// `renew(token, nowMs)`, `release(token)`) return Promises.
#[napi]
pub struct EtcdLease {
    inner: Arc<Serving<bind::EtcdLease>>,
}

#[napi]
impl EtcdLease {
    /// The named operations (`shardline_bind::ops::etcd::lease`), each on the libuv thread
    /// pool; lib/etcd.cjs names them.
    #[napi(
        ts_args_type = "name: string, args: unknown[]",
        ts_return_type = "Promise<unknown>"
    )]
    pub fn op(&self, env: &Env, name: Unknown, args: Unknown) -> Result<AsyncTask<Call>> {
        boundary(env, None, |js| {
            Call::new(
                js,
                "EtcdLease",
                &self.inner,
                name.raw(),
                args.raw(),
                ops_etcd::lease,
            )
        })
    }
}

/// The coordinator state store on etcd. Its methods (`append(token, record)`,
/// `saveSnapshot(token, snapshot)`, `load(token)`) return Promises.
#[napi]
pub struct EtcdStore {
    inner: Arc<Serving<bind::EtcdStore>>,
}

#[napi]
impl EtcdStore {
    /// The named operations (`shardline_bind::ops::etcd::store`), each on the libuv thread
    /// pool; lib/etcd.cjs names them.
    #[napi(
        ts_args_type = "name: string, args: unknown[]",
        ts_return_type = "Promise<unknown>"
    )]
    pub fn op(&self, env: &Env, name: Unknown, args: Unknown) -> Result<AsyncTask<Call>> {
        boundary(env, None, |js| {
            Call::new(
                js,
                "EtcdStore",
                &self.inner,
                name.raw(),
                args.raw(),
                ops_etcd::store,
            )
        })
    }
}

/// The backend of an EtcdLease for a synchronous driver, or None if `v` is not one.
pub fn lease(js: Js, v: V) -> R<Option<Box<dyn Lease>>> {
    match instance::<EtcdLease>(js, v) {
        Some(l) => Ok(Some(bind::as_lease(l.inner.take()?))),
        None => Ok(None),
    }
}

pub fn store(js: Js, v: V) -> R<Option<Box<dyn Store>>> {
    match instance::<EtcdStore>(js, v) {
        Some(s) => Ok(Some(bind::as_store(s.inner.take()?))),
        None => Ok(None),
    }
}

/// A worker-id registry session on etcd, or None if `v` is not an Etcd.
pub fn registry(js: Js, v: V, ttl_ms: u64) -> Option<Box<dyn Registry + Send>> {
    instance::<Etcd>(js, v).map(|e| bind::registry(&e.inner, ttl_ms))
}
