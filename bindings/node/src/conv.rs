//! Converting between JavaScript values and the core's data: arguments with precise errors,
//! and the protocol types as plain objects (through their serde shapes).
//!
//! Payloads are bytes: they arrive as Buffers, TypedArrays or strings and leave as Buffers.
//! Going in, a byte array becomes the base64 text JSON carries for a payload; coming out, core
//! values are read from the bytes-aware tree of [`shardline_bind::tree`], so exactly the values
//! the core types as bytes become Buffers.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Number, Value};
use shardline_bind::tree::{self, Tree};

use crate::error::{Code, Fail, R};
use crate::js::{type_name, Js, Type, V};

/// 2^53: integers above it do not survive a JavaScript number.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

pub fn missing(name: &str) -> Fail {
    Fail::new(Code::NullPointer, format!("{name} is required"))
}

/// `name` is missing (undefined or null), or is not `expected`.
pub fn wrong(js: Js, v: V, name: &str, expected: &str) -> Fail {
    let got = match js.type_of(v) {
        Ok(Type::Undefined | Type::Null) => return missing(name),
        got => got.map(type_name).unwrap_or("an unknown value"),
    };
    Fail::invalid(format!("{name}: expected {expected}, got {got}"))
}

/// `obj[key]`, or `None` when it is undefined or null.
pub fn field(js: Js, obj: V, key: &str) -> R<Option<V>> {
    let v = js.get(obj, key)?;
    Ok(if js.is_nullish(v)? { None } else { Some(v) })
}

pub fn object(js: Js, v: V, name: &str) -> R<V> {
    match js.type_of(v)? {
        Type::Object => Ok(v),
        _ => Err(wrong(js, v, name, "an object")),
    }
}

pub fn string(js: Js, v: V, name: &str) -> R<String> {
    match js.type_of(v)? {
        Type::String => js.str_of(v),
        _ => Err(wrong(js, v, name, "a string")),
    }
}

pub fn opt_string(js: Js, v: V, name: &str) -> R<Option<String>> {
    if js.is_nullish(v)? {
        return Ok(None);
    }
    string(js, v, name).map(Some)
}

/// A non-negative safe integer (a number, or a bigint that fits in u64).
pub fn uint(js: Js, v: V, name: &str) -> R<u64> {
    // A number is read in one call (steps pass several); anything else is told apart below.
    if let Ok(n) = js.f64_of(v) {
        // NaN and the infinities have no whole part, so they fail too.
        if n.fract() == 0.0 && (0.0..=MAX_SAFE).contains(&n) {
            return Ok(n as u64);
        }
        let why = format!("{name}: expected a non-negative integer, got {n}");
        return Err(Fail::invalid(why));
    }
    match js.type_of(v)? {
        Type::BigInt => js.bigint_u64_of(v)?.ok_or_else(|| {
            Fail::invalid(format!(
                "{name}: the bigint does not fit in 64 bits unsigned"
            ))
        }),
        _ => Err(wrong(js, v, name, "a non-negative integer")),
    }
}

/// Shard ids are strings; actor-ts's numeric ids are accepted as their decimal form.
pub fn shard(js: Js, v: V, name: &str) -> R<String> {
    with_shard(js, v, name, |s| Ok(s.to_owned()))
}

/// [`shard`], lent to `f` (no heap copy of a short id).
pub fn with_shard<T>(js: Js, v: V, name: &str, f: impl FnOnce(&str) -> R<T>) -> R<T> {
    match js.type_of(v)? {
        Type::String => js.with_str(v, f),
        Type::Number => f(&uint(js, v, name)?.to_string()),
        _ => Err(wrong(
            js,
            v,
            name,
            "a shard id (string or non-negative integer)",
        )),
    }
}

pub fn strings<T: From<String>>(js: Js, v: V, name: &str) -> R<Vec<T>> {
    let items = iterable(js, v, name)?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, s)| string(js, s, &format!("{name}[{i}]")).map(T::from))
        .collect()
}

/// The items of an array, or of any iterable (a Set) via `Array.from`.
pub fn iterable(js: Js, v: V, name: &str) -> R<Vec<V>> {
    let arr = if js.is_array(v)? {
        v
    } else if js.type_of(v)? == Type::Object {
        let array = js.get(js.global()?, "Array")?;
        let from = js.get(array, "from")?;
        js.call(array, from, &[v])
            .map_err(|_| wrong(js, v, name, "an array or iterable"))?
    } else {
        return Err(wrong(js, v, name, "an array"));
    };
    let n = js.array_len(arr)?;
    (0..n).map(|i| js.index(arr, i)).collect()
}

/// Message bytes: a Buffer or TypedArray, or a string (sent as UTF-8).
pub fn bytes(js: Js, v: V, name: &str) -> R<Vec<u8>> {
    match js.type_of(v)? {
        Type::String => Ok(js.str_of(v)?.into_bytes()),
        Type::Object => js
            .bytes_of(v)?
            .ok_or_else(|| wrong(js, v, name, "a Buffer, Uint8Array or string")),
        _ => Err(wrong(js, v, name, "a Buffer, Uint8Array or string")),
    }
}

// ---- JSON-shaped data -----------------------------------------------------------------------

/// A plain value as JSON would see it: undefined and function properties are left out,
/// byte arrays become base64 text (the JSON form of a payload), bigints numbers.
pub fn json(js: Js, v: V, at: &str) -> R<Value> {
    json_at(js, v, 0).map_err(|why| match why {
        Why::Fail(f) => f,
        Why::Bad(place, what) => Fail::invalid(format!("{at}{place}: {what}")),
    })
}

