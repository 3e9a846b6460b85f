//! Outputs of the state machines as dicts, in the core's own serde form (the one C, Node and
//! the trace files use): `{"type": "lease", "request": {"type": "renew", "token": 5}}`.

use pyo3::prelude::*;

use crate::json;

pub fn to_list<'py, T: serde::Serialize>(
    py: Python<'py>,
    items: &[T],
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    items.iter().map(|o| json::ser_to_py(py, o)).collect()
}
