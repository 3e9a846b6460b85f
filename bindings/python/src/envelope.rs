//! The protocol's envelope, converted by its known keys where messages are many: commands in
//! and directives out of the coordinator, and entity messages (forwards) both ways. The
//! general serde walk (`values`) cost more than a coordinator step itself (an internally
//! tagged message is buffered whole before serde picks its variant); a region's own commands
//! and directives, a few per shard, still take it. Reading is a fast path only: whatever it
//! does not recognise exactly (a subclass, a `str` payload, JSON text, a wrong value) goes
//! the general way, which also explains what is wrong.

use std::hash::Hasher;
use std::sync::{Mutex, PoisonError};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString};
use rustc_hash::FxHasher;
use shardline_core::protocol::{
    Command, Directive, Endpoint, Envelope, Forward, Message, ShardHome, Stamp,
};

use crate::values;

/// A dict with interned keys, filled in order (the order serde writes).
macro_rules! dict {
    ($py:ident, $($k:literal => $v:expr),* $(,)?) => {{
        let d = PyDict::new($py);
        $(d.set_item(intern!($py, $k), $v)?;)*
        d
    }};
}

/// A message of an internally tagged enum: `{"type": kind, field: value, ...}`.
macro_rules! tagged {
    ($py:ident, $kind:literal $(, $k:literal => $v:expr)* $(,)?) => {
        dict!($py, "type" => intern!($py, $kind) $(, $k => $v)*)
    };
}

/// A machine's outputs as a list, each converted by `one` straight into it.
pub fn list<'py, O>(
    py: Python<'py>,
    all: &[O],
    one: impl Fn(Python<'py>, &O) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for o in all {
        list.append(one(py, o)?)?;
    }
    Ok(list)
}

/// Python strings for the ids outputs repeat (region ids on every reply, the shards asked
/// about most), made once and shared, as strings are immutable: making them cost a step
/// about as much as one of its dicts. Direct-mapped with a fixed number of slots, so the
/// memory it keeps stays bounded whatever ids come by. Under a mutex rather than per thread:
/// the GIL serialises its users anyway, and an uncontended lock costs less than a
/// thread-local lookup in a shared library.
static IDS: Mutex<Vec<Option<Id>>> = Mutex::new(Vec::new());

type Id = (Box<str>, Py<PyString>);

const ID_SLOTS: usize = 512;

fn id<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyString> {
    let mut h = FxHasher::default();
    h.write(text.as_bytes());
    let mut ids = IDS.lock().unwrap_or_else(PoisonError::into_inner);
    if ids.is_empty() {
        ids.resize_with(ID_SLOTS, || None);
    }
    let slot = &mut ids[h.finish() as usize % ID_SLOTS];
    match slot {
        Some((t, s)) if **t == *text => s.bind(py).clone(),
        _ => {
            let s = PyString::new(py, text);
            *slot = Some((text.into(), s.clone().unbind()));
            s
        }
    }
}

/// `{"type": "send", "envelope": ...}`, the output both machines send with.
pub fn send<'py>(py: Python<'py>, e: &Envelope) -> PyResult<Bound<'py, PyAny>> {
    Ok(tagged!(py, "send", "envelope" => to_py(py, e)?).into_any())
}

fn to_py<'py>(py: Python<'py>, e: &Envelope) -> PyResult<Bound<'py, PyDict>> {
    let message = match &e.message {
        Message::Command(c) => dict!(py, "command" => values::to_py(py, c)?),
        Message::Directive(d) => dict!(py, "directive" => directive(py, d)?),
        Message::Forward(f) => {
            let payload = PyBytes::new(py, &f.payload);
            let body = dict!(py, "shard" => f.shard.as_str(), "entity" => f.entity.as_str(), "payload" => payload);
            dict!(py, "forward" => body)
        }
    };
    let (from, to) = (endpoint(py, &e.from)?, endpoint(py, &e.to)?);
    Ok(dict!(py, "from" => from, "to" => to, "message" => message))
}

fn endpoint<'py>(py: Python<'py>, e: &Endpoint) -> PyResult<Bound<'py, PyAny>> {
    Ok(match e {
        Endpoint::Coordinator => intern!(py, "coordinator").clone().into_any(),
        Endpoint::Region(r) => dict!(py, "region" => id(py, r)).into_any(),
    })
}

fn stamp<'py>(py: Python<'py>, s: &Stamp) -> PyResult<Bound<'py, PyDict>> {
    Ok(dict!(py, "token" => s.token.0, "version" => s.version.0))
}

fn home<'py>(py: Python<'py>, h: &ShardHome) -> PyResult<Bound<'py, PyDict>> {
    let (shard, region) = (id(py, &h.shard), id(py, &h.region));
    Ok(dict!(py, "shard" => shard, "region" => region, "stamp" => stamp(py, &h.stamp)?))
}

