//! The core's serde values straight to and from Python objects: one serde `Serializer` that
//! builds dicts, lists, strings, ints and `bytes`, and one `Deserializer` that reads them.
//!
//! Direct, with no JSON value or tree in between, since steps convert their outputs and inputs
//! here (the envelopes most of them carry take the shorter way of `envelope`). Both sides are
//! not human-readable, so a payload (the one `bytes` value of the protocol,
//! [`shardline_core::protocol::payload`]) is `bytes` in Python by its type, never by the name
//! of its key; a `str` payload going in is still read as the base64 text JSON carries.
//!
//! Hand-written rather than `pythonize`, the crate made for this: its newest release (0.29)
//! is built on pyo3 0.29, which cannot link beside this binding's 0.30, and it is
//! human-readable, which would make payloads base64 text. Struct field names are `&'static str`, so each is made a Python string once, interned
//! (a dict insert then reuses its hash), and kept for the life of the thread.

use std::cell::RefCell;
use std::fmt;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString,
    PyTuple,
};
use pyo3::BoundObject;
use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};
use serde_json::{Map, Value};
use shardline_bind::driver_host::Spelling;

use crate::errors::{invalid_argument, InternalError};

/// A conversion failure: a wrong value, a Python type no core value has (TypeError), or a
/// Python exception met on the way.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Message(String),
    #[error("{0}")]
    Type(String),
    #[error(transparent)]
    Python(#[from] PyErr),
}

impl Error {
    fn into_py(self, what: &str, path: &str) -> PyErr {
        let at = match path {
            "" | "." => what.to_owned(),
            _ => format!("{what}.{path}"),
        };
        match self {
            Error::Message(m) => invalid_argument(format!("{at}: {m}")),
            Error::Type(m) => PyTypeError::new_err(format!("{at}: {m}")),
            Error::Python(e) => e,
        }
    }
}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Python(InternalError::new_err(format!("serializing: {msg}")))
    }
}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Message(msg.to_string())
    }
}

type Result<T, E = Error> = std::result::Result<T, E>;

// ---- Rust -> Python -------------------------------------------------------------------------

/// A core value as Python objects; bytes become `bytes`.
pub fn to_py<'py, T: Serialize + ?Sized>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    KEYS.with(|keys| v.serialize(Writer { py, keys }))
        .map_err(|e| e.into_py("serializing", ""))
}

/// Interned Python strings by the address of the `&'static str` they were made from, hashed
/// with rustc-hash (SipHash cost more than the rest of a field's conversion).
type Keys = RefCell<FxHashMap<(usize, usize), Py<PyString>>>;

thread_local! {
    static KEYS: Keys = RefCell::default();
}

#[derive(Clone, Copy)]
struct Writer<'a, 'py> {
    py: Python<'py>,
    keys: &'a Keys,
}

impl<'a, 'py> Writer<'a, 'py> {
    /// A struct field or variant name as an interned Python string, made once per thread.
    fn key(&self, name: &'static str) -> Bound<'py, PyString> {
        // A `&'static str` is never freed, so its address and length identify its text.
        self.keys
            .borrow_mut()
            .entry((name.as_ptr() as usize, name.len()))
            .or_insert_with(|| PyString::intern(self.py, name).unbind())
            .bind(self.py)
            .clone()
    }

    /// `{variant: value}`, serde's external tagging.
    fn tagged(&self, variant: &'static str, value: Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        let d = PyDict::new(self.py);
        d.set_item(self.key(variant), value)?;
        Ok(d.into_any())
    }
}

macro_rules! prims {
    ($($method:ident: $ty:ty),*) => {$(
        fn $method(self, v: $ty) -> Result<Self::Ok> {
            Ok(v.into_pyobject(self.py).map_err(PyErr::from)?.into_any().into_bound())
        }
    )*};
}

impl<'a, 'py> ser::Serializer for Writer<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Items<'a, 'py>;
    type SerializeTuple = Items<'a, 'py>;
    type SerializeTupleStruct = Items<'a, 'py>;
    type SerializeTupleVariant = Items<'a, 'py>;
    type SerializeMap = Fields<'a, 'py>;
    type SerializeStruct = Fields<'a, 'py>;
    type SerializeStructVariant = Fields<'a, 'py>;

