//! Envelopes in a step, as flat fields ([`FlatEnvelope`]): `lib/envelope.cjs` reads and builds
//! the nested objects in JavaScript and passes or takes the fields as arguments. A Node-API
//! property read or write costs about as much as a JavaScript function call, and an envelope
//! has a dozen properties, so walking it from here cost most of a coordinator step.

use std::cell::Cell;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use shardline_bind::flat_envelope::{FlatEnvelope, KINDS};
use shardline_core::protocol::{Envelope, ShardHome};

use shardline_bind::step_output::StepOutput;
use shardline_core::coordinator::CoordinatorInput;
use shardline_core::region::RegionInput;

use crate::backends::instance;
use crate::conv;
use crate::coordinator::{Coordinator, CoordinatorDriver};
use crate::error::{boundary, Fail, R};
use crate::js::{Js, Type, V};
use crate::region::{Region, RegionDriver};

thread_local! {
    /// The JavaScript function that builds a `send` output from flat fields, per environment
    /// (each worker thread loads the module again).
    static BUILDER: Cell<Option<(sys::napi_env, sys::napi_ref)>> = const { Cell::new(None) };
}

/// Registered by `lib/envelope.cjs` when the module loads.
#[napi(js_name = "_setSendBuilder", skip_typescript)]
pub fn set_send_builder(env: &Env, f: Unknown) -> Result<()> {
    boundary(env, None, |js| {
        if js.type_of(f.raw())? != Type::Function {
            return Err(Fail::invalid("the send builder must be a function"));
        }
        let r = js.keep_object(f.raw())?;
        BUILDER.set(Some((js.env, r)));
        Ok(())
    })
}

/// `{type: 'send', envelope}` for `e`, built by the registered function from
/// `(into, kind, from, to, shard, entity, region, node, token, version, extra)`, which also
/// pushes it onto the array `into` if there is one; text a kind does not use, and the
/// coordinator as `from` or `to`, is undefined.
pub fn send_js<O: StepOutput>(js: Js, o: &O, e: &Envelope, into: Option<V>) -> R<V> {
    let builder = match BUILDER.get() {
        Some((env, r)) if env == js.env => js.deref_object(r)?,
        _ => return Err(Fail::state("lib/envelope.cjs did not register its builder")),
    };
    let Some(f) = FlatEnvelope::of(e) else {
        // Load reports and offers have no flat form; they are rare, so serde builds them.
        let o = conv::ser(js, o)?;
        if let Some(into) = into {
            js.set_index(into, js.array_len(into)?, o)?;
        }
        return Ok(o);
    };
    let text = |t: &str| {
        if t.is_empty() {
            js.undefined()
        } else {
            js.string(t)
        }
    };
    let extra = match KINDS[f.kind] {
        "forward" => js.buffer(f.payload)?,
        "hostShard" => js.strings(f.entities)?,
        "shardHomes" => conv::ser(js, &f.homes)?,
        _ => js.undefined()?,
    };
    let args = [
        into.map_or_else(|| js.undefined(), Ok)?,
        js.number(f.kind as f64)?,
        text(f.from)?,
        text(f.to)?,
        text(f.shard)?,
        text(f.entity)?,
        text(f.region)?,
        text(f.node)?,
        js.number(f.token as f64)?,
        js.number(f.version as f64)?,
        extra,
    ];
    Ok(js.call(js.undefined()?, builder, &args)?)
}

