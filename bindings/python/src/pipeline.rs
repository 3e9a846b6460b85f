//! `CoordinatorPipeline`: the coordinator for an asyncio host. It hands out each host call
//! (role, method, arguments) and takes its answer whenever it comes; `shardline.aio` makes the
//! calls and awaits them. What the calls are and how answers are read is
//! `shardline_bind::pipeline_host`'s, shared with every language.

use pyo3::prelude::*;
use shardline_bind::driver_host::Spelling;
use shardline_bind::ops::machines;
use shardline_bind::pipeline_host;
use shardline_bind::tree::Tree;
use shardline_core::coordinator::CoordinatorInput;
use shardline_core::host::{Completion, CoordinatorPipeline, Ticket};
use shardline_core::replay::CoordinatorStep;

use crate::busy::Guarded;
use crate::errors::Raised;
use crate::ops::{self, Answer, Rest};
use crate::values;
use crate::{coordinator, host};

/// One host call: `(ticket, role, method, args)`.
type Call<'py> = (u64, &'static str, &'static str, Vec<Bound<'py, PyAny>>);

#[pyclass(
    name = "CoordinatorPipeline",
    module = "shardline._native",
    frozen,
    subclass
)]
pub struct PyCoordinatorPipeline {
    inner: Guarded<CoordinatorPipeline>,
}

impl PyCoordinatorPipeline {
    fn step(&self, py: Python<'_>, now_ms: u64, step: CoordinatorStep) -> PyResult<()> {
        self.inner.call(py, |p| p.step(now_ms, step))
    }
}

#[pymethods]
impl PyCoordinatorPipeline {
    #[new]
    #[pyo3(signature = (strategy, self_address, config = None))]
    fn new(
        strategy: Option<&Bound<'_, PyAny>>,
        self_address: &str,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let raised = Raised::default();
        let c = coordinator::build(strategy, self_address, config, &raised)?;
        Ok(PyCoordinatorPipeline {
            inner: Guarded::new("CoordinatorPipeline", CoordinatorPipeline::new(c), raised),
        })
    }

    /// Checks host objects as the synchronous driver does (None, a missing method), so a
    /// wrong one fails at construction rather than at its first call.
    #[staticmethod]
    fn check_hosts(
        transport: Option<&Bound<'_, PyAny>>,
        lease: Option<&Bound<'_, PyAny>>,
        store: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let raised = Raised::default();
        host::transport(transport, &raised)?;
        host::lease(lease, &raised)?;
        host::store(store, &raised)?;
        Ok(())
    }

    fn start(&self, py: Python<'_>, now_ms: u64) -> PyResult<()> {
        self.step(py, now_ms, CoordinatorStep::Start)
    }

    fn on_timeout(&self, py: Python<'_>, now_ms: u64) -> PyResult<()> {
        self.step(py, now_ms, CoordinatorStep::Timeout)
    }

    /// One input as the step API's document (`{"type": "receive", "envelope": ...}`).
    fn handle(&self, py: Python<'_>, now_ms: u64, input: &Bound<'_, PyAny>) -> PyResult<()> {
        let input: CoordinatorInput = values::from_py(input, "input")?;
        self.step(py, now_ms, CoordinatorStep::Input(input))
    }

    /// The next host call, `(ticket, role, method, args)`, or None while there is none (the
    /// queue is empty, or waits behind a store write in flight).
    fn next_call<'py>(&self, py: Python<'py>, now_ms: u64) -> PyResult<Option<Call<'py>>> {
        let Some((ticket, call)) = self
            .inner
            .run(py, |p| pipeline_host::next_call(p, now_ms))?
        else {
            return Ok(None);
        };
        let args = call.args.iter().map(|a| values::to_py(py, a));
        let args = args.collect::<PyResult<_>>()?;
        Ok(Some((ticket.0, call.role.name, call.method, args)))
    }

    /// What call `ticket` returned (awaited already).
    fn answer(
        &self,
        py: Python<'_>,
        now_ms: u64,
        ticket: u64,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let value: Tree = values::read(value, "answer")?;
        self.inner.run(py, |p| {
            pipeline_host::answer(p, now_ms, Ticket(ticket), &value, Spelling::Snake)
        })
    }

    /// Call `ticket` raised; the caller keeps the exception.
    fn fail(&self, py: Python<'_>, now_ms: u64, ticket: u64) -> PyResult<()> {
        self.inner.call(py, |p| {
            p.complete(now_ms, Ticket(ticket), Completion::Failed)
        })
    }

    fn next_deadline(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.inner.read(py, |p| p.next_deadline())
    }

    /// Calls handed out and not answered yet.
    #[getter]
    fn in_flight(&self, py: Python<'_>) -> PyResult<usize> {
        self.inner.read(py, |p| p.in_flight())
    }

    /// Notices since the last call, as dicts with a "type".
    fn take_notices<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let notices = self.inner.call(py, |p| Ok(p.take_notices()))?;
        notices.iter().map(|n| values::to_py(py, n)).collect()
    }

    /// The coordinator's queries, as `Coordinator._op`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        let held = self.inner.enter(py)?;
        ops::call(py, "CoordinatorPipeline", op, args, |a| {
            machines::coordinator(held.coordinator(), a)
        })
    }
}
