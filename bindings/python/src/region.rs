//! The shard region state machine, step API, and the entity -> shard extractor it routes by.

use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString};
use shardline_bind::machine_init;
use shardline_bind::ops::machines;
use shardline_core::region::{
    Region, RegionInput, RegionOutput, RejectReason, Rejected, ShardExtractor,
};

use crate::busy::Enter;
use crate::errors::{callback_failed, failure_err, guard, InvalidStateError, OrRaise};
use crate::ops::{self, Answer, Rest};
use crate::{envelope, values};
use shardline_bind::HandleCell;

/// A Python extractor, run before the core sees the message (so its exceptions reach the
/// caller directly); the core's own extractors run inside the region.
pub struct Extractor {
    pub python: Option<Py<PyAny>>,
}

/// `{"kind": "pekko", "numberOfShards": n}`, `{"kind": "actor-ts", "numShards": n}` (dict or
/// JSON), or a callable `entity_id -> shard_id`.
pub fn extractor(obj: &Bound<'_, PyAny>) -> PyResult<(ShardExtractor, Extractor)> {
    if obj.is_callable() {
        // The core's extractor is never consulted: routing asks the Python callable first.
        let python = Some(obj.clone().unbind());
        return Ok((ShardExtractor::custom(|e| e.into()), Extractor { python }));
    }
    let doc = values::config(Some(obj), None, "shard extractor")?;
    let core = machine_init::extractor(doc, "shard extractor").map_err(failure_err)?;
    Ok((core, Extractor { python: None }))
}

impl Extractor {
    /// The shard of `entity`: `given`, else the Python extractor's, else None to let the
    /// core's extractor decide.
    pub fn python_shard(
        &self,
        py: Python<'_>,
        entity: &str,
        given: Option<&str>,
    ) -> PyResult<Option<String>> {
        let (None, Some(f)) = (given, &self.python) else {
            return Ok(given.map(str::to_owned));
        };
        let r = { f.bind(py).call1((entity,))? };
        if let Ok(s) = r.cast::<PyString>() {
            return Ok(Some(s.to_str()?.to_owned()));
        }
        if r.is_instance_of::<PyInt>() {
            return Ok(Some(r.str()?.to_str()?.to_owned()));
        }
        Err(callback_failed(format!(
            "the shard extractor returned {} for entity {entity:?}; expected a shard id (str or int)",
            r.get_type().name()?
        )))
    }

    pub fn shard_of(&self, py: Python<'_>, entity: &str, region: &Region) -> PyResult<String> {
        match self.python_shard(py, entity, None)? {
            Some(s) => Ok(s),
            None => region.shard_of(entity).map(String::from).or_raise(),
        }
    }
}

/// A region and the extractor it routes by, from a constructor's arguments.
pub fn build(
    region_id: &str,
    node: &str,
    shards: &Bound<'_, PyAny>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<RegionCore> {
    let (core, extractor) = extractor(shards)?;
    let config = values::config(config, None, "config")?;
    let region = machine_init::region_named(region_id, (node, "node"), core, Some(&config))
        .map_err(failure_err)?;
    Ok(RegionCore { region, extractor })
}

/// A refused message as InvalidStateError with `reason` ("buffer-full" or "shut-down"),
/// `shard` and `entity` attributes.
pub fn rejected(py: Python<'_>, r: Rejected) -> PyErr {
    let reason = match r.reason {
        RejectReason::BufferFull { .. } => "buffer-full",
        RejectReason::ShutDown => "shut-down",
    };
    let err = InvalidStateError::new_err(r.to_string());
    let v = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail in practice; if it did,
    // the message still says everything.
    let _ = v.setattr("reason", reason);
    let _ = v.setattr("shard", r.shard.as_str());
    let _ = v.setattr("entity", r.entity.as_str());
    err
}

fn output<'py>(py: Python<'py>, o: &RegionOutput) -> PyResult<Bound<'py, PyAny>> {
    match o {
        RegionOutput::Send(e) => envelope::send(py, e),
        o => values::to_py(py, o),
    }
}

