//! The embedded backends: a manual clock, the in-memory lease and the in-memory store. Each
//! Python object is a handle; clones in the core share the same state, so a driver given one
//! of these sees exactly what the Python side sees. Their operations are
//! `shardline_bind::ops::backends`; `shardline.backends` names them.

use pyo3::prelude::*;
use shardline_bind::objects::LeaseOptions;
use shardline_bind::ops::backends as ops_backends;
use shardline_core::host::{InMemoryLease, InMemoryStore, ManualClock};

use crate::errors::invalid_argument;
use crate::ops::{self, Answer, Rest};
use crate::values;

/// A clock the host sets; it never goes backwards.
#[pyclass(name = "ManualClock", module = "shardline._native", frozen, subclass)]
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

    /// `shardline_bind::ops::backends::clock`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "ManualClock", op, args, |a| {
            ops_backends::clock(&self.clock, a)
        })
    }
}

/// The coordinator lease, in memory: handles made with `share` contend for one lease.
#[pyclass(name = "InMemoryLease", module = "shardline._native", frozen, subclass)]
pub struct PyInMemoryLease {
    pub lease: InMemoryLease,
}

#[pymethods]
impl PyInMemoryLease {
    /// A new lease nobody holds, this handle contending as `owner`; with `share`, a handle on
    /// that handle's lease (its time-to-live), as `owner` or, left out, as the same owner. A
    /// margin or drift given replaces the handle's safety (see `LeaseOptions`).
    #[new]
    #[pyo3(signature = (owner = None, ttl_ms = 30_000, *, share = None, margin_ms = None, drift_ppm = None))]
    fn new(
        owner: Option<&str>,
        ttl_ms: u64,
        share: Option<PyRef<'_, PyInMemoryLease>>,
        margin_ms: Option<u64>,
        drift_ppm: Option<u64>,
    ) -> PyResult<Self> {
        let lease = match (share, owner) {
            (Some(s), Some(o)) => s.lease.contender(o),
            (Some(s), None) => s.lease.clone(),
            (None, Some(o)) => InMemoryLease::new(o, ttl_ms),
            (None, None) => return Err(invalid_argument("InMemoryLease: owner is required")),
        };
        let safety = LeaseOptions {
            margin_ms,
            drift_ppm,
        };
        Ok(PyInMemoryLease {
            lease: match safety.safety(ttl_ms) {
                Some((m, d)) => lease.with_safety(m, d),
                None => lease,
            },
        })
    }

    /// `shardline_bind::ops::backends::lease`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "InMemoryLease", op, args, |a| {
            ops_backends::lease(&self.lease, a)
        })
    }
}

/// The coordinator's state store, in memory; handles share one store.
#[pyclass(name = "InMemoryStore", module = "shardline._native", frozen, subclass)]
pub struct PyInMemoryStore {
    pub store: InMemoryStore,
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

    /// `shardline_bind::ops::backends::store`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "InMemoryStore", op, args, |a| {
            ops_backends::store(&self.store, a)
        })
    }
}
