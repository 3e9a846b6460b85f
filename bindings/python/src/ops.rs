//! Python's side of the operations called by name (`shardline_bind::ops`): every native
//! object's `_op(name, *args)` converts its arguments and its answer here, and the
//! `shardline` package gives each operation its Python name and shape.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use shardline_bind::ops::{Args, Reply, Tree};

use crate::errors::failure_err;
use crate::values;

/// A Python value, or the exception raised instead.
pub type Answer<'py> = PyResult<Bound<'py, PyAny>>;

/// The positional arguments after an operation's name, `_op(name, *args)`.
pub type Rest<'py> = Bound<'py, PyTuple>;

/// Runs `f` on the arguments of `kind.op(*args)` and answers with a Python value.
pub fn call<'py>(
    py: Python<'py>,
    kind: &'static str,
    op: &str,
    args: &Rest<'py>,
    f: impl FnOnce(Args<'_>) -> Reply,
) -> Answer<'py> {
    let values = args
        .iter()
        .enumerate()
        .map(|(i, a)| values::read_named::<Tree>(&a, || format!("{kind}.{op}: argument {}", i + 1)))
        .collect::<PyResult<Vec<_>>>()?;
    let answer = f(Args::new(kind, op, &values)).map_err(failure_err)?;
    values::to_py(py, &answer)
}