    fn is_human_readable(&self) -> bool {
        false
    }
    prims! {
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_f32: f32,
        serialize_f64: f64, serialize_char: char
    }
    fn serialize_str(self, v: &str) -> Result<Self::Ok> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Self::Ok> {
        Ok(PyBytes::new(self.py, v).into_any())
    }
    fn serialize_none(self) -> Result<Self::Ok> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Self::Ok> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Self::Ok> {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<Self::Ok> {
        Ok(self.key(v).into_any())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Self::Ok> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Self::Ok> {
        self.tagged(variant, v.serialize(self)?)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Items<'a, 'py>> {
        Ok(Items {
            w: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Items<'a, 'py>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Items<'a, 'py>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Items<'a, 'py>> {
        let mut items = self.serialize_seq(Some(len))?;
        items.variant = Some(variant);
        Ok(items)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Fields<'a, 'py>> {
        Ok(Fields {
            w: self,
            dict: PyDict::new(self.py),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'a, 'py>> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Fields<'a, 'py>> {
        let mut fields = self.serialize_map(None)?;
        fields.variant = Some(variant);
        Ok(fields)
    }
}

struct Items<'a, 'py> {
    w: Writer<'a, 'py>,
    items: Vec<Bound<'py, PyAny>>,
    variant: Option<&'static str>,
}

impl<'py> Items<'_, 'py> {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        self.items.push(v.serialize(self.w)?);
        Ok(())
    }

    fn finish(self) -> Result<Bound<'py, PyAny>> {
        let list = PyList::new(self.w.py, self.items)?.into_any();
        match self.variant {
            Some(v) => self.w.tagged(v, list),
            None => Ok(list),
        }
    }
}

macro_rules! items {
    ($($trait:ident :: $method:ident),*) => {$(
        impl<'py> ser::$trait for Items<'_, 'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
                self.push(v)
            }
            fn end(self) -> Result<Self::Ok> {
                self.finish()
            }
        }
    )*};
}
items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

struct Fields<'a, 'py> {
    w: Writer<'a, 'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyAny>>,
    variant: Option<&'static str>,
}

impl<'py> Fields<'_, 'py> {
    fn field<T: Serialize + ?Sized>(&mut self, name: &'static str, v: &T) -> Result<()> {
        Ok(self.dict.set_item(self.w.key(name), v.serialize(self.w)?)?)
    }

    fn finish(self) -> Result<Bound<'py, PyAny>> {
        match self.variant {
            Some(v) => self.w.tagged(v, self.dict.into_any()),
            None => Ok(self.dict.into_any()),
        }
    }
}

impl<'py> ser::SerializeMap for Fields<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<()> {
        self.key = Some(k.serialize(self.w)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<()> {
        let k = self
            .key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value came before its key"))?;
        Ok(self.dict.set_item(k, v.serialize(self.w)?)?)
    }
    fn end(self) -> Result<Self::Ok> {
        self.finish()
    }
}

macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl<'py> ser::$trait for Fields<'_, 'py> {
            type Ok = Bound<'py, PyAny>;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                k: &'static str,
                v: &T,
            ) -> Result<()> {
                self.field(k, v)
            }
            fn end(self) -> Result<Self::Ok> {
                self.finish()
            }
        }
    )*};
}
fields!(SerializeStruct, SerializeStructVariant);

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
    T::deserialize(Reader(obj.clone())).or_else(|_| {
        serde_path_to_error::deserialize(Reader(obj.clone())).map_err(|e| {
            let path = e.path().to_string();
            e.into_inner().into_py(what, &path)
        })
    })
}

/// As [`read`], with the name made only when the value is wrong (a call's arguments are read
/// on every call; formatting their names each time cost more than reading them).
pub fn read_named<T: DeserializeOwned>(
    obj: &Bound<'_, PyAny>,
    what: impl FnOnce() -> String,
) -> PyResult<T> {
    T::deserialize(Reader(obj.clone())).or_else(|_| read(obj, &what()))
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
        map.extend(from_py::<Map<String, Value>>(
            kw.as_any(),
            "keyword arguments",
        )?);
    }
    Ok(Value::Object(
        map.into_iter()
            .map(|(k, v)| (Spelling::Camel.spell(&k), v))
            .collect(),
    ))
}

