//! Worker ids and Snowflake ids: the generator (sans-IO: pass the wall clock in), the
//! in-memory worker-id registry, and a holder that reserves an id, keeps it alive and issues
//! ids through a clock the host provides.

use pyo3::prelude::*;
use shardline_bind::driver_host::{self, Adapter};
use shardline_bind::ids::{self, HolderOptions};
use shardline_bind::Failure;
use shardline_core::workerid::snowflake::{Layout, Next, Snowflake, DEFAULT_EPOCH_MS};
use shardline_core::workerid::{Identity, InMemoryRegistry, Registry, ReserveConfig, TenureConfig};

use crate::busy::{Enter, Guarded};
use crate::errors::{failure_err, guard, invalid_argument, OrRaise, Raised};
use crate::host::{self, PyHost};
use crate::values;
use shardline_bind::HandleCell;

/// Bit widths and epoch of Snowflake ids.
#[pyclass(name = "SnowflakeLayout", module = "shardline._native", frozen)]
#[derive(Clone)]
pub struct PyLayout {
    layout: Layout,
}

#[pymethods]
impl PyLayout {
    #[new]
    #[pyo3(signature = (timestamp_bits = 41, worker_bits = 10, sequence_bits = 12, epoch_ms = DEFAULT_EPOCH_MS))]
    fn new(
        timestamp_bits: u8,
        worker_bits: u8,
        sequence_bits: u8,
        epoch_ms: u64,
    ) -> PyResult<Self> {
        let layout =
            Layout::new(timestamp_bits, worker_bits, sequence_bits, epoch_ms).or_raise()?;
        Ok(PyLayout { layout })
    }

    #[getter]
    fn timestamp_bits(&self) -> u8 {
        self.layout.timestamp_bits()
    }
    #[getter]
    fn worker_bits(&self) -> u8 {
        self.layout.worker_bits()
    }
    #[getter]
    fn sequence_bits(&self) -> u8 {
        self.layout.sequence_bits()
    }
    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.layout.epoch_ms()
    }
    #[getter]
    fn worker_count(&self) -> u64 {
        self.layout.worker_count()
    }

    /// `(unix_ms, worker, sequence)` of an id.
    fn decompose(&self, id: u64) -> (u64, u64, u64) {
        let p = self.layout.decompose(id);
        (p.unix_ms, p.worker, p.sequence)
    }

    fn __repr__(&self) -> String {
        format!(
            "SnowflakeLayout(timestamp_bits={}, worker_bits={}, sequence_bits={}, epoch_ms={})",
            self.layout.timestamp_bits(),
            self.layout.worker_bits(),
            self.layout.sequence_bits(),
            self.layout.epoch_ms()
        )
    }
}

fn layout_or_default(layout: Option<&PyLayout>) -> Layout {
    layout.map(|l| l.layout).unwrap_or_default()
}

struct Gen {
    snowflake: Snowflake,
    wait_until_ms: Option<u64>,
}

/// One worker's Snowflake generator. Sans-IO: `next(wall_ms)` never reads a clock or sleeps.
#[pyclass(name = "Snowflake", module = "shardline._native", frozen)]
pub struct PySnowflake {
    inner: HandleCell<Gen>,
}

#[pymethods]
impl PySnowflake {
    /// A generator for a worker id made unique by other means (configuration): no fence,
    /// unlimited budget. For reserved ids use `Snowflake.fenced` (or `WorkerIdHolder`).
    #[new]
    #[pyo3(signature = (worker, layout = None))]
    fn new(worker: u64, layout: Option<PyRef<'_, PyLayout>>) -> PyResult<Self> {
        let g = Snowflake::new(layout_or_default(layout.as_deref()), worker).or_raise()?;
        Ok(Self::wrap(g))
    }

    /// Issues only timestamps above `floor_ms`, and nothing before `extend_budget`.
    #[staticmethod]
    #[pyo3(signature = (worker, floor_ms = None, layout = None))]
    fn fenced(
        worker: u64,
        floor_ms: Option<u64>,
        layout: Option<PyRef<'_, PyLayout>>,
    ) -> PyResult<Self> {
        let g =
            Snowflake::fenced(layout_or_default(layout.as_deref()), worker, floor_ms).or_raise()?;
        Ok(Self::wrap(g))
    }

    /// The next id at wall time `wall_ms` (Unix ms), or None: ask again once the wall clock
    /// reads `wait_until_ms`. Raises InvalidStateError when no id may be issued (clock moved
    /// back too far, budget exhausted, revoked, ...).
    fn next(&self, py: Python<'_>, wall_ms: u64) -> PyResult<Option<u64>> {
        let mut g = self.inner.enter(py)?;
        let r = g
            .snowflake
            .next(wall_ms)
            .map_err(shardline_core::Error::from)
            .or_raise()?;
        Ok(match r {
            Next::Id(id) => {
                g.wait_until_ms = None;
                Some(id)
            }
            Next::WaitUntil(at) => {
                g.wait_until_ms = Some(at);
                None
            }
        })
    }

