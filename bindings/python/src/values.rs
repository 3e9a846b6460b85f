//! The core's serde values straight to and from Python objects: dicts, lists, strings, ints
//! and `bytes`, through the shared converter (`shardline_bind::native`), which this module
//! tells how to make and look at Python objects.
//!
//! Direct, with no JSON value or tree in between, since steps convert their outputs and inputs
//! here (the envelopes most of them carry take the shorter way of `envelope`). A `str` payload
//! going in is still read as the base64 text JSON carries.
//!
//! Not `pythonize`, the crate made for this: its newest release (0.29) is built on pyo3 0.29,
//! which cannot link beside this binding's 0.30, and it is human-readable, which would make
//! payloads base64 text. Struct field names are `&'static str`, so each is made a Python
//! string once, interned (a dict insert then reuses its hash), and kept for the life of the
//! thread.

use std::cell::RefCell;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString,
    PyTuple,
};
use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::ser::Serialize;
use serde_json::{Map, Value};
use shardline_bind::configuration;
use shardline_bind::native::{self, Reader, Seen};

use crate::errors::{failure_err, invalid_argument, InternalError};

/// A conversion failure: a wrong value, a Python type no core value has (TypeError), or a
/// Python exception met on the way.
type Error = native::Error<PyErr>;

type Result<T, E = Error> = std::result::Result<T, E>;

fn raise(e: Error, what: &str, path: &str) -> PyErr {
    let at = match path {
        "" | "." => what.to_owned(),
        _ => format!("{what}.{path}"),
    };
    match e {
        Error::Message(m) => invalid_argument(format!("{at}: {m}")),
        Error::Type(m) => PyTypeError::new_err(format!("{at}: {m}")),
        Error::Serialize(m) => InternalError::new_err(format!("serializing: {m}")),
        Error::Host(e) => e,
    }
}

// ---- Rust -> Python -------------------------------------------------------------------------

/// A core value as Python objects; bytes become `bytes`.
pub fn to_py<'py, T: Serialize + ?Sized>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    KEYS.with(|keys| native::write(Writer { py, keys }, v))
        .map_err(|e| raise(e, "serializing", ""))
}

/// Interned Python strings by the address of the `&'static str` they were made from, hashed
/// with rustc-hash (SipHash cost more than the rest of a field's conversion).
type Keys = RefCell<FxHashMap<(usize, usize), Py<PyString>>>;

thread_local! {
    static KEYS: Keys = RefCell::default();
}

/// Python's side of [`native::Build`].
#[derive(Clone, Copy)]
struct Writer<'a, 'py> {
    py: Python<'py>,
    keys: &'a Keys,
}

impl<'py> native::Build for Writer<'_, 'py> {
    type Obj = Bound<'py, PyAny>;
    type Map = Bound<'py, PyDict>;
    type Err = PyErr;

    fn null(self) -> PyResult<Self::Obj> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn bool(self, v: bool) -> PyResult<Self::Obj> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    fn i64(self, v: i64) -> PyResult<Self::Obj> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn u64(self, v: u64) -> PyResult<Self::Obj> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn f64(self, v: f64) -> PyResult<Self::Obj> {
        Ok(v.into_pyobject(self.py)?.into_any())
    }
    fn str(self, v: &str) -> PyResult<Self::Obj> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn bytes(self, v: &[u8]) -> PyResult<Self::Obj> {
        Ok(PyBytes::new(self.py, v).into_any())
    }
    /// An interned Python string, made once per thread.
    fn name(self, name: &'static str) -> PyResult<Self::Obj> {
        // A `&'static str` is never freed, so its address and length identify its text.
        let mut keys = self.keys.borrow_mut();
        let key = keys
            .entry((name.as_ptr() as usize, name.len()))
            .or_insert_with(|| PyString::intern(self.py, name).unbind());
        Ok(key.bind(self.py).clone().into_any())
    }
    fn list(self, items: Vec<Self::Obj>) -> PyResult<Self::Obj> {
        Ok(PyList::new(self.py, items)?.into_any())
    }
    fn map(self) -> PyResult<Self::Map> {
        Ok(PyDict::new(self.py))
    }
    fn insert(self, map: &mut Self::Map, k: Self::Obj, v: Self::Obj) -> PyResult<()> {
        map.set_item(k, v)
    }
    fn done(self, map: Self::Map) -> Self::Obj {
        map.into_any()
    }
}

// ---- Python -> Rust -------------------------------------------------------------------------

/// Reads a core value from Python objects, or from JSON text when given a `str`. An error
/// names `what` and the path of the field that is wrong: `envelope.message.command: ...`.
pub fn from_py<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    if let Ok(s) = obj.cast::<PyString>() {
        return shardline_core::protocol::json::from_str(s.to_str()?, what)
            .map_err(crate::errors::core_err);
    }
    read(obj, what)
}

