//! Outputs of the state machines as dicts. The core's own serde form of `Output::Lease` and
//! `Output::Notice` (and the region's `Notice`) nests one internally tagged enum in another,
//! which writes `"type"` twice; here the inner one gets its own key instead.

use pyo3::prelude::*;
use serde_json::{json, Value};
use shardline_core::coordinator::{LeaseRequest, Output};
use shardline_core::region::RegionOutput;

use crate::errors::InternalError;
use crate::json;

fn value<T: serde::Serialize>(v: &T) -> PyResult<Value> {
    serde_json::to_value(v).map_err(|e| InternalError::new_err(format!("serializing: {e}")))
}

pub fn coordinator_output(o: &Output) -> PyResult<Value> {
    Ok(match o {
        Output::Send(env) => json!({"type": "send", "envelope": value(env)?}),
        Output::Lease(req) => match req {
            LeaseRequest::Acquire => json!({"type": "lease", "request": "acquire"}),
            LeaseRequest::Renew { token } => {
                json!({"type": "lease", "request": "renew", "token": token.0})
            }
            LeaseRequest::Release { token } => {
                json!({"type": "lease", "request": "release", "token": token.0})
            }
        },
        Output::Notice(n) => json!({"type": "notice", "notice": value(n)?}),
        other => value(other)?,
    })
}

pub fn region_output(o: &RegionOutput) -> PyResult<Value> {
    Ok(match o {
        RegionOutput::Send(env) => json!({"type": "send", "envelope": value(env)?}),
        RegionOutput::Notice(n) => json!({"type": "notice", "notice": value(n)?}),
        other => value(other)?,
    })
}

pub fn to_list<'py, T>(
    py: Python<'py>,
    items: &[T],
    f: impl Fn(&T) -> PyResult<Value>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    items.iter().map(|o| json::to_py(py, &f(o)?)).collect()
}
