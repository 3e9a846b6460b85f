//! Python objects as the core's host traits (Transport, Clock, Lease, Store, EntityHost).
//!
//! Every callback runs on the calling thread, during the driver call that needs it. An
//! exception it raises is kept (see `Raised`) and re-raised, unchanged, when that driver call
//! returns; the core meanwhile sees a failed callback and carries on as it documents.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::driver::{Clock, EntityHost, Transport};
use shardline_core::lease::{Lease, LeaseGrant};
use shardline_core::protocol::{EntityId, Envelope, FencingToken, Payload};
use shardline_core::store::{Store, StoredState, WriteOutcome};
use shardline_core::Result;

use crate::backends::{PyInMemoryLease, PyInMemoryStore, PyManualClock};
use crate::errors::{callback_failed, invalid_argument, NullPointerError, Raised};
use crate::json;

/// A Python callable plus where its exceptions go.
struct Callback {
    f: Py<PyAny>,
    raised: Raised,
    what: String,
}

impl Callback {
    /// `obj.method` if it exists, else `obj` itself when it is callable (plain functions work
    /// as single-method hosts).
    fn resolve(
        obj: &Bound<'_, PyAny>,
        method: &str,
        raised: &Raised,
        fallback_to_callable: bool,
    ) -> PyResult<Option<Callback>> {
        let f = match obj.getattr_opt(method)? {
            Some(m) => m,
            None if fallback_to_callable && obj.is_callable() => obj.clone(),
            None => return Ok(None),
        };
        Ok(Some(Callback {
            f: f.unbind(),
            raised: raised.clone(),
            what: format!("{}.{method}", obj.get_type().name()?),
        }))
    }

