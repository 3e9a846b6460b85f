//! The embedded backends: a manual clock, the in-memory lease and the in-memory store. Each
//! Python object is a handle; clones in the core share the same state, so a driver given one
//! of these sees exactly what the Python side sees.

use pyo3::prelude::*;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::host::{Clock, ManualClock};
use shardline_core::host::{InMemoryLease, Lease};
use shardline_core::host::{InMemoryStore, Store, WriteOutcome};
use shardline_core::protocol::FencingToken;

use crate::errors::OrRaise;
use crate::values;

/// A clock the host sets; it never goes backwards.
#[pyclass(name = "ManualClock", module = "shardline._native", frozen)]
pub struct PyManualClock {
    pub clock: ManualClock,
}

#[pymethods]
impl PyManualClock {
    #[new]
    #[pyo3(signature = (now_ms = 0))]
    fn new(now_ms: u64) -> Self {
        PyManualClock {
            clock: ManualClock::new(now_ms),
        }
    }

    /// Moves the clock to `now_ms` (ignored if that is in the past).
    fn set(&self, now_ms: u64) {
        self.clock.set(now_ms)
    }

    fn advance(&self, ms: u64) {
        self.clock.advance(ms)
    }

    fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    fn __call__(&self) -> u64 {
        self.clock.now_ms()
    }

    fn __repr__(&self) -> String {
        format!("ManualClock(now_ms={})", self.clock.now_ms())
    }
}

/// The coordinator lease, in memory: handles made with `contender` compete for one lease.
#[pyclass(name = "InMemoryLease", module = "shardline._native", frozen)]
pub struct PyInMemoryLease {
    pub lease: InMemoryLease,
}

#[pymethods]
impl PyInMemoryLease {
    /// A new lease nobody holds; this handle contends as `owner`.
    #[new]
    #[pyo3(signature = (owner, ttl_ms = 30_000))]
    fn new(owner: &str, ttl_ms: u64) -> Self {
        PyInMemoryLease {
            lease: InMemoryLease::new(owner, ttl_ms),
        }
    }

    /// Another contender for the same lease.
    fn contender(&self, owner: &str) -> Self {
        PyInMemoryLease {
            lease: self.lease.contender(owner),
        }
    }

    /// A handle with another safety margin and assumed clock drift (parts per million).
    fn with_safety(&self, margin_ms: u64, drift_ppm: u64) -> Self {
        PyInMemoryLease {
            lease: self.lease.clone().with_safety(margin_ms, drift_ppm),
        }
    }

    /// `(owner, token)` of the holder as the backend sees it at `now_ms`.
    fn holder(&self, now_ms: u64) -> Option<(String, u64)> {
        self.lease.holder(now_ms).map(|(o, t)| (o, t.0))
    }

    /// The backend forgets the holder (its session expired before it noticed).
    fn expire_now(&self) {
        self.lease.expire_now()
    }

    /// `(token, valid_until_ms)`, or None while someone else holds it.
    fn acquire(&self, now_ms: u64) -> PyResult<Option<(u64, u64)>> {
        let g = self.lease.clone().acquire(now_ms).or_raise()?;
        Ok(g.map(|g| (g.token.0, g.valid_until_ms)))
    }

    /// The new local deadline, or None when the grant is gone.
    fn renew(&self, token: u64, now_ms: u64) -> PyResult<Option<u64>> {
        self.lease
            .clone()
            .renew(FencingToken(token), now_ms)
            .or_raise()
    }

    fn release(&self, token: u64) -> PyResult<()> {
        self.lease.clone().release(FencingToken(token)).or_raise()
    }
}

/// The coordinator's state store, in memory; handles share one store.
#[pyclass(name = "InMemoryStore", module = "shardline._native", frozen)]
pub struct PyInMemoryStore {
    pub store: InMemoryStore,
}

fn outcome(o: WriteOutcome) -> bool {
    matches!(o, WriteOutcome::Written)
}

#[pymethods]
impl PyInMemoryStore {
    /// An empty store, or one holding `state` (`{"snapshot": ..., "events": [...]}`).
    #[new]
    #[pyo3(signature = (state = None))]
    fn new(state: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let store = match state {
            Some(s) => InMemoryStore::from_state(values::from_py(s, "stored state")?),
            None => InMemoryStore::new(),
        };
        Ok(PyInMemoryStore { store })
    }

    /// What a load would return now, without fencing anyone.
    fn contents<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::to_py(py, &self.store.contents())
    }

    #[getter]
    fn highest_token(&self) -> u64 {
        self.store.highest_token().0
    }

    /// True if written, False if fenced by a larger token.
    fn append(&self, token: u64, record: &Bound<'_, PyAny>) -> PyResult<bool> {
        let r: Record = values::from_py(record, "record")?;
        let o = self
            .store
            .clone()
            .append(FencingToken(token), &r)
            .or_raise()?;
        Ok(outcome(o))
    }

    fn save_snapshot(&self, token: u64, snapshot: &Bound<'_, PyAny>) -> PyResult<bool> {
        let s: Snapshot = values::from_py(snapshot, "snapshot")?;
        let o = self
            .store
            .clone()
            .save_snapshot(FencingToken(token), &s)
            .or_raise()?;
        Ok(outcome(o))
    }

    /// The stored state (fencing every token below `token`), or None if `token` is fenced.
    fn load<'py>(&self, py: Python<'py>, token: u64) -> PyResult<Option<Bound<'py, PyAny>>> {
        let s = self.store.clone().load(FencingToken(token)).or_raise()?;
        s.map(|s| values::to_py(py, &s)).transpose()
    }
}
