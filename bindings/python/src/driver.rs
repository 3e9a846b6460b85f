//! The callback drivers: the state machines run for you, their outputs carried out through
//! Python host objects (or the embedded backends) during each call.

use pyo3::prelude::*;
use shardline_core::coordinator::CoordinatorInput;
use shardline_core::host::{CoordinatorDriver, RegionDriver};
use shardline_core::region::{Region, RegionInput};

use crate::busy::Guarded;
use crate::errors::{guard, Raised};
use crate::host;
use crate::ops::{self, Answer, Rest};
use crate::region::{self, rejected, Extractor, RegionCore};
use crate::values;
use crate::{coordinator, envelope};
use shardline_bind::ops::machines;

#[pyclass(
    name = "CoordinatorDriver",
    module = "shardline._native",
    frozen,
    subclass
)]
pub struct PyCoordinatorDriver {
    inner: Guarded<CoordinatorDriver>,
}

#[pymethods]
impl PyCoordinatorDriver {
    #[new]
    #[pyo3(signature = (strategy, self_address, *, transport, clock, lease, store, config = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        strategy: Option<&Bound<'_, PyAny>>,
        self_address: &str,
        transport: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        lease: Option<&Bound<'_, PyAny>>,
        store: Option<&Bound<'_, PyAny>>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let raised = Raised::default();
        let c = coordinator::build(strategy, self_address, config, &raised)?;
        let d = CoordinatorDriver::new(
            c,
            host::transport(transport, &raised)?,
            host::clock(clock, &raised)?,
            host::lease(lease, &raised)?,
            host::store(store, &raised)?,
        );
        Ok(PyCoordinatorDriver {
            inner: Guarded::new("CoordinatorDriver", d, raised),
        })
    }

    fn start(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.call(py, |d| d.start())
    }

    fn receive(&self, py: Python<'_>, envelope: &Bound<'_, PyAny>) -> PyResult<()> {
        let env = envelope::from_py(envelope)?;
        self.inner.call(py, |d| d.receive(env))
    }

    /// One input as the step API's document, at the clock's time; `shardline.CoordinatorDriver`
    /// has a named method for each.
    fn handle(&self, py: Python<'_>, input: &Bound<'_, PyAny>) -> PyResult<()> {
        let input: CoordinatorInput = values::from_py(input, "input")?;
        self.inner.call(py, |d| d.input(input))
    }

    /// The lease backend reports the current grant lost.
    fn lease_lost(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.call(py, |d| d.lease_lost())
    }

    /// Runs every timer that is due; returns when to call again (None: no timer armed).
    fn poll(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.inner.call(py, |d| d.poll())
    }

    fn next_deadline(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.inner.read(py, |d| d.next_deadline())
    }

    /// Notices since the last call, as dicts with a "type".
    fn take_notices<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let notices = self.inner.call(py, |d| Ok(d.take_notices()))?;
        notices.iter().map(|n| values::to_py(py, n)).collect()
    }

    /// The coordinator's queries, as `Coordinator._op`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        let held = self.inner.enter(py)?;
        ops::call(py, "CoordinatorDriver", op, args, |a| {
            machines::coordinator(held.coordinator(), a)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.inner
            .read(py, |d| format!("CoordinatorDriver({:?})", d.coordinator()))
    }
}

struct RegionSide {
    driver: RegionDriver,
    extractor: Extractor,
}

#[pyclass(name = "RegionDriver", module = "shardline._native", frozen, subclass)]
pub struct PyRegionDriver {
    inner: Guarded<RegionSide>,
}

impl PyRegionDriver {
    fn call<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut RegionDriver) -> shardline_core::Result<R>,
    ) -> PyResult<R> {
        self.inner.call(py, |s| f(&mut s.driver))
    }

    fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&Region) -> R) -> PyResult<R> {
        self.inner.read(py, |s| f(s.driver.region()))
    }
}

#[pymethods]
impl PyRegionDriver {
    #[new]
    #[pyo3(signature = (region_id, node, shards, *, transport, clock, host, config = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        region_id: &str,
        node: &str,
        shards: &Bound<'_, PyAny>,
        transport: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        host: Option<&Bound<'_, PyAny>>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let raised = Raised::default();
        let RegionCore { region, extractor } = region::build(region_id, node, shards, config)?;
        let driver = RegionDriver::new(
            region,
            host::transport(transport, &raised)?,
            host::clock(clock, &raised)?,
            host::entity_host(host, &raised)?,
        );
        Ok(PyRegionDriver {
            inner: Guarded::new("RegionDriver", RegionSide { driver, extractor }, raised),
        })
    }

    fn start(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |d| d.start())
    }

    /// Routes a message. InvalidStateError (with `reason`) if the region cannot take it.
    #[pyo3(signature = (entity, payload, shard = None))]
    fn route(
        &self,
        py: Python<'_>,
        entity: &str,
        payload: &[u8],
        shard: Option<&str>,
    ) -> PyResult<()> {
        guard(|| {
            let mut side = self.inner.enter(py)?;
            let r = match side.extractor.python_shard(py, entity, shard)? {
                Some(s) => side.driver.route_to_shard(&s, entity, payload.to_vec()),
                None => match side.driver.try_route(entity, payload.to_vec()) {
                    Ok(r) => r,
                    Err(refused) => {
                        drop(side);
                        self.inner.raised.take();
                        return Err(rejected(py, refused));
                    }
                },
            };
            drop(side);
            self.inner.raised.finish(r)
        })
    }

    fn receive(&self, py: Python<'_>, envelope: &Bound<'_, PyAny>) -> PyResult<()> {
        let env = envelope::from_py(envelope)?;
        self.call(py, |d| d.receive(env))
    }

    /// One input as the step API's document, at the clock's time; `shardline.RegionDriver`
    /// has a named method for each.
    fn handle(&self, py: Python<'_>, input: &Bound<'_, PyAny>) -> PyResult<()> {
        let input: RegionInput = values::from_py(input, "input")?;
        self.call(py, |d| d.input(input))
    }

    fn poll(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.call(py, |d| d.poll())
    }

    fn next_deadline(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.read(py, |r| r.next_deadline())
    }

    fn take_notices<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let notices = self.call(py, |d| Ok(d.take_notices()))?;
        notices.iter().map(|n| values::to_py(py, n)).collect()
    }

    /// The region's queries, as `Region._op`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        let side = self.inner.enter(py)?;
        ops::call(py, "RegionDriver", op, args, |a| {
            machines::region(side.driver.region(), a)
        })
    }

    fn shard_of(&self, py: Python<'_>, entity: &str) -> PyResult<String> {
        let side = self.inner.enter(py)?;
        side.extractor.shard_of(py, entity, side.driver.region())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |r| format!("RegionDriver({r:?})"))
    }
}
