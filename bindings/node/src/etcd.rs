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
use shardline_bind::ops::constructors::{self, etcd_lease, etcd_store};
use shardline_bind::ops::{Args, Reply};
use shardline_core::workerid::Registry;

use crate::backends::instance;
use crate::conv;
use crate::error::boundary;
use crate::js::{Js, V};
use crate::ops::{self, make};
use crate::state::unknown;

/// A connection to an etcd cluster, under one key namespace.
#[napi]
pub struct Etcd {
    pub(crate) inner: bind::Etcd,
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
        let args = [&endpoints, &namespace, &options];
        let inner = make(env, "Etcd", "new", &args, constructors::etcd)?;
        Ok(Etcd { inner })
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
        let args = [&name, &owner, &options];
        let lease = make(env, "Etcd", "lease", &args, |a| etcd_lease(&self.inner, a))?;
        Ok(EtcdLease {
            inner: Arc::new(lease),
        })
    }

    /// Coordinator state `name`; with `boundToLease`, writes also require that lease to still
    /// carry the writer's token. Give it to one driver.
    #[napi(ts_args_type = "name: string, options?: { boundToLease?: string }")]
    pub fn store(&self, env: &Env, name: Unknown, options: Unknown) -> Result<EtcdStore> {
        let args = [&name, &options];
        let store = make(env, "Etcd", "store", &args, |a| etcd_store(&self.inner, a))?;
        Ok(EtcdStore {
            inner: Arc::new(store),
        })
    }
}

/// The coordinator lease on etcd. Its methods (`holder()`, and a driver's `acquire(nowMs)`,
/// `renew(token, nowMs)`, `release(token)`) return Promises.
#[napi]
pub struct EtcdLease {
    pub(crate) inner: Arc<Serving<bind::EtcdLease>>,
}

/// The coordinator state store on etcd. Its methods (`append(token, record)`,
/// `saveSnapshot(token, snapshot)`, `load(token)`) return Promises.
#[napi]
pub struct EtcdStore {
    pub(crate) inner: Arc<Serving<bind::EtcdStore>>,
}

/// `_op` on an EtcdLease or EtcdStore: `kind.name(...args)` on the backend in `slot`, by
/// `op`, run on the libuv thread pool; answers a Promise.
pub fn spawn<'a, T: Send + 'static>(
    env: &'a Env,
    kind: &'static str,
    slot: &Arc<Serving<T>>,
    name: V,
    args: V,
    op: fn(&mut T, Args<'_>) -> Reply,
) -> Result<Unknown<'a>> {
    boundary(env, None, |js| {
        let name = conv::string(js, name, &format!("{kind}.op: name"))?;
        let values = ops::arguments(js, args, &format!("{kind}.{name}"))?;
        let slot = Arc::clone(slot);
        let run = move || slot.with(|backend| op(backend, Args::new(kind, &name, &values)));
        let call = Call {
            run: Some(Box::new(run)),
        };
        Ok(unknown(js, env.spawn(call)?.promise_object().raw()))
    })
}

/// One named operation on a lease or store, run on the libuv thread pool.
struct Call {
    run: Option<Box<dyn FnOnce() -> Reply + Send>>,
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

/// A worker-id registry session on etcd, or None if `v` is not an Etcd.
pub fn registry(js: Js, v: V, ttl_ms: u64) -> Option<Box<dyn Registry + Send>> {
    instance::<Etcd>(js, v).map(|e| bind::registry(&e.inner, ttl_ms))
}
