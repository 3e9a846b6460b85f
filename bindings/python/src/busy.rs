//! Python's side of the shared handle rule (`shardline_bind::handle`): re-entry from a
//! callback raises `ReentrantCallError`, another thread waits, and it waits with the GIL
//! released so the thread holding the object can keep calling Python (waiting with the GIL
//! would deadlock: the holder's callbacks need it to finish).

use pyo3::prelude::*;
use shardline_bind::handle::{HandleCell, Held, Read};

use crate::errors::failure_err;

pub trait Enter<T> {
    /// Takes the object for one call.
    fn enter(&self, py: Python<'_>) -> PyResult<Held<'_, T>>;
    /// Takes the object for a read-only call (these may nest on one thread).
    fn enter_read(&self, py: Python<'_>) -> PyResult<Read<'_, T>>;
}

impl<T: Send> Enter<T> for HandleCell<T> {
    fn enter(&self, py: Python<'_>) -> PyResult<Held<'_, T>> {
        self.hold_with(|wait| py.detach(move || wait.run()))
            .map_err(failure_err)
    }

    fn enter_read(&self, py: Python<'_>) -> PyResult<Read<'_, T>> {
        self.read_with(|wait| py.detach(move || wait.run()))
            .map_err(failure_err)
    }
}
