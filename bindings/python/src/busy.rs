//! Python's side of the shared handle rule (`shardline_bind::handle`): re-entry from a
//! callback raises `ReentrantCallError`, another thread waits, and it waits with the GIL
//! released so the thread holding the object can keep calling Python (waiting with the GIL
//! would deadlock: the holder's callbacks need it to finish).

use pyo3::prelude::*;
use shardline_bind::handle::{HandleCell, Held, Wait};
use shardline_bind::Failure;

use crate::errors::{failure_err, guard, Raised};

/// Waits for a handle with the GIL released.
pub fn park<T: Send>(py: Python<'_>) -> impl FnOnce(Wait<'_, T>) -> Result<(), Failure> + '_ {
    move |wait| py.detach(move || wait.run())
}

pub trait Enter<T> {
    /// Takes the object for one call.
    fn enter(&self, py: Python<'_>) -> PyResult<Held<'_, T>>;
}

impl<T: Send> Enter<T> for HandleCell<T> {
    fn enter(&self, py: Python<'_>) -> PyResult<Held<'_, T>> {
        self.hold_with(park(py)).map_err(failure_err)
    }
}

/// An object under the handle rule, with the slot its callbacks' exceptions wait in.
pub struct Guarded<T> {
    cell: HandleCell<T>,
    pub raised: Raised,
}

impl<T: Send> Guarded<T> {
    pub fn new(what: &'static str, value: T, raised: Raised) -> Guarded<T> {
        Guarded {
            cell: HandleCell::new(what, value),
            raised,
        }
    }

    /// Runs one core call; an exception a callback raised during it wins over whatever the
    /// core made of it.
    pub fn call<R>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut T) -> shardline_core::Result<R>,
    ) -> PyResult<R> {
        self.run(py, f)
    }

    /// As `call`, for bodies failing with a shared `Failure`.
    pub fn run<R, E: Into<Failure>>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut T) -> Result<R, E>,
    ) -> PyResult<R> {
        guard(|| {
            let mut held = self.cell.enter(py)?;
            let r = f(&mut held);
            drop(held);
            self.raised.finish(r)
        })
    }

    pub fn read<R>(&self, py: Python<'_>, f: impl FnOnce(&T) -> R) -> PyResult<R> {
        Ok(f(&*self.cell.enter(py)?))
    }

    pub fn enter(&self, py: Python<'_>) -> PyResult<Held<'_, T>> {
        self.cell.enter(py)
    }
}
