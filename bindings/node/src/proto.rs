//! Step-API inputs and outputs as tagged plain objects (`{type: 'receive', envelope}`): the
//! core's JSON step form (`shardline_core::protocol::json`, shared with the C ABI), carried through
//! a JSON value.

use napi::Unknown;
use serde_json::Value;
use shardline_bind::step_output::StepOutput;

use crate::conv;
use crate::envelope;
use crate::error::R;
use crate::js::{Js, V};
use crate::state::unknown;

/// The input `parse` reads from a JSON value; undefined or null is a missing argument.
pub fn input<T>(js: Js, v: V, parse: fn(&Value, &str) -> shardline_core::Result<T>) -> R<T> {
    if js.is_nullish(v)? {
        return Err(conv::missing("input"));
    }
    Ok(parse(&conv::json(js, v, "input")?, "input")?)
}

/// The output as JavaScript (null for none), as a method returns it.
pub fn output<'a, O: StepOutput>(js: Js, o: Option<O>) -> R<Unknown<'a>> {
    let v = match o.as_ref().map(|o| (o, o.sent())) {
        Some((o, Some(e))) => envelope::send_js(js, o, e, None)?,
        _ => conv::ser(js, &o)?,
    };
    Ok(unknown(js, v))
}