/// What is wrong with a value, and where in it (`.key[2]`): the place is written out only
/// when something is wrong, since a step input is converted on every call.
enum Why {
    Fail(Fail),
    Bad(String, String),
}

impl From<Fail> for Why {
    fn from(f: Fail) -> Why {
        Why::Fail(f)
    }
}

impl Why {
    fn bad(what: String) -> Why {
        Why::Bad(String::new(), what)
    }

    /// The same trouble seen from one level further out, at `step`.
    fn at(self, step: std::fmt::Arguments) -> Why {
        match self {
            Why::Bad(place, what) => Why::Bad(format!("{step}{place}"), what),
            fail => fail,
        }
    }
}

fn json_at(js: Js, v: V, depth: usize) -> Result<Value, Why> {
    if depth > 64 {
        return Err(Why::bad("nested too deeply (a cycle?)".into()));
    }
    Ok(match js.type_of(v)? {
        Type::Undefined | Type::Null => Value::Null,
        Type::Boolean => Value::Bool(js.bool_of(v)?),
        Type::Number => {
            let n = js.f64_of(v)?;
            if n.fract() == 0.0 && n.abs() <= MAX_SAFE {
                Value::Number(Number::from(n as i64))
            } else {
                Value::Number(
                    Number::from_f64(n)
                        .ok_or_else(|| Why::bad(format!("{n} is not a finite number")))?,
                )
            }
        }
        Type::String => Value::String(js.str_of(v)?),
        Type::BigInt => Value::Number(Number::from(
            js.bigint_u64_of(v)?
                .ok_or_else(|| Why::bad("bigint out of range".into()))?,
        )),
        Type::Object => {
            if let Some(b) = js.bytes_of(v)? {
                Value::String(shardline_core::protocol::payload::to_text(&b))
            } else if js.is_array(v)? {
                let n = js.array_len(v)?;
                let mut out = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let item = json_at(js, js.index(v, i)?, depth + 1);
                    out.push(item.map_err(|w| w.at(format_args!("[{i}]")))?);
                }
                Value::Array(out)
            } else {
                let mut out = Map::new();
                for (k, kv) in js.keys(v)? {
                    let item = js.get_value(v, kv)?;
                    if matches!(js.type_of(item)?, Type::Undefined | Type::Function) {
                        continue;
                    }
                    let value = json_at(js, item, depth + 1);
                    let value = value.map_err(|w| w.at(format_args!(".{k}")))?;
                    out.insert(k, value);
                }
                Value::Object(out)
            }
        }
        t => {
            let what = type_name(t);
            return Err(Why::bad(format!("{what} cannot be converted to data")));
        }
    })
}

/// A core value's tree as a JavaScript value; bytes become Buffers.
fn tree_to_js(js: Js, t: &Tree) -> R<V> {
    match t {
        Tree::Null => js.null(),
        Tree::Bool(b) => js.to(*b),
        Tree::Integer(i) => js.number(i128::from(*i) as f64),
        Tree::Float(f) => js.number(*f),
        Tree::Text(s) => js.string(s),
        Tree::Bytes(b) => js.buffer(b),
        Tree::Array(items) => js.array_of(items, |i| tree_to_js(js, i)),
        Tree::Map(entries) => {
            let o = js.object()?;
            for (k, item) in entries {
                let item = tree_to_js(js, item)?;
                match k {
                    Tree::Text(k) => js.set(o, k, item)?,
                    k => js.set(o, &tree::key_text(k)?, item)?,
                }
            }
            Ok(o)
        }
        Tree::Tag(_, inner) => tree_to_js(js, inner),
        other => Err(Fail::new(
            Code::Internal,
            format!("serializing: no JavaScript form for {other:?}"),
        )),
    }
}

/// A core value as a JavaScript value. An object or array without bytes in it goes as JSON
/// text through `JSON.parse`, which builds objects far faster than setting their properties
/// one call at a time (a step's outputs are converted on every call); with bytes, the tree is
/// walked so that they become Buffers.
pub fn ser<T: Serialize>(js: Js, v: &T) -> R<V> {
    tree_js(js, &tree::to_tree(v)?)
}

/// A tree as a JavaScript value (see [`ser`]).
pub fn tree_js(js: Js, t: &Tree) -> R<V> {
    // A plain value is one Node-API call; only objects and arrays are worth a JSON.parse.
    if tree::has_bytes(t) || !matches!(t, Tree::Array(_) | Tree::Map(_)) {
        return tree_to_js(js, t);
    }
    let text = serde_json::to_string(t)
        .map_err(|e| Fail::new(Code::Internal, format!("serializing: {e}")))?;
    let json = js.get(js.global()?, "JSON")?;
    let parse = js.get(json, "parse")?;
    Ok(js.call(json, parse, &[js.string(&text)?])?)
}

/// A JavaScript value as a tree, as [`json`] reads it.
pub fn tree_of(js: Js, v: V, at: &str) -> R<Tree> {
    Ok(tree::to_tree(&json(js, v, at)?)?)
}

pub fn de<T: DeserializeOwned>(js: Js, v: V, what: &str) -> R<T> {
    if js.is_nullish(v)? {
        return Err(missing(what));
    }
    let value = json(js, v, what)?;
    serde_json::from_value(value).map_err(|e| Fail::invalid(format!("{what}: {e}")))
}

/// The `config` option of `o` as JSON, if given.
pub fn config(js: Js, o: V) -> R<Option<serde_json::Value>> {
    let c = field(js, o, "config")?;
    c.map(|c| json(js, c, "options.config")).transpose()
}
