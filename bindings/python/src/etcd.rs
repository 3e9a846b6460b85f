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
}

#[pyclass(name = "EtcdStore", module = "shardline._native", frozen)]
pub struct PyEtcdStore {
    store: Serving<EtcdStore>,
}

struct DetachedLease(EtcdLease);

impl Lease for DetachedLease {
    fn acquire(&mut self, now_ms: u64) -> shardline_core::Result<Option<LeaseGrant>> {
        detached(|| self.0.acquire(now_ms))
    }
    fn renew(&mut self, token: FencingToken, now_ms: u64) -> shardline_core::Result<Option<u64>> {
        detached(|| self.0.renew(token, now_ms))
    }
    fn release(&mut self, token: FencingToken) -> shardline_core::Result<()> {
        detached(|| self.0.release(token))
    }
}

struct DetachedStore(EtcdStore);

impl Store for DetachedStore {
    fn append(
        &mut self,
        token: FencingToken,
        record: &Record,
    ) -> shardline_core::Result<WriteOutcome> {
        detached(|| self.0.append(token, record))
    }
    fn save_snapshot(
        &mut self,
        token: FencingToken,
        snapshot: &Snapshot,
    ) -> shardline_core::Result<WriteOutcome> {
        detached(|| self.0.save_snapshot(token, snapshot))
    }
    fn load(&mut self, token: FencingToken) -> shardline_core::Result<Option<StoredState>> {
        detached(|| self.0.load(token))
    }
}

struct DetachedRegistry<R>(R);

impl<R: Registry> Registry for DetachedRegistry<R> {
    fn list(&mut self) -> RegistryResult<Listing> {
        detached(|| self.0.list())
    }
    fn read(&mut self, id: u32) -> RegistryResult<Slot> {
        detached(|| self.0.read(id))
    }
    fn create_exclusive(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Created> {
        detached(|| self.0.create_exclusive(id, claim, fence, expect))
    }
    fn compare_and_set(
        &mut self,
        id: u32,
        claim: &Claim,
        fence: &Fence,
        expect: Version,
    ) -> RegistryResult<Option<Version>> {
        detached(|| self.0.compare_and_set(id, claim, fence, expect))
    }
    fn delete(&mut self, id: u32, claim: &Claim) -> RegistryResult<bool> {
        detached(|| self.0.delete(id, claim))
    }
    fn keep_alive(&mut self) -> RegistryResult<Option<u64>> {
        detached(|| self.0.keep_alive())
    }
}

/// An EtcdLease for a driver, or None if `obj` is not one.
pub fn lease(obj: &Bound<'_, PyAny>) -> PyResult<Option<Box<dyn Lease>>> {
    match obj.cast::<PyEtcdLease>() {
        Ok(l) => Ok(Some(Box::new(DetachedLease(
            l.get().lease.take().map_err(failure_err)?,
        )))),
        Err(_) => Ok(None),
    }
}

pub fn store(obj: &Bound<'_, PyAny>) -> PyResult<Option<Box<dyn Store>>> {
    match obj.cast::<PyEtcdStore>() {
        Ok(s) => Ok(Some(Box::new(DetachedStore(
            s.get().store.take().map_err(failure_err)?,
        )))),
        Err(_) => Ok(None),
    }
}

/// A worker-id registry session on etcd, or None if `obj` is not an Etcd.
pub fn registry(obj: &Bound<'_, PyAny>, ttl_ms: u64) -> Option<Box<dyn Registry>> {
    obj.cast::<PyEtcd>().ok().map(|e| {
        Box::new(DetachedRegistry(bind::registry(&e.get().etcd, ttl_ms))) as Box<dyn Registry>
    })
}
