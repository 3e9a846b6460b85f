//! `replay(text)`: a recorded state-machine trace replayed on fresh machines, judged exactly
//! as `shardline replay` and every other binding judge it.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::conv;
use crate::error::boundary;
use crate::state::unknown;

/// Replays a state-machine trace (JSON lines, tests/traces/README.md) on fresh coordinator
/// and region machines and checks every output: `{steps, mismatches, first}`, `first` naming
/// the first step that differs or null. Throws INVALID_ARGUMENT for a trace that cannot be
/// read, naming the line and field.
#[napi(ts_args_type = "text: string", ts_return_type = "Replayed")]
pub fn replay<'a>(env: &'a Env, text: Unknown) -> Result<Unknown<'a>> {
    boundary(env, None, |js| {
        let text = conv::string(js, text.raw(), "text")?;
        let out = shardline_core::replay::replay_value(&text)?;
        Ok(unknown(js, conv::ser(js, &out)?))
    })
}
