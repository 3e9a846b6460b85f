//! Python objects <-> `serde_json::Value`, the shape every document of the core's protocol
//! (envelopes, outputs, snapshots, configurations, vectors) already has.
//!
//! Payloads are bytes in Python. Going in, a `bytes` value becomes the base64 text JSON carries
//! for one; coming out, core values are read from the bytes-aware tree of
//! [`shardline_bind::tree`], so exactly the values the core types as bytes become `bytes`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString,
    PyTuple,
};
use serde_json::{Map, Number, Value};
use shardline_bind::tree::{self, Tree};

use crate::errors::invalid_argument;

pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value_at(obj, &mut String::new())
}

fn to_value_at(obj: &Bound<'_, PyAny>, at: &mut String) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(invalid_argument(format!(
            "{}integer {obj} does not fit 64 bits",
            prefix(at)
        )));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| {
                invalid_argument(format!("{}{obj} is not a finite number", prefix(at)))
            });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(bytes_value(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(bytes_value(&b.to_vec()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let key = k.cast::<PyString>().map_err(|_| {
                invalid_argument(format!("{}dictionary key {k} is not a string", prefix(at)))
            })?;
            let key = key.to_str()?.to_owned();
            let len = at.len();
            at.push_str(if len == 0 { "" } else { "." });
            at.push_str(&key);
            let value = to_value_at(&v, at)?;
            at.truncate(len);
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>()
    {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            let len = at.len();
            at.push_str(&format!("[{i}]"));
            items.push(to_value_at(&item?, at)?);
            at.truncate(len);
        }
        return Ok(Value::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "{}cannot carry a {} (expected None, bool, int, float, str, bytes, dict, list, tuple or set)",
        prefix(at),
        obj.get_type().name()?
    )))
}

fn prefix(at: &str) -> String {
    if at.is_empty() {
        String::new()
    } else {
        format!("{at}: ")
    }
}

fn bytes_value(b: &[u8]) -> Value {
    Value::String(shardline_core::protocol::payload::to_text(b))
}

/// A core value's tree as Python objects; bytes become `bytes`.
pub fn tree_to_py<'py>(py: Python<'py>, t: &Tree) -> PyResult<Bound<'py, PyAny>> {
    Ok(match t {
        Tree::Null => py.None().into_bound(py),
        Tree::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Tree::Integer(i) => i128::from(*i).into_pyobject(py)?.into_any(),
        Tree::Float(f) => f.into_pyobject(py)?.into_any(),
        Tree::Text(s) => PyString::new(py, s).into_any(),
        Tree::Bytes(b) => PyBytes::new(py, b).into_any(),
        Tree::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(tree_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Tree::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                let key = tree::key_text(k).map_err(crate::errors::core_err)?;
                dict.set_item(key, tree_to_py(py, v)?)?;
            }
            dict.into_any()
        }
        Tree::Tag(_, inner) => tree_to_py(py, inner)?,
        other => {
            return Err(crate::errors::InternalError::new_err(format!(
                "serializing: no Python form for {other:?}"
            )))
        }
    })
}

/// Serializes a core value to Python.
pub fn ser_to_py<'py, T: serde::Serialize>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    tree_to_py(py, &tree::to_tree(v).map_err(crate::errors::core_err)?)
}

/// Reads a core value from Python (a dict, or a JSON string).
pub fn from_py<T: serde::de::DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    let value = document(obj)?;
    serde_json::from_value(value).map_err(|e| invalid_argument(format!("{what}: {e}")))
}

/// A dict as is, or a JSON string parsed.
pub fn document(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    match obj.cast::<PyString>() {
        Ok(s) => serde_json::from_str(s.to_str()?)
            .map_err(|e| invalid_argument(format!("not valid JSON: {e}"))),
        Err(_) => to_value(obj),
    }
}

/// A configuration: a dict or JSON string (or None for the defaults) plus keyword overrides;
/// snake_case keys are accepted and written as the camelCase the core reads.
pub fn config(
    base: Option<&Bound<'_, PyAny>>,
    overrides: Option<&Bound<'_, PyDict>>,
) -> PyResult<Value> {
    let mut map = match base.map(document).transpose()? {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(invalid_argument(format!(
                "expected a configuration object, got {other}"
            )))
        }
    };
    if let Some(kw) = overrides {
        if let Value::Object(extra) = to_value(kw.as_any())? {
            map.extend(extra);
        }
    }
    Ok(Value::Object(
        map.into_iter().map(|(k, v)| (camel_case(&k), v)).collect(),
    ))
}

pub fn camel_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