fn directive<'py>(py: Python<'py>, d: &Directive) -> PyResult<Bound<'py, PyDict>> {
    Ok(match d {
        Directive::RegisterAck { token } => tagged!(py, "registerAck", "token" => token.0),
        Directive::ShardHome(h) => {
            let (shard, region, s) = (id(py, &h.shard), id(py, &h.region), stamp(py, &h.stamp)?);
            tagged!(py, "shardHome", "shard" => shard, "region" => region, "stamp" => s)
        }
        Directive::ShardHomes { token, homes } => {
            let homes = homes.iter().map(|h| home(py, h));
            let homes = PyList::new(py, homes.collect::<PyResult<Vec<_>>>()?)?;
            tagged!(py, "shardHomes", "token" => token.0, "homes" => homes)
        }
        Directive::HostShard {
            shard,
            stamp: s,
            entities,
        } => {
            let d = tagged!(py, "hostShard", "shard" => shard.as_str(), "stamp" => stamp(py, s)?);
            if !entities.is_empty() {
                d.set_item(
                    intern!(py, "entities"),
                    entities.iter().map(|e| e.as_str()).collect::<Vec<_>>(),
                )?;
            }
            d
        }
        Directive::BeginHandOff { shard, stamp: s } => {
            tagged!(py, "beginHandOff", "shard" => shard.as_str(), "stamp" => stamp(py, s)?)
        }
        Directive::HandOff { shard, stamp: s } => {
            tagged!(py, "handOff", "shard" => shard.as_str(), "stamp" => stamp(py, s)?)
        }
    })
}

// ---- Python -> Rust -------------------------------------------------------------------------

/// An envelope from a dict (or JSON text); an error names the field that is wrong.
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Envelope> {
    match obj.cast_exact::<PyDict>().ok().and_then(read::envelope) {
        Some(e) => Ok(e),
        None => values::from_py(obj, "envelope"),
    }
}

/// Reading by known keys; None for anything else.
mod read {
    use super::*;

    /// `$d[$key]` if present and exactly of type `$ty` (a subclass goes the general way).
    macro_rules! get {
        ($d:expr, $key:literal) => {
            $d.get_item(intern!($d.py(), $key)).ok().flatten()
        };
        ($d:expr, $key:literal as $ty:ty) => {
            get!($d, $key).and_then(|v| v.cast_into_exact::<$ty>().ok())
        };
    }

    fn text<T: for<'a> From<&'a str>>(v: Option<Bound<'_, PyString>>) -> Option<T> {
        Some(v?.to_str().ok()?.into())
    }

    /// A string field, as the `String` or id the message holds.
    macro_rules! text {
        ($d:expr, $key:literal) => {
            text(get!($d, $key as PyString))?
        };
    }

    fn int(v: Option<Bound<'_, PyInt>>) -> Option<u64> {
        v?.extract().ok()
    }

    fn stamp(d: &Bound<'_, PyDict>) -> Option<Stamp> {
        let s = get!(d, "stamp" as PyDict)?;
        Some(Stamp::new(
            int(get!(s, "token" as PyInt))?,
            int(get!(s, "version" as PyInt))?,
        ))
    }

    /// The one entry of a dict (an endpoint's or a message's variant): its name and value.
    fn variant<'py>(d: &Bound<'py, PyDict>) -> Option<(Bound<'py, PyString>, Bound<'py, PyAny>)> {
        let (k, v) = (d.len() == 1).then(|| d.iter().next()).flatten()?;
        Some((k.cast_into_exact().ok()?, v))
    }

    /// A variant's name (the key of its dict, or its "type").
    macro_rules! name {
        ($v:expr) => {
            $v.to_str().ok()?
        };
    }

    fn endpoint(v: Bound<'_, PyAny>) -> Option<Endpoint> {
        if let Ok(s) = v.cast_exact::<PyString>() {
            return (s.to_str().ok()? == "coordinator").then_some(Endpoint::Coordinator);
        }
        let (k, r) = variant(v.cast_exact::<PyDict>().ok()?)?;
        let r = r.cast_into_exact::<PyString>().ok()?;
        (name!(k) == "region").then_some(Endpoint::Region(r.to_str().ok()?.into()))
    }

    pub fn envelope(d: &Bound<'_, PyDict>) -> Option<Envelope> {
        let (kind, body) = variant(&get!(d, "message" as PyDict)?)?;
        let body = body.cast_into_exact::<PyDict>().ok()?;
        let message = match name!(kind) {
            "command" => Message::Command(command(&body)?),
            "directive" => Message::Directive(values::read(&body, "directive").ok()?),
            "forward" => Message::Forward(Forward {
                shard: text!(body, "shard"),
                entity: text!(body, "entity"),
                payload: get!(body, "payload" as PyBytes)?.as_bytes().to_vec(),
            }),
            _ => return None,
        };
        let (from, to) = (endpoint(get!(d, "from")?)?, endpoint(get!(d, "to")?)?);
        Some(Envelope { from, to, message })
    }

    fn command(d: &Bound<'_, PyDict>) -> Option<Command> {
        Some(match name!(get!(d, "type" as PyString)?) {
            // A registration with an offer goes the general way.
            "register" if d.len() == 2 => Command::Register {
                node: text!(d, "node"),
                offer: Default::default(),
            },
            "registerProxy" => Command::RegisterProxy {
                node: text!(d, "node"),
            },
            "getShardHome" => Command::GetShardHome {
                shard: text!(d, "shard"),
            },
            "shardStarted" => Command::ShardStarted {
                shard: text!(d, "shard"),
                stamp: stamp(d)?,
            },
            "beginHandOffAck" => Command::BeginHandOffAck {
                shard: text!(d, "shard"),
                stamp: stamp(d)?,
            },
            "shardStopped" => Command::ShardStopped {
                shard: text!(d, "shard"),
                stamp: stamp(d)?,
            },
            "gracefulShutdownReq" => Command::GracefulShutdownReq,
            "regionStopped" => Command::RegionStopped,
            "entityStarted" => Command::EntityStarted {
                shard: text!(d, "shard"),
                entity: text!(d, "entity"),
            },
            "entityPassivated" => Command::EntityPassivated {
                shard: text!(d, "shard"),
                entity: text!(d, "entity"),
            },
            _ => return None,
        })
    }
}