struct Reader<'py>(Bound<'py, PyAny>);

pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

impl<'de> de::Deserializer<'de> for Reader<'_> {
    type Error = Error;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        let o = &self.0;
        if o.is_none() {
            v.visit_unit()
        } else if let Ok(b) = o.cast::<PyBool>() {
            v.visit_bool(b.is_true())
        } else if o.is_instance_of::<PyInt>() {
            if let Ok(i) = o.extract::<i64>() {
                v.visit_i64(i)
            } else if let Ok(u) = o.extract::<u64>() {
                v.visit_u64(u)
            } else {
                Err(Error::Message(format!("integer {o} does not fit 64 bits")))
            }
        } else if let Ok(f) = o.cast::<PyFloat>() {
            v.visit_f64(f.value())
        } else if let Ok(s) = o.cast::<PyString>() {
            v.visit_str(s.to_str()?)
        } else if let Ok(b) = o.cast::<PyBytes>() {
            v.visit_bytes(b.as_bytes())
        } else if let Ok(b) = o.cast::<PyByteArray>() {
            v.visit_byte_buf(b.to_vec())
        } else if let Ok(d) = o.cast::<PyDict>() {
            v.visit_map(Entries {
                len: d.len(),
                entries: d.iter(),
                value: None,
            })
        } else if o.is_instance_of::<PyList>()
            || o.is_instance_of::<PyTuple>()
            || o.is_instance_of::<PySet>()
            || o.is_instance_of::<PyFrozenSet>()
        {
            v.visit_seq(Elements(o.try_iter()?))
        } else {
            Err(Error::Type(format!(
                "cannot carry a value of type {} (expected None, bool, int, float, str, bytes, dict, \
                 list, tuple or set)",
                type_name(o)
            )))
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value> {
        if self.0.is_none() {
            v.visit_none()
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value> {
        v.visit_newtype_struct(self)
    }

    /// A unit variant is its name; any other variant a dict with the name as its one key.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value> {
        if let Ok(s) = self.0.cast::<PyString>() {
            return v.visit_enum(s.to_str()?.into_deserializer());
        }
        match self.0.cast::<PyDict>() {
            Ok(d) if d.len() == 1 => {
                let (k, value) = d.iter().next().expect("one entry");
                v.visit_enum(Variant(k, value))
            }
            _ => Err(Error::Message(format!(
                "expected a variant name or a dict with one key, got {}",
                type_name(&self.0)
            ))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Entries<'py> {
    entries: pyo3::types::dict::BoundDictIterator<'py>,
    value: Option<Bound<'py, PyAny>>,
    len: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some((k, value)) = self.entries.next() else {
            return Ok(None);
        };
        if !k.is_instance_of::<PyString>() {
            return Err(Error::Message(format!(
                "dictionary key {k} is not a string"
            )));
        }
        self.value = Some(value);
        seed.deserialize(Reader(k)).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self.value.take().expect("a value follows its key");
        seed.deserialize(Reader(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.len)
    }
}

struct Elements<'py>(Bound<'py, pyo3::types::PyIterator>);

impl<'de> de::SeqAccess<'de> for Elements<'_> {
    type Error = Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>> {
        match self.0.next() {
            None => Ok(None),
            Some(item) => seed.deserialize(Reader(item?)).map(Some),
        }
    }
}

struct Variant<'py>(Bound<'py, PyAny>, Bound<'py, PyAny>);

impl<'de, 'py> de::EnumAccess<'de> for Variant<'py> {
    type Error = Error;
    type Variant = Reader<'py>;

    fn variant_seed<S: de::DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Reader<'py>)> {
        Ok((seed.deserialize(Reader(self.0))?, Reader(self.1)))
    }
}

impl<'de> de::VariantAccess<'de> for Reader<'_> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        Ok(())
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, v: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(self, v)
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], v: V) -> Result<V::Value> {
        de::Deserializer::deserialize_map(self, v)
    }
}
