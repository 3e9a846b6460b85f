//! The coordinator state machine, step API: feed inputs with the host's monotonic time,
//! carry out `poll_output()` in order, call `on_timeout` at `next_deadline()`.

use pyo3::prelude::*;
use pyo3::types::PyList;
use shardline_bind::machine_init;
use shardline_bind::ops::machines;
use shardline_core::coordinator::{Coordinator, CoordinatorInput, CoordinatorOutput};

use crate::busy::Guarded;
use crate::errors::{failure_err, Raised};
use crate::ops::{self, Answer, Rest};
use crate::strategy::strategy_from;
use crate::{envelope, values};

pub fn build(
    strategy: Option<&Bound<'_, PyAny>>,
    self_address: &str,
    config: Option<&Bound<'_, PyAny>>,
    raised: &Raised,
) -> PyResult<Coordinator> {
    let strategy = strategy_from(strategy, raised)?;
    let config = values::config(config, None, "config")?;
    machine_init::coordinator_named(strategy, (self_address, "self_address"), Some(&config))
        .map_err(failure_err)
}

fn output<'py>(py: Python<'py>, o: &CoordinatorOutput) -> PyResult<Bound<'py, PyAny>> {
    match o {
        CoordinatorOutput::Send(e) => envelope::send(py, e),
        o => values::to_py(py, o),
    }
}

#[pyclass(name = "Coordinator", module = "shardline._native", frozen, subclass)]
pub struct PyCoordinator {
    inner: Guarded<Coordinator>,
}

impl PyCoordinator {
    fn input(&self, py: Python<'_>, now_ms: u64, input: CoordinatorInput) -> PyResult<()> {
        self.inner.call(py, |c| c.handle(now_ms, input))
    }
}

#[pymethods]
impl PyCoordinator {
    /// `strategy`: a Strategy, a kind or configuration, or a custom strategy object.
    /// `self_address`: the node the coordinator runs on. `config`: CoordinatorConfig fields
    /// (camelCase or snake_case), Pekko's defaults otherwise.
    #[new]
    #[pyo3(signature = (strategy, self_address, config = None))]
    fn new(
        strategy: Option<&Bound<'_, PyAny>>,
        self_address: &str,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let raised = Raised::default();
        let c = build(strategy, self_address, config, &raised)?;
        Ok(PyCoordinator {
            inner: Guarded::new("Coordinator", c, raised),
        })
    }

    /// Starts contending for the lease (the first output asks for it).
    fn start(&self, py: Python<'_>, now_ms: u64) -> PyResult<()> {
        self.inner.call(py, |c| {
            c.start(now_ms);
            Ok(())
        })
    }

    fn receive(&self, py: Python<'_>, now_ms: u64, envelope: &Bound<'_, PyAny>) -> PyResult<()> {
        let env = envelope::from_py(envelope)?;
        self.input(py, now_ms, CoordinatorInput::Receive(env))
    }

    /// One input as the step API's document (`{"type": "leaseGranted", "token": 1,
    /// "validUntilMs": 60000}`, the form C and Node take); `shardline.Coordinator` has a named
    /// method for each.
    fn handle(&self, py: Python<'_>, now_ms: u64, input: &Bound<'_, PyAny>) -> PyResult<()> {
        let input: CoordinatorInput = values::from_py(input, "input")?;
        self.input(py, now_ms, input)
    }

    fn on_timeout(&self, py: Python<'_>, now_ms: u64) -> PyResult<()> {
        self.inner.call(py, |c| c.on_timeout(now_ms))
    }

    fn next_deadline(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.inner.read(py, |c| c.next_deadline())
    }

    /// The next output (a dict with a "type"), or None. Carry them out in order.
    fn poll_output<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let o = self.inner.call(py, |c| Ok(c.poll_output()))?;
        o.map(|o| output(py, &o)).transpose()
    }

    /// Every queued output, in order.
    fn drain_outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let all = self.inner.call(py, |c| Ok(c.drain_outputs()))?;
        envelope::list(py, &all, output)
    }

    /// The read-only queries (`shardline_bind::ops::machines::coordinator`); the
    /// `shardline` package names each one.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        let held = self.inner.enter(py)?;
        ops::call(py, "Coordinator", op, args, |a| {
            machines::coordinator(&held, a)
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.inner.read(py, |c| format!("{c:?}"))
    }
}
