//! `AllocationState`: the allocation map plus cluster view the strategies read. Either owned
//! by Python, or a read-only view lent to a custom strategy's callback for its duration. Its
//! operations are `shardline_bind::ops::state`; `shardline.AllocationState` names them.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use shardline_bind::host_state::HostState;
use shardline_bind::ops::state as ops_state;
use shardline_core::model::AllocationState;

use crate::busy::park;
use crate::errors::failure_err;
use crate::ops::{self, Answer, Rest};

thread_local! {
    /// The view the next `AllocationState` made on this thread is (see [`PyAllocationState::lend`]).
    static LENDING: RefCell<Option<HostState>> = const { RefCell::new(None) };
}

/// The package's `AllocationState` class, whose instances callbacks receive.
static VIEW_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

#[pyclass(
    name = "AllocationState",
    module = "shardline._native",
    frozen,
    subclass
)]
pub struct PyAllocationState {
    state: HostState,
}

impl PyAllocationState {
    /// A view of `state` for a callback, an instance of `shardline.AllocationState`.
    ///
    /// # Safety
    /// As `HostState::lend`: `end_view` before the borrow of `state` ends.
    pub unsafe fn lend<'py>(
        py: Python<'py>,
        state: &AllocationState,
    ) -> PyResult<Bound<'py, PyAllocationState>> {
        let class = VIEW_CLASS.import(py, "shardline", "AllocationState")?;
        // SAFETY: passed on to our caller.
        let view = unsafe { HostState::lend(state) };
        // The class's constructor takes the view from here: it is the package's subclass,
        // which Rust cannot allocate directly.
        LENDING.with(|l| *l.borrow_mut() = Some(view));
        let made = class.call0();
        LENDING.with(|l| l.borrow_mut().take());
        Ok(made?.cast_into::<PyAllocationState>()?)
    }

    pub fn end_view(&self) {
        self.state.end_view()
    }

    /// Runs `f` on the state; strategies (which may call Python) can run here.
    pub fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&AllocationState) -> R) -> PyResult<R> {
        self.state.read(park(py), f).map_err(failure_err)
    }
}

#[pymethods]
impl PyAllocationState {
    /// `self_address`: the node deciding (Pekko's self address; local regions resolve to it).
    #[new]
    #[pyo3(signature = (self_address = None))]
    fn new(self_address: Option<&str>) -> PyResult<Self> {
        if let Some(view) = LENDING.with(|l| l.borrow_mut().take()) {
            return Ok(PyAllocationState { state: view });
        }
        let state = ops_state::new(self_address).map_err(failure_err)?;
        Ok(PyAllocationState {
            state: HostState::owned("AllocationState", state),
        })
    }

    /// Registered regions: one handle in, an integer out, the cheapest call the binding makes
    /// (the benchmarks bound allocate's extra cost by it), without `_op`'s conversions.
    fn _region_count(&self, py: Python<'_>) -> PyResult<usize> {
        self.read(py, AllocationState::region_count)
    }

    /// The operations of `shardline_bind::ops::state`.
    #[pyo3(signature = (op, *args))]
    fn _op<'py>(&self, py: Python<'py>, op: &str, args: &Rest<'py>) -> Answer<'py> {
        ops::call(py, "AllocationState", op, args, |a| {
            ops_state::call(&self.state, park(py), a)
        })
    }
}
