//! Outputs of the state machines as dicts, in the core's own serde form (the one C, Node and
//! the trace files use): `{"type": "lease", "request": {"type": "renew", "token": 5}}`.

use pyo3::prelude::*;
use serde_json::Value;
use shardline_core::coordinator::Output;
use shardline_core::region::RegionOutput;

use crate::errors::InternalError;
use crate::json;

fn value<T: serde::Serialize>(v: &T) -> PyResult<Value> {
    serde_json::to_value(v).map_err(|e| InternalError::new_err(format!("serializing: {e}")))
}

pub fn coordinator_output(o: &Output) -> PyResult<Value> {
    value(o)
}

pub fn region_output(o: &RegionOutput) -> PyResult<Value> {
    value(o)
}

pub fn to_list<'py, T>(
    py: Python<'py>,
    items: &[T],
    f: impl Fn(&T) -> PyResult<Value>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    items.iter().map(|o| json::to_py(py, &f(o)?)).collect()
}