/// `_receive(target, nowMs, ...fields)`: `target.handle(nowMs, {type: 'receive', envelope})`
/// for a Coordinator or Region, `target.receive(envelope)` for a driver (`nowMs` unused), with
/// the envelope as the fields of [`send_js`]. One function rather than a method per class:
/// the class is told by its type tag.
#[napi(js_name = "_receive", skip_typescript)]
#[allow(clippy::too_many_arguments)]
pub fn receive(
    env: &Env,
    target: Unknown,
    now_ms: Unknown,
    a0: Unknown,
    a1: Unknown,
    a2: Unknown,
    a3: Unknown,
    a4: Unknown,
    a5: Unknown,
    a6: Unknown,
    a7: Unknown,
    a8: Unknown,
    a9: Unknown,
) -> Result<()> {
    let (t, a) = (target.raw(), [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9]);
    let js = Js::new(env.raw());
    let now = |js| conv::uint(js, now_ms.raw(), "nowMs");
    if let Some(c) = instance::<Coordinator>(js, t) {
        return c.inner.call_on(env, t, |js, c| {
            Ok(c.handle(now(js)?, CoordinatorInput::Receive(from_args(js, a)?))?)
        });
    }
    if let Some(r) = instance::<Region>(js, t) {
        return r.inner.call_on(env, t, |js, r| {
            let input = RegionInput::Receive(from_args(js, a)?);
            r.machine.handle(now(js)?, input);
            Ok(())
        });
    }
    if let Some(d) = instance::<CoordinatorDriver>(js, t) {
        return d
            .inner
            .call_on(env, t, |js, d| Ok(d.receive(from_args(js, a)?)?));
    }
    if let Some(d) = instance::<RegionDriver>(js, t) {
        return d
            .inner
            .call_on(env, t, |js, d| Ok(d.machine.receive(from_args(js, a)?)?));
    }
    boundary(env, None, |_| -> R<()> {
        Err(Fail::invalid(
            "_receive: not a Coordinator, Region or driver",
        ))
    })
}

/// `_drain(target)`: every output a Coordinator or Region has queued, in the order they must
/// be carried out (its `drainOutputs()`).
#[napi(js_name = "_drain", skip_typescript)]
pub fn drain(env: &Env, target: Unknown, into: Unknown) -> Result<()> {
    let (t, into, js) = (target.raw(), into.raw(), Js::new(env.raw()));
    if let Some(c) = instance::<Coordinator>(js, t) {
        return c
            .inner
            .query(env, |js, c| outputs(js, &c.drain_outputs(), into));
    }
    if let Some(r) = instance::<Region>(js, t) {
        return r
            .inner
            .query(env, |js, r| outputs(js, &r.machine.drain_outputs(), into));
    }
    boundary(env, None, |_| {
        Err(Fail::invalid("_drain: not a Coordinator or Region"))
    })
}

/// Sets `outputs` as JavaScript into the array `into`: a send output is pushed by the
/// builder, the others are set at their index.
fn outputs<O: StepOutput>(js: Js, outputs: &[O], into: V) -> R<()> {
    for (i, o) in outputs.iter().enumerate() {
        match o.sent() {
            Some(e) => send_js(js, o, e, Some(into)).map(drop)?,
            None => js.set_index(into, i as u32, conv::ser(js, o)?)?,
        }
    }
    Ok(())
}

/// The envelope of the arguments `envelope.cjs` flattened one into (the order of [`send_js`]).
fn from_args(js: Js, a: [Unknown; 10]) -> R<Envelope> {
    let kind = conv::uint(js, a[0].raw(), "kind")? as usize;
    // A string is read in one call (there are six fields, on every step); the rest are told
    // apart by type.
    let text = |i: usize, name: &str| -> R<String> {
        let v = a[i].raw();
        if let Ok(s) = js.str_of(v) {
            return Ok(s);
        }
        match js.type_of(v)? {
            Type::Undefined | Type::Null => Ok(String::new()),
            _ => conv::string(js, v, name),
        }
    };
    let extra = a[9].raw();
    let (mut payload, mut entities, mut homes) = (Vec::new(), Vec::new(), Vec::<ShardHome>::new());
    match KINDS.get(kind) {
        Some(&"forward") => payload = conv::bytes(js, extra, "payload")?,
        Some(&"hostShard") if !js.is_nullish(extra)? => {
            entities = conv::strings(js, extra, "entities")?
        }
        Some(&"shardHomes") => homes = conv::de(js, extra, "homes")?,
        _ => {}
    }
    let (from, to) = (text(1, "from")?, text(2, "to")?);
    let (shard, entity) = (text(3, "shard")?, text(4, "entity")?);
    let (region, node) = (text(5, "region")?, text(6, "node")?);
    let flat = FlatEnvelope {
        from: &from,
        to: &to,
        kind,
        shard: &shard,
        entity: &entity,
        region: &region,
        node: &node,
        token: conv::uint(js, a[7].raw(), "token")?,
        version: conv::uint(js, a[8].raw(), "version")?,
        payload: &payload,
        entities: &entities,
        homes: &homes,
    };
    Ok(flat.envelope()?)
}
