//! Worker ids and Snowflake ids: the generator (sans-IO: pass the wall clock in), the
//! in-memory worker-id registry, and a holder that reserves an id, keeps it alive and issues
//! ids through a clock the host provides. Their operations are `shardline_bind::ops::ids`;
//! `shardline.ids` names them.

use pyo3::prelude::*;
use shardline_bind::driver_host::{self, Adapter};
use shardline_bind::ids::{Generator, HolderInit};
use shardline_bind::objects::LayoutSpec;
use shardline_bind::ops::ids as ops_ids;
use shardline_bind::HandleCell;
use shardline_core::workerid::snowflake::Layout;
use shardline_core::workerid::{InMemoryRegistry, Registry};

use crate::busy::{Enter, Guarded};
use crate::errors::{failure_err, guard, invalid_argument, OrRaise, Raised};
use crate::host::{self, PyHost};
use crate::ops::{self, Answer, Rest};
use crate::values;

/// Bit widths and epoch of Snowflake ids.
#[pyclass(
    name = "SnowflakeLayout",
    module = "shardline._native",
    frozen,
    subclass
)]
pub struct PyLayout {
    layout: Layout,
}

#[pymethods]
impl PyLayout {
    #[new]
    #[pyo3(signature = (timestamp_bits = None, worker_bits = None, sequence_bits = None, epoch_ms = None))]
    fn new(
        timestamp_bits: Option<u8>,
        worker_bits: Option<u8>,
        sequence_bits: Option<u8>,
        epoch_ms: Option<u64>,
    ) -> PyResult<Self> {
        let d = LayoutSpec::default();
        let spec = LayoutSpec {
            timestamp_bits: timestamp_bits.unwrap_or(d.timestamp_bits),
            worker_bits: worker_bits.unwrap_or(d.worker_bits),
            sequence_bits: sequence_bits.unwrap_or(d.sequence_bits),
            epoch_ms: epoch_ms.unwrap_or(d.epoch_ms),
        };
        Ok(PyLayout {
            layout: spec.build().or_raise()?,
        })
    }

    /// `shardline_bind::ops::ids::layout`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "SnowflakeLayout", op, args, |a| {
            ops_ids::layout(&self.layout, a)
        })
    }
}

fn layout_or_default(layout: Option<&PyLayout>) -> Layout {
    layout.map(|l| l.layout).unwrap_or_default()
}

/// One worker's Snowflake generator. Sans-IO: `next(wall_ms)` never reads a clock or sleeps.
#[pyclass(name = "Snowflake", module = "shardline._native", frozen, subclass)]
pub struct PySnowflake {
    inner: HandleCell<Generator>,
}

#[pymethods]
impl PySnowflake {
    /// Unfenced unless `fenced`: see `shardline.Snowflake` and `Snowflake.fenced`.
    #[new]
    #[pyo3(signature = (worker, layout = None, *, fenced = false, floor_ms = None))]
    fn new(
        worker: u64,
        layout: Option<PyRef<'_, PyLayout>>,
        fenced: bool,
        floor_ms: Option<u64>,
    ) -> PyResult<Self> {
        let l = layout_or_default(layout.as_deref());
        let g = Generator::new(l, worker, fenced, floor_ms).map_err(failure_err)?;
        Ok(PySnowflake {
            inner: HandleCell::new("Snowflake", g),
        })
    }

    /// The next id at wall time `wall_ms` (Unix ms), or None: ask again once the wall clock
    /// reads `wait_until_ms`. Raises InvalidStateError when no id may be issued (clock moved
    /// back too far, budget exhausted, revoked, ...).
    fn next(&self, py: Python<'_>, wall_ms: u64) -> PyResult<Option<u64>> {
        self.inner.enter(py)?.next(wall_ms).map_err(failure_err)
    }

    /// `shardline_bind::ops::ids::snowflake`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        let mut g = self.inner.enter(py)?;
        ops::call(py, "Snowflake", op, args, |a| ops_ids::snowflake(&mut g, a))
    }
}

/// The embedded worker-id registry; sessions from one registry compete for the same ids.
/// Its time only moves with `advance_to`, so simulations control expiry.
#[pyclass(
    name = "WorkerIdRegistry",
    module = "shardline._native",
    frozen,
    subclass
)]
pub struct PyWorkerIdRegistry {
    registry: InMemoryRegistry,
}

#[pymethods]
impl PyWorkerIdRegistry {
    #[new]
    fn new() -> Self {
        PyWorkerIdRegistry {
            registry: InMemoryRegistry::new(),
        }
    }

    /// `shardline_bind::ops::ids::registry`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "WorkerIdRegistry", op, args, |a| {
            ops_ids::registry(&self.registry, a)
        })
    }
}

fn registry_session(obj: &Bound<'_, PyAny>, ttl_ms: u64) -> PyResult<Box<dyn Registry>> {
    if let Ok(r) = obj.cast::<PyWorkerIdRegistry>() {
        return Ok(Box::new(r.get().registry.session(ttl_ms)));
    }
    #[cfg(feature = "etcd")]
    if let Some(r) = crate::etcd::registry(obj, ttl_ms) {
        return Ok(r);
    }
    Err(invalid_argument(format!(
        "registry must be a WorkerIdRegistry (or an Etcd), got {}",
        obj.get_type().name()?
    )))
}

type Held = shardline_bind::ids::Held<Box<dyn Registry>, Adapter<PyHost>>;

/// A reserved worker id, kept alive, with its fenced Snowflake generator. Every call does the
/// upkeep that is due (keep-alive, budget) through the clock, sleeping with `sleep_until`
/// only when the generator must wait.
#[pyclass(
    name = "WorkerIdHolder",
    module = "shardline._native",
    frozen,
    subclass
)]
pub struct PyWorkerIdHolder {
    inner: Guarded<Held>,
}

#[pymethods]
impl PyWorkerIdHolder {
    /// Reserves a worker id in `registry` (a WorkerIdRegistry, or an Etcd when built with
    /// etcd) and confirms it; `options` are `shardline_bind::ids::HolderInit`'s.
    /// `shardline.WorkerIdHolder.acquire` is the documented way in.
    #[new]
    fn new(
        registry: &Bound<'_, PyAny>,
        clock: &Bound<'_, PyAny>,
        options: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let init: HolderInit = values::read(options, "options")?;
        let (options, ttl_ms) = init.options().map_err(failure_err)?;
        let session = registry_session(registry, ttl_ms)?;
        let raised = Raised::default();
        let clock = driver_host::id_clock(host::object(clock, &driver_host::ID_CLOCK, &raised)?);
        let held = raised.finish(guard(|| Ok(Held::acquire(session, options, clock)))?)?;
        Ok(PyWorkerIdHolder {
            inner: Guarded::new("WorkerIdHolder", held, raised),
        })
    }

    /// The next Snowflake id.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        self.inner.run(py, Held::next_id)
    }

    /// `shardline_bind::ops::ids::holder`; an exception the clock raised meanwhile wins.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        guard(|| {
            let mut held = self.inner.enter(py)?;
            let r = ops::call(py, "WorkerIdHolder", op, args, |a| {
                ops_ids::holder(&mut held, a)
            });
            drop(held);
            self.inner.raised.take().map_or(r, Err)
        })
    }
}
