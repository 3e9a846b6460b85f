//! etcd backends (cargo feature `etcd`): the coordinator lease, the coordinator state store
//! and the worker-id registry. Their calls block on the network, so they run with the GIL
//! released; other Python threads keep going meanwhile.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
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

use crate::errors::{invalid_state, OrRaise};

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
    #[pyo3(signature = (endpoints, namespace, timeout_ms = 5_000))]
    fn new(
        py: Python<'_>,
        endpoints: Vec<String>,
        namespace: &str,
        timeout_ms: u64,
    ) -> PyResult<Self> {
        let timeout = Duration::from_millis(timeout_ms);
        let etcd = py
            .detach(|| Etcd::connect_with_timeout(&endpoints, namespace, timeout))
            .or_raise()?;
        Ok(PyEtcd { etcd })
    }

    #[getter]
    fn namespace(&self) -> &str {
        self.etcd.namespace()
    }

    /// The coordinator lease `name`, contended for as `owner`. Give it to one driver.
    #[pyo3(signature = (name, owner, ttl_ms = 30_000))]
    fn lease(&self, name: &str, owner: &str, ttl_ms: u64) -> PyEtcdLease {
        PyEtcdLease {
            lease: Mutex::new(Some(self.etcd.lease(name, owner, ttl_ms))),
        }
    }

    /// Coordinator state `name`; with `bound_to_lease`, writes also require that lease to
    /// still carry the writer's token. Give it to one driver.
    #[pyo3(signature = (name, bound_to_lease = None))]
    fn store(&self, name: &str, bound_to_lease: Option<&str>) -> PyEtcdStore {
        let store = match bound_to_lease {
            Some(l) => self.etcd.store_bound_to_lease(name, l),
            None => self.etcd.store(name),
        };
        PyEtcdStore {
            store: Mutex::new(Some(store)),
        }
    }
}

fn take<T>(slot: &Mutex<Option<T>>, what: &str) -> PyResult<T> {
    slot.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .ok_or_else(|| invalid_state(format!("this {what} already serves a driver")))
}

#[pyclass(name = "EtcdLease", module = "shardline._native", frozen)]
pub struct PyEtcdLease {
    lease: Mutex<Option<EtcdLease>>,
}

#[pymethods]
impl PyEtcdLease {
    /// `(owner, token)` as etcd has them now.
    fn holder(&self, py: Python<'_>) -> PyResult<Option<(String, u64)>> {
        let guard = self.lease.lock().unwrap_or_else(PoisonError::into_inner);
        let lease = guard
            .as_ref()
            .ok_or_else(|| invalid_state("this EtcdLease serves a driver; ask etcd directly"))?;
        let h = py.detach(|| lease.holder()).or_raise()?;
        Ok(h.map(|(o, t)| (o, t.0)))
    }
}

#[pyclass(name = "EtcdStore", module = "shardline._native", frozen)]
pub struct PyEtcdStore {
    store: Mutex<Option<EtcdStore>>,
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
        Ok(l) => Ok(Some(Box::new(DetachedLease(take(
            &l.get().lease,
            "EtcdLease",
        )?)))),
        Err(_) => Ok(None),
    }
}

pub fn store(obj: &Bound<'_, PyAny>) -> PyResult<Option<Box<dyn Store>>> {
    match obj.cast::<PyEtcdStore>() {
        Ok(s) => Ok(Some(Box::new(DetachedStore(take(
            &s.get().store,
            "EtcdStore",
        )?)))),
        Err(_) => Ok(None),
    }
}

/// A worker-id registry session on etcd, or None if `obj` is not an Etcd.
pub fn registry(obj: &Bound<'_, PyAny>, ttl_ms: u64) -> Option<Box<dyn Registry>> {
    obj.cast::<PyEtcd>()
        .ok()
        .map(|e| Box::new(DetachedRegistry(e.get().etcd.registry(ttl_ms))) as Box<dyn Registry>)
}