    #[getter]
    fn wait_until_ms(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.inner.enter(py)?.wait_until_ms)
    }

    /// Raises the ceiling to an acknowledged budget (never lowers it).
    fn extend_budget(&self, py: Python<'_>, ceiling_ms: u64) -> PyResult<()> {
        self.inner.enter(py)?.snowflake.extend_budget(ceiling_ms);
        Ok(())
    }

    /// Stops issuing ids at once.
    fn revoke(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.enter(py)?.snowflake.revoke();
        Ok(())
    }

    #[getter]
    fn worker(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.inner.enter(py)?.snowflake.worker())
    }

    #[getter]
    fn budget_ms(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.inner.enter(py)?.snowflake.budget_ms())
    }

    #[getter]
    fn floor_ms(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.inner.enter(py)?.snowflake.floor_ms())
    }

    #[getter]
    fn last_timestamp_ms(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.inner.enter(py)?.snowflake.last_timestamp_ms())
    }

    #[getter]
    fn layout(&self, py: Python<'_>) -> PyResult<PyLayout> {
        Ok(PyLayout {
            layout: *self.inner.enter(py)?.snowflake.layout(),
        })
    }
}

impl PySnowflake {
    fn wrap(snowflake: Snowflake) -> Self {
        PySnowflake {
            inner: HandleCell::new(
                "Snowflake",
                Gen {
                    snowflake,
                    wait_until_ms: None,
                },
            ),
        }
    }
}

/// The embedded worker-id registry; sessions from one registry compete for the same ids.
/// Its time only moves with `advance_to`, so simulations control expiry.
#[pyclass(name = "WorkerIdRegistry", module = "shardline._native", frozen)]
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

    fn advance_to(&self, now_ms: u64) {
        self.registry.advance_to(now_ms)
    }

    #[getter]
    fn now_ms(&self) -> u64 {
        self.registry.now_ms()
    }

    /// `[(worker_id, owner, incarnation, epoch)]` of the live claims.
    fn live_claims(&self) -> Vec<(u32, String, u64, u64)> {
        self.registry
            .live_claims()
            .into_iter()
            .map(|(id, c)| (id, c.owner, c.incarnation, c.epoch))
            .collect()
    }

    /// The fence of a worker id (`{"epoch", "floorMs", "hwmMs"}`), if one was ever written.
    fn fence<'py>(&self, py: Python<'py>, worker_id: u32) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.registry
            .fence(worker_id)
            .map(|f| values::to_py(py, &f))
            .transpose()
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
#[pyclass(name = "WorkerIdHolder", module = "shardline._native", frozen)]
pub struct PyWorkerIdHolder {
    inner: Guarded<Held>,
}

impl PyWorkerIdHolder {
    fn with<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Held) -> Result<R, Failure>,
    ) -> PyResult<R> {
        self.inner.run(py, f)
    }
}

#[pymethods]
impl PyWorkerIdHolder {
    /// Reserves the lowest free worker id in `registry` (a WorkerIdRegistry, or an Etcd when
    /// built with etcd) as `owner` (incarnation: new on every process start) and confirms it. `policy`: "lowest", or "spread:N" to pick among the
    /// lowest N free ids at random (seeded by `seed`).
    #[staticmethod]
    #[pyo3(signature = (registry, owner, incarnation, *, clock, ttl_ms = 10_000, worker_bits = 10, layout = None, policy = "lowest", seed = 0))]
    #[allow(clippy::too_many_arguments)]
    fn acquire(
        py: Python<'_>,
        registry: &Bound<'_, PyAny>,
        owner: &str,
        incarnation: u64,
        clock: &Bound<'_, PyAny>,
        ttl_ms: u64,
        worker_bits: u8,
        layout: Option<PyRef<'_, PyLayout>>,
        policy: &str,
        seed: u64,
    ) -> PyResult<Self> {
        let raised = Raised::default();
        let options = HolderOptions {
            identity: Identity {
                owner: owner.to_owned(),
                incarnation,
            },
            reserve: ReserveConfig {
                worker_bits,
                policy: ids::policy(policy, "policy").map_err(failure_err)?,
                ..Default::default()
            },
            tenure: TenureConfig::for_ttl(ttl_ms),
            layout: layout_or_default(layout.as_deref()),
            seed,
        };
        let session = registry_session(registry, ttl_ms)?;
        let clock = driver_host::id_clock(host::object(clock, &driver_host::ID_CLOCK, &raised)?);
        let r = guard(|| Ok(Held::acquire(session, options, clock)))?;
        if let Some(e) = raised.take() {
            return Err(e);
        }
        let _ = py;
        Ok(PyWorkerIdHolder {
            inner: Guarded::new("WorkerIdHolder", r.map_err(failure_err)?, raised),
        })
    }

    #[getter]
    fn worker_id(&self, py: Python<'_>) -> PyResult<u32> {
        self.with(py, |h| Ok(h.holder()?.worker_id()))
    }

    /// Grows on every acquisition of this worker id, by anyone.
    #[getter]
    fn epoch(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |h| Ok(h.holder()?.epoch()))
    }

    /// Timestamps at or below this were (or may have been) used by earlier holders.
    #[getter]
    fn floor_ms(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |h| Ok(h.holder()?.tenure().floor_ms()))
    }

    /// The acknowledged timestamp budget.
    #[getter]
    fn budget_ms(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |h| Ok(h.holder()?.tenure().budget_ms()))
    }

    #[getter]
    fn valid_until_ms(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.with(py, |h| Ok(h.holder()?.tenure().valid_until_ms()))
    }

    #[getter]
    fn layout(&self, py: Python<'_>) -> PyResult<PyLayout> {
        self.with(py, |h| {
            Ok(PyLayout {
                layout: *h.holder()?.generator().layout(),
            })
        })
    }

    /// The next Snowflake id.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, Held::next_id)
    }

    /// Does the upkeep that is due; returns the monotonic time of the next.
    fn maintain(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, Held::maintain)
    }

    /// Stops the generator, hands back its unused budget and deletes the claim. Idempotent.
    fn release(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |h| {
            drop(h.release());
            Ok(())
        })
    }
}