    fn required(
        obj: &Bound<'_, PyAny>,
        method: &str,
        raised: &Raised,
        fallback_to_callable: bool,
    ) -> PyResult<Callback> {
        Self::resolve(obj, method, raised, fallback_to_callable)?.ok_or_else(|| {
            invalid_argument(format!(
                "{} has no {method} method",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })
    }

    /// Calls with `args` and hands the result to `convert`; any exception is kept.
    fn call<T>(
        &self,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
        convert: impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> Result<T> {
        Python::attach(|py| {
            args(py)
                .and_then(|a| self.f.bind(py).call1(a))
                .and_then(|r| convert(&r))
                .map_err(|e| self.raised.keep(e, &self.what))
        })
    }
}

fn unit(_: &Bound<'_, PyAny>) -> PyResult<()> {
    Ok(())
}

fn envelope_args<'py>(py: Python<'py>, env: &Envelope) -> PyResult<Bound<'py, PyTuple>> {
    (json::ser_to_py(py, env)?,).into_pyobject(py)
}

fn required<'a, 'py>(
    obj: Option<&'a Bound<'py, PyAny>>,
    what: &str,
) -> PyResult<&'a Bound<'py, PyAny>> {
    match obj {
        Some(o) if !o.is_none() => Ok(o),
        _ => Err(NullPointerError::new_err(format!("{what} is None"))),
    }
}

// ---- transport ------------------------------------------------------------------------

struct PyTransport(Callback);

impl Transport for PyTransport {
    fn send(&mut self, envelope: Envelope) -> Result<()> {
        self.0.call(|py| envelope_args(py, &envelope), unit)
    }
}

/// A callable `send(envelope)`, or an object with a `send` method.
pub fn transport(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Transport>> {
    let obj = required(obj, "transport")?;
    Ok(Box::new(PyTransport(Callback::required(
        obj, "send", raised, true,
    )?)))
}

// ---- clock ----------------------------------------------------------------------------

struct PyClock {
    cb: Callback,
    /// What to answer if the clock raises: the last good reading (the machines never let time
    /// go backwards anyway), while the exception travels to the caller.
    last: AtomicU64,
}

impl Clock for PyClock {
    fn now_ms(&self) -> u64 {
        match self.cb.call(
            |py| Ok(PyTuple::empty(py)),
            |r| {
                r.extract::<u64>().map_err(|_| {
                    callback_failed(format!(
                        "the clock returned {r}; expected milliseconds (an int >= 0)"
                    ))
                })
            },
        ) {
            Ok(t) => {
                self.last.fetch_max(t, Ordering::Relaxed);
                t
            }
            Err(_) => self.last.load(Ordering::Relaxed),
        }
    }
}

/// A `ManualClock`, a callable returning milliseconds, or an object with `now_ms()`.
pub fn clock(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Clock>> {
    let obj = required(obj, "clock")?;
    if let Ok(c) = obj.cast::<PyManualClock>() {
        return Ok(Box::new(c.get().clock.clone()));
    }
    Ok(Box::new(PyClock {
        cb: Callback::required(obj, "now_ms", raised, true)?,
        last: AtomicU64::new(0),
    }))
}

// ---- lease ----------------------------------------------------------------------------

struct PyLease {
    acquire: Callback,
    renew: Callback,
    release: Callback,
}

fn grant(r: &Bound<'_, PyAny>) -> PyResult<Option<LeaseGrant>> {
    if r.is_none() {
        return Ok(None);
    }
    if let Ok(d) = r.cast::<PyDict>() {
        return json::from_py(d.as_any(), "lease grant").map(Some);
    }
    let (token, valid_until_ms): (u64, u64) = r.extract().map_err(|_| {
        callback_failed(format!(
            "lease acquire returned {r}; expected None or (token, valid_until_ms)"
        ))
    })?;
    Ok(Some(LeaseGrant {
        token: FencingToken(token),
        valid_until_ms,
    }))
}

impl Lease for PyLease {
    fn acquire(&mut self, now_ms: u64) -> Result<Option<LeaseGrant>> {
        self.acquire.call(|py| (now_ms,).into_pyobject(py), grant)
    }

    fn renew(&mut self, token: FencingToken, now_ms: u64) -> Result<Option<u64>> {
        self.renew.call(
            |py| (token.0, now_ms).into_pyobject(py),
            |r| {
                r.extract::<Option<u64>>().map_err(|_| {
                    callback_failed(format!(
                        "lease renew returned {r}; expected None or the new valid_until_ms"
                    ))
                })
            },
        )
    }

    fn release(&mut self, token: FencingToken) -> Result<()> {
        self.release.call(|py| (token.0,).into_pyobject(py), unit)
    }
}

/// An `InMemoryLease`, or an object with `acquire(now_ms)`, `renew(token, now_ms)` and
/// `release(token)`.
pub fn lease(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Lease>> {
    let obj = required(obj, "lease")?;
    if let Ok(l) = obj.cast::<PyInMemoryLease>() {
        return Ok(Box::new(l.get().lease.clone()));
    }
    #[cfg(feature = "etcd")]
    if let Some(l) = crate::etcd::lease(obj)? {
        return Ok(l);
    }
    Ok(Box::new(PyLease {
        acquire: Callback::required(obj, "acquire", raised, false)?,
        renew: Callback::required(obj, "renew", raised, false)?,
        release: Callback::required(obj, "release", raised, false)?,
    }))
}

// ---- store ----------------------------------------------------------------------------

struct PyStore {
    append: Callback,
    save_snapshot: Callback,
    load: Callback,
}

fn written(
    token: FencingToken,
) -> impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<WriteOutcome> {
    move |r| {
        if r.is_none() {
            return Ok(WriteOutcome::Written);
        }
        if let Ok(d) = r.cast::<PyDict>() {
            return json::from_py(d.as_any(), "write outcome");
        }
        match r.extract::<bool>() {
            Ok(true) => Ok(WriteOutcome::Written),
            // The driver only needs to know it was fenced, not by whom.
            Ok(false) => Ok(WriteOutcome::Fenced { highest: token }),
            Err(_) => Err(callback_failed(format!(
                "a store write returned {r}; expected True (written), False (fenced) or None"
            ))),
        }
    }
}

impl Store for PyStore {
    fn append(&mut self, token: FencingToken, record: &Record) -> Result<WriteOutcome> {
        self.append.call(
            |py| (token.0, json::ser_to_py(py, record)?).into_pyobject(py),
            written(token),
        )
    }

    fn save_snapshot(&mut self, token: FencingToken, snapshot: &Snapshot) -> Result<WriteOutcome> {
        self.save_snapshot.call(
            |py| (token.0, json::ser_to_py(py, snapshot)?).into_pyobject(py),
            written(token),
        )
    }

    fn load(&mut self, token: FencingToken) -> Result<Option<StoredState>> {
        self.load.call(
            |py| (token.0,).into_pyobject(py),
            |r| {
                if r.is_none() {
                    Ok(None)
                } else {
                    json::from_py(r, "stored state").map(Some)
                }
            },
        )
    }
}

/// An `InMemoryStore`, or an object with `append(token, record)`, `save_snapshot(token,
/// snapshot)` and `load(token)`.
pub fn store(obj: Option<&Bound<'_, PyAny>>, raised: &Raised) -> PyResult<Box<dyn Store>> {
    let obj = required(obj, "store")?;
    if let Ok(s) = obj.cast::<PyInMemoryStore>() {
        return Ok(Box::new(s.get().store.clone()));
    }
    #[cfg(feature = "etcd")]
    if let Some(s) = crate::etcd::store(obj)? {
        return Ok(s);
    }
    Ok(Box::new(PyStore {
        append: Callback::required(obj, "append", raised, false)?,
        save_snapshot: Callback::required(obj, "save_snapshot", raised, false)?,
        load: Callback::required(obj, "load", raised, false)?,
    }))
}

// ---- entity host ----------------------------------------------------------------------

struct PyEntityHost {
    start_shard: Callback,
    start_entities: Option<Callback>,
    deliver: Callback,
    stop_shard: Callback,
    undeliverable: Option<Callback>,
    stopped: Option<Callback>,
}

fn shard_entities<'py>(
    py: Python<'py>,
    shard: &str,
    entities: &[EntityId],
) -> PyResult<Bound<'py, PyTuple>> {
    (shard, entities.to_vec()).into_pyobject(py)
}

impl EntityHost for PyEntityHost {
    fn start_shard(&mut self, shard: &str, entities: &[EntityId]) -> Result<()> {
        self.start_shard
            .call(|py| shard_entities(py, shard, entities), unit)
    }

    fn start_entities(&mut self, shard: &str, entities: &[EntityId]) -> Result<()> {
        let cb = self.start_entities.as_ref().unwrap_or(&self.start_shard);
        cb.call(|py| shard_entities(py, shard, entities), unit)
    }

    fn deliver(&mut self, shard: &str, entity: &str, payload: Payload) -> Result<()> {
        self.deliver.call(
            |py| (shard, entity, pyo3::types::PyBytes::new(py, &payload)).into_pyobject(py),
            unit,
        )
    }

    fn stop_shard(&mut self, shard: &str) -> Result<bool> {
        self.stop_shard.call(
            |py| (shard,).into_pyobject(py),
            // None (a plain function that stopped everything) counts as done.
            |r| Ok(r.is_none() || r.is_truthy()?),
        )
    }

    fn undeliverable(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
        reason: &str,
    ) -> Result<()> {
        match &self.undeliverable {
            Some(cb) => cb.call(
                |py| {
                    (
                        shard,
                        entity,
                        pyo3::types::PyBytes::new(py, &payload),
                        reason,
                    )
                        .into_pyobject(py)
                },
                unit,
            ),
            None => Ok(()),
        }
    }

    fn stopped(&mut self) -> Result<()> {
        match &self.stopped {
            Some(cb) => cb.call(|py| Ok(PyTuple::empty(py)), unit),
            None => Ok(()),
        }
    }
}

/// An object with `start_shard(shard, entities)`, `deliver(shard, entity, payload)` and
/// `stop_shard(shard)`; optionally `start_entities`, `undeliverable` and `stopped`.
pub fn entity_host(
    obj: Option<&Bound<'_, PyAny>>,
    raised: &Raised,
) -> PyResult<Box<dyn EntityHost>> {
    let obj = required(obj, "host")?;
    Ok(Box::new(PyEntityHost {
        start_shard: Callback::required(obj, "start_shard", raised, false)?,
        start_entities: Callback::resolve(obj, "start_entities", raised, false)?,
        deliver: Callback::required(obj, "deliver", raised, false)?,
        stop_shard: Callback::required(obj, "stop_shard", raised, false)?,
        undeliverable: Callback::resolve(obj, "undeliverable", raised, false)?,
        stopped: Callback::resolve(obj, "stopped", raised, false)?,
    }))
}