/// Reads a core value from Python objects (a `str` is a string here, not JSON text).
pub fn read<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    // The fast path tracks no path; a failing value is read again to find where it broke.
    native::read(Obj(obj.clone())).or_else(|_| {
        serde_path_to_error::deserialize(Reader(Obj(obj.clone()))).map_err(|e| {
            let path = e.path().to_string();
            raise(e.into_inner(), what, &path)
        })
    })
}

/// As [`read`], with the name made only when the value is wrong (a call's arguments are read
/// on every call; formatting their names each time cost more than reading them).
pub fn read_named<T: DeserializeOwned>(
    obj: &Bound<'_, PyAny>,
    what: impl FnOnce() -> String,
) -> PyResult<T> {
    native::read(Obj(obj.clone())).or_else(|_| read(obj, &what()))
}

/// A document as a JSON value: a dict (or list) as is, a `str` parsed as JSON text.
pub fn document(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    match obj.cast::<PyString>() {
        Ok(s) => serde_json::from_str(s.to_str()?)
            .map_err(|e| invalid_argument(format!("not valid JSON: {e}"))),
        Err(_) => from_py(obj, "document"),
    }
}

/// A configuration: a dict or JSON string (or None for the defaults) plus keyword overrides;
/// snake_case keys are accepted and written as the camelCase the core reads. `what` names the
/// argument in an error.
pub fn config(
    base: Option<&Bound<'_, PyAny>>,
    overrides: Option<&Bound<'_, PyDict>>,
    what: &str,
) -> PyResult<Value> {
    let base = base.map(document).transpose()?.unwrap_or(Value::Null);
    let overrides = match overrides {
        Some(kw) => from_py::<Map<String, Value>>(kw.as_any(), "keyword arguments")?,
        None => Map::new(),
    };
    configuration::merged(base, overrides, what).map_err(failure_err)
}

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// Python's side of [`native::Look`].
struct Obj<'py>(Bound<'py, PyAny>);

impl<'py> native::Look for Obj<'py> {
    type Err = PyErr;
    type Entries = Entries<'py>;
    type Items = Items<'py>;
    const MAP: &'static str = "dict";

    fn look(&self) -> Result<Seen<'_, Self>> {
        let o = &self.0;
        Ok(if o.is_none() {
            Seen::Null
        } else if let Ok(b) = o.cast::<PyBool>() {
            Seen::Bool(b.is_true())
        } else if o.is_instance_of::<PyInt>() {
            if let Ok(i) = o.extract::<i64>() {
                Seen::I64(i)
            } else if let Ok(u) = o.extract::<u64>() {
                Seen::U64(u)
            } else {
                return Err(Error::Message(format!("integer {o} does not fit 64 bits")));
            }
        } else if let Ok(f) = o.cast::<PyFloat>() {
            Seen::F64(f.value())
        } else if let Ok(s) = o.cast::<PyString>() {
            Seen::Str(s.to_cow()?)
        } else if let Ok(b) = o.cast::<PyBytes>() {
            Seen::Bytes(b.as_bytes().into())
        } else if let Ok(b) = o.cast::<PyByteArray>() {
            Seen::Bytes(b.to_vec().into())
        } else if let Ok(d) = o.cast::<PyDict>() {
            Seen::Map(d.len(), Entries(d.iter()))
        } else if o.is_instance_of::<PyList>()
            || o.is_instance_of::<PyTuple>()
            || o.is_instance_of::<PySet>()
            || o.is_instance_of::<PyFrozenSet>()
        {
            Seen::Seq(Items(o.try_iter()?))
        } else {
            return Err(Error::Type(format!(
                "cannot carry a value of type {} (expected None, bool, int, float, str, bytes, dict, \
                 list, tuple or set)",
                type_name(o)
            )));
        })
    }

    fn is_null(&self) -> bool {
        self.0.is_none()
    }

    fn type_name(&self) -> String {
        type_name(&self.0)
    }
}

struct Entries<'py>(pyo3::types::dict::BoundDictIterator<'py>);

impl<'py> Iterator for Entries<'py> {
    type Item = Result<(Obj<'py>, Obj<'py>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let (k, v) = self.0.next()?;
        Some(if k.is_instance_of::<PyString>() {
            Ok((Obj(k), Obj(v)))
        } else {
            Err(Error::Message(format!(
                "dictionary key {k} is not a string"
            )))
        })
    }
}

struct Items<'py>(Bound<'py, pyo3::types::PyIterator>);

impl<'py> Iterator for Items<'py> {
    type Item = Result<Obj<'py>>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.0.next()?.map(Obj).map_err(Error::Host))
    }
}
