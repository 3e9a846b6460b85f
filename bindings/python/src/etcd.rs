//! etcd backends (cargo feature `etcd`): the coordinator lease, the coordinator state store
//! and the worker-id registry. Their calls block on the network, so they run with the GIL
//! released; other Python threads keep going meanwhile.

use pyo3::prelude::*;
use shardline_bind::etcd::{self as bind, Serving};
use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::StoredState;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::Lease;
use shardline_core::host::{Store, WriteOutcome};
use shardline_core::protocol::FencingToken;
use shardline_core::workerid::{
    Claim, Created, Fence, Listing, Registry, RegistryResult, Slot, Version,
};
use shardline_etcd::{Etcd, EtcdLease, EtcdStore};

use crate::errors::failure_err;
use crate::ops::{self, Answer, Rest};
use shardline_bind::ops::etcd as ops_etcd;

/// Runs a blocking backend call without the GIL.
fn detached<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    Python::attach(|py| py.detach(f))
}

/// A connection to an etcd cluster, under one key namespace.
#[pyclass(name = "Etcd", module = "shardline._native", frozen)]
pub struct PyEtcd {
    pub etcd: Etcd,
}

#[pymethods]
impl PyEtcd {
    #[new]
    #[pyo3(signature = (endpoints, namespace, timeout_ms = bind::DEFAULT_TIMEOUT_MS))]
    fn new(
        py: Python<'_>,
        endpoints: Vec<String>,
        namespace: &str,
        timeout_ms: u64,
    ) -> PyResult<Self> {
        let etcd = py
            .detach(|| bind::connect(&endpoints, namespace, Some(timeout_ms)))
            .map_err(failure_err)?;
        Ok(PyEtcd { etcd })
    }

    #[getter]
    fn namespace(&self) -> &str {
        bind::namespace(&self.etcd)
    }

    /// The coordinator lease `name`, contended for as `owner`. Give it to one driver.
    #[pyo3(signature = (name, owner, ttl_ms = bind::DEFAULT_LEASE_TTL_MS))]
    fn lease(&self, name: &str, owner: &str, ttl_ms: u64) -> PyResult<PyEtcdLease> {
        let lease = bind::lease(&self.etcd, name, owner, Some(ttl_ms)).map_err(failure_err)?;
        Ok(PyEtcdLease { lease })
    }

    /// Coordinator state `name`; with `bound_to_lease`, writes also require that lease to
    /// still carry the writer's token. Give it to one driver.
    #[pyo3(signature = (name, bound_to_lease = None))]
    fn store(&self, name: &str, bound_to_lease: Option<&str>) -> PyEtcdStore {
        PyEtcdStore {
            store: bind::store(&self.etcd, name, bound_to_lease),
        }
    }
}

#[pyclass(name = "EtcdLease", module = "shardline._native", frozen)]
pub struct PyEtcdLease {
    lease: Serving<EtcdLease>,
}

#[pymethods]
impl PyEtcdLease {
    /// `(owner, token)` as etcd has them now.
    fn holder(&self, py: Python<'_>) -> PyResult<Option<(String, u64)>> {
        let h = py
            .detach(|| self.lease.with(|l| bind::holder(l)))
            .map_err(failure_err)?;
        Ok(h.map(|h| (h.owner, h.token)))
    }

    /// `shardline_bind::ops::etcd::lease`, without the GIL: how the asyncio driver calls it
    /// (on a worker thread) while no blocking driver has taken the lease.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "EtcdLease", op, args, |a| {
            py.detach(|| self.lease.with(|l| ops_etcd::lease(l, a)))
        })
    }
}

#[pyclass(name = "EtcdStore", module = "shardline._native", frozen)]
pub struct PyEtcdStore {
    store: Serving<EtcdStore>,
}

#[pymethods]
impl PyEtcdStore {
    /// `shardline_bind::ops::etcd::store`, without the GIL (as [`PyEtcdLease::_op`]).
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "EtcdStore", op, args, |a| {
            py.detach(|| self.store.with(|s| ops_etcd::store(s, a)))
        })
    }
}

/// A backend whose every call runs without the GIL.
struct Detached<B>(B);

/// `impl $trait for Detached<$backend>`: each method is the backend's, run by [`detached`].
macro_rules! detached {
    ($trait:ident for $backend:ty { $(fn $m:ident($($a:ident: $t:ty),*) -> $r:ty;)* }) => {
        impl $trait for Detached<$backend> {
            $(fn $m(&mut self, $($a: $t),*) -> $r {
                detached(|| self.0.$m($($a),*))
            })*
        }
    };
}

detached!(Lease for EtcdLease {
    fn acquire(now_ms: u64) -> shardline_core::Result<Option<LeaseGrant>>;
    fn renew(token: FencingToken, now_ms: u64) -> shardline_core::Result<Option<u64>>;
    fn release(token: FencingToken) -> shardline_core::Result<()>;
});

detached!(Store for EtcdStore {
    fn append(token: FencingToken, record: &Record) -> shardline_core::Result<WriteOutcome>;
    fn save_snapshot(token: FencingToken, snapshot: &Snapshot)
        -> shardline_core::Result<WriteOutcome>;
    fn load(token: FencingToken) -> shardline_core::Result<Option<StoredState>>;
});

detached!(Registry for Box<dyn Registry + Send> {
    fn list() -> RegistryResult<Listing>;
    fn read(id: u32) -> RegistryResult<Slot>;
    fn create_exclusive(id: u32, claim: &Claim, fence: &Fence, expect: Version)
        -> RegistryResult<Created>;
    fn compare_and_set(id: u32, claim: &Claim, fence: &Fence, expect: Version)
        -> RegistryResult<Option<Version>>;
    fn delete(id: u32, claim: &Claim) -> RegistryResult<bool>;
    fn keep_alive() -> RegistryResult<Option<u64>>;
});

/// An EtcdLease for a driver, or None if `obj` is not one.
pub fn lease(obj: &Bound<'_, PyAny>) -> PyResult<Option<Box<dyn Lease>>> {
    match obj.cast::<PyEtcdLease>() {
        Ok(l) => Ok(Some(Box::new(Detached(
            l.get().lease.take().map_err(failure_err)?,
        )))),
        Err(_) => Ok(None),
    }
}

pub fn store(obj: &Bound<'_, PyAny>) -> PyResult<Option<Box<dyn Store>>> {
    match obj.cast::<PyEtcdStore>() {
        Ok(s) => Ok(Some(Box::new(Detached(
            s.get().store.take().map_err(failure_err)?,
        )))),
        Err(_) => Ok(None),
    }
}

/// A worker-id registry session on etcd, or None if `obj` is not an Etcd.
pub fn registry(obj: &Bound<'_, PyAny>, ttl_ms: u64) -> Option<Box<dyn Registry>> {
    obj.cast::<PyEtcd>()
        .ok()
        .map(|e| Box::new(Detached(bind::registry(&e.get().etcd, ttl_ms))) as Box<dyn Registry>)
}
