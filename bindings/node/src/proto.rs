//! Step-API inputs and outputs as tagged plain objects (`{type: 'receive', envelope}`): the
//! core's JSON step form (`shardline_core::protocol::json`, shared with the C ABI), carried through
//! a JSON value.

use shardline_core::coordinator::{CoordinatorInput, CoordinatorOutput};
use shardline_core::region::{RegionInput, RegionOutput};

use crate::conv;
use crate::envelope;
use crate::error::{Fail, R};
use crate::js::{Js, V};

/// The input as a JSON value; undefined or null is a missing argument.
fn input_json(js: Js, v: V) -> R<serde_json::Value> {
    if js.is_nullish(v)? {
        return Err(conv::missing("input"));
    }
    conv::json(js, v, "input")
}

pub fn coordinator_input(js: Js, v: V) -> R<CoordinatorInput> {
    Ok(CoordinatorInput::from_json_value(
        &input_json(js, v)?,
        "input",
    )?)
}

/// The output as JavaScript (null for none).
pub fn coordinator_output(js: Js, o: Option<CoordinatorOutput>) -> R<V> {
    match o {
        Some(CoordinatorOutput::Send(e)) => envelope::send_js(js, &e, None),
        o => conv::ser(js, &o),
    }
}

pub fn region_input(js: Js, v: V) -> R<RegionInput> {
    Ok(RegionInput::from_json_value(&input_json(js, v)?, "input")?)
}

/// The output as JavaScript (null for none).
pub fn region_output(js: Js, o: Option<RegionOutput>) -> R<V> {
    match o {
        Some(RegionOutput::Send(e)) => envelope::send_js(js, &e, None),
        o => conv::ser(js, &o),
    }
}

pub fn fail_from_rejected(r: shardline_core::region::Rejected) -> Fail {
    Fail::state(r.to_string())
}