pub struct RegionCore {
    pub region: Region,
    pub extractor: Extractor,
}

#[pyclass(name = "Region", module = "shardline._native", frozen, subclass)]
pub struct PyRegion {
    inner: HandleCell<RegionCore>,
}

impl PyRegion {
    fn with<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut RegionCore) -> PyResult<R>,
    ) -> PyResult<R> {
        guard(|| f(&mut *self.inner.enter(py)?))
    }

    fn input(&self, py: Python<'_>, now_ms: u64, input: RegionInput) -> PyResult<()> {
        self.with(py, |r| {
            r.region.handle(now_ms, input);
            Ok(())
        })
    }
}

#[pymethods]
impl PyRegion {
    /// `region_id` names this incarnation; `node` is its cluster address; `shards` is the
    /// extractor (see `extractor`); `config`: RegionConfig fields.
    #[new]
    #[pyo3(signature = (region_id, node, shards, config = None))]
    fn new(
        region_id: &str,
        node: &str,
        shards: &Bound<'_, PyAny>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(PyRegion {
            inner: HandleCell::new("Region", build(region_id, node, shards, config)?),
        })
    }

    /// Registers with the coordinator (and keeps retrying until acknowledged).
    fn start(&self, py: Python<'_>, now_ms: u64) -> PyResult<()> {
        self.with(py, |r| {
            r.region.start(now_ms);
            Ok(())
        })
    }

    /// Routes a message from a local sender. Raises InvalidStateError (with `reason`) when the
    /// region cannot take it; then nothing was queued.
    #[pyo3(signature = (now_ms, entity, payload, shard = None))]
    fn route(
        &self,
        py: Python<'_>,
        now_ms: u64,
        entity: &str,
        payload: &[u8],
        shard: Option<&str>,
    ) -> PyResult<()> {
        self.with(py, |r| {
            let result = match r.extractor.python_shard(py, entity, shard)? {
                Some(s) => r
                    .region
                    .route_to_shard(now_ms, &s, entity, payload.to_vec()),
                None => r.region.route(now_ms, entity, payload.to_vec()),
            };
            result.map_err(|e| rejected(py, e))
        })
    }

    fn receive(&self, py: Python<'_>, now_ms: u64, envelope: &Bound<'_, PyAny>) -> PyResult<()> {
        let env = envelope::from_py(envelope)?;
        self.input(py, now_ms, RegionInput::Receive(env))
    }

    /// One input as the step API's document (`{"type": "shardStopped", "shard": "7"}`, the
    /// form C and Node take); `shardline.Region` has a named method for each.
    fn handle(&self, py: Python<'_>, now_ms: u64, input: &Bound<'_, PyAny>) -> PyResult<()> {
        let input: RegionInput = values::from_py(input, "input")?;
        self.input(py, now_ms, input)
    }

    fn on_timeout(&self, py: Python<'_>, now_ms: u64) -> PyResult<()> {
        self.with(py, |r| {
            r.region.on_timeout(now_ms);
            Ok(())
        })
    }

    fn next_deadline(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.with(py, |r| Ok(r.region.next_deadline()))
    }

    fn poll_output<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let o = self.with(py, |r| Ok(r.region.poll_output()))?;
        o.map(|o| output(py, &o)).transpose()
    }

    fn drain_outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let all = self.with(py, |r| Ok(r.region.drain_outputs()))?;
        envelope::list(py, &all, output)
    }

    /// The queries (`shardline_bind::ops::machines::region`); the `shardline` package names
    /// each (`shard_of` is a method here: it may call the Python extractor).
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        self.with(py, |r| {
            ops::call(py, "Region", op, args, |a| machines::region(&r.region, a))
        })
    }

    fn shard_of(&self, py: Python<'_>, entity: &str) -> PyResult<String> {
        self.with(py, |r| r.extractor.shard_of(py, entity, &r.region))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |r| Ok(format!("{:?}", r.region)))
    }
}
