//! Python objects as the driver's host objects. `shardline_bind::driver_host` decides what
//! each role needs and how answers are read; this module only calls Python.
//!
//! Every callback runs on the calling thread, during the driver call that needs it. An
//! exception it raises is kept (see `Raised`) and re-raised, unchanged, when that driver call
//! returns; the core meanwhile sees a failed callback and carries on as it documents.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use shardline_bind::driver_host::{self as adapt, HostObject, Role, Spelling};
use shardline_bind::tree::Tree;
use shardline_bind::Failure;
use shardline_core::host::{Clock, EntityHost, Lease, Store, Transport};

use crate::backends::{PyInMemoryLease, PyInMemoryStore, PyManualClock};
use crate::errors::{failure_err, NullPointerError, Raised};
use crate::values;

/// A Python object in one role; a plain callable serves a one-method role (`send`, `now_ms`).
pub struct PyHost {
    obj: Py<PyAny>,
    raised: Raised,
    callable: bool,
}

/// `obj` in `role`, once it is known to have the methods the role needs.
pub fn object(obj: &Bound<'_, PyAny>, role: &Role, raised: &Raised) -> PyResult<PyHost> {
    let callable = role.required.len() == 1 && obj.is_callable();
    let host = PyHost {
        obj: obj.clone().unbind(),
        raised: raised.clone(),
        callable,
    };
    role.check(Spelling::Snake, |m| host.has(m))
        .map_err(failure_err)?;
    Ok(host)
}

impl PyHost {
    fn method<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let obj = self.obj.bind(py);
        Ok(obj.getattr_opt(name)?.unwrap_or_else(|| obj.clone()))
    }
}

impl HostObject for PyHost {
    fn call(&self, method: &str, args: Vec<Tree>) -> Result<Tree, Failure> {
        Python::attach(|py| {
            let args = args
                .iter()
                .map(|a| values::to_py(py, a))
                .collect::<PyResult<Vec<_>>>()?;
            let answer = self.method(py, method)?.call1(PyTuple::new(py, args)?)?;
            values::read(&answer, &format!("the answer of {method}"))
        })
        .map_err(|e| self.raised.threw(e))
    }

    fn has(&self, method: &str) -> bool {
        self.callable || Python::attach(|py| self.obj.bind(py).hasattr(method).unwrap_or(false))
    }

    fn keep(&self, failure: Failure) -> shardline_core::Error {
        self.raised.keep_failure(failure)
    }
}

fn required<'a, 'py>(
    obj: Option<&'a Bound<'py, PyAny>>,
    role: &Role,
) -> PyResult<&'a Bound<'py, PyAny>> {
    match obj {
        Some(o) if !o.is_none() => Ok(o),
        _ => Err(NullPointerError::new_err(format!("{} is None", role.name))),
    }
}

fn host(obj: Option<&Bound<'_, PyAny>>, role: &Role, raised: &Raised) -> PyResult<PyHost> {
    object(required(obj, role)?, role, raised)
}

/// A callable `send(envelope)`, or an object with a `send` method.
pub fn transport(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Transport>> {
    Ok(adapt::transport(host(obj, &adapt::TRANSPORT, raised)?))
}

/// A `ManualClock`, a callable returning milliseconds, or an object with `now_ms()`.
pub fn clock(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Clock>> {
    if let Some(c) = obj.and_then(|o| o.cast::<PyManualClock>().ok()) {
        return Ok(Box::new(c.get().clock.clone()));
    }
    Ok(adapt::clock(host(obj, &adapt::CLOCK, raised)?))
}

/// An `InMemoryLease`, or an object with `acquire(now_ms)`, `renew(token, now_ms)` and
/// `release(token)`.
pub fn lease(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Lease>> {
    if let Some(l) = obj.and_then(|o| o.cast::<PyInMemoryLease>().ok()) {
        return Ok(Box::new(l.get().lease.clone()));
    }
    #[cfg(feature = "etcd")]
    if let Some(l) = obj.map(crate::etcd::lease).transpose()?.flatten() {
        return Ok(l);
    }
    Ok(adapt::lease(host(obj, &adapt::LEASE, raised)?))
}

/// An `InMemoryStore`, or an object with `append(token, record)`, `save_snapshot(token,
/// snapshot)` and `load(token)`.
pub fn store(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Store>> {
    if let Some(s) = obj.and_then(|o| o.cast::<PyInMemoryStore>().ok()) {
        return Ok(Box::new(s.get().store.clone()));
    }
    #[cfg(feature = "etcd")]
    if let Some(s) = obj.map(crate::etcd::store).transpose()?.flatten() {
        return Ok(s);
    }
    Ok(adapt::store(host(obj, &adapt::STORE, raised)?))
}

/// An object with `start_shard(shard, entities)`, `deliver(shard, entity, payload)` and
/// `stop_shard(shard)`; optionally `start_entities`, `undeliverable` and `stopped`.
pub fn entity_host(
    obj: Option<&Bound<'_, PyAny>>,
    raised: &Raised,
) -> PyResult<Box<dyn EntityHost>> {
    Ok(adapt::entity_host(host(obj, &adapt::ENTITY_HOST, raised)?))
}
