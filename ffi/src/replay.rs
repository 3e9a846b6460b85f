//! `shardline_replay`: a recorded state-machine trace in, the verdict of fresh machines out,
//! exactly as every binding and `shardline replay` judge it.

use std::ffi::c_char;

use shardline_core::replay::replay_json;

use crate::args::{self, Out};
use crate::boundary::guard;
use crate::status::shardline_status;
use crate::string::to_c;

/// Replays a trace (JSON lines, tests/traces/README.md, as `shardline sim --record` writes
/// it) on fresh coordinator and region machines and checks that every output is the same.
///
/// @param trace the trace's text.
/// @param out_json receives `{"steps":N,"mismatches":M,"first":null|{..}}`; `first` names the
///        first step whose outputs, deadline or error differ (step, line, machine, now, input,
///        expected, actual). A mismatch is a result, not a failure.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for a trace that cannot be read (not JSON,
///         another format version, an unknown machine, a malformed input; the message names
///         the line and field).
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `trace` is a NUL-terminated string; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_replay(
    trace: *const c_char,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(trace, "trace") }?;
        let out = Out::new(out_json, "out_json")?;
        let result = to_c(&replay_json(text)?)?;
        // SAFETY: caller's contract.
        unsafe { out.write(result.into_raw()) };
        Ok(())
    })
}
