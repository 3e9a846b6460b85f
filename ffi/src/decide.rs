//! `shardline_decide`: conformance vectors in, decisions out, exactly as every binding decides.

use std::ffi::c_char;

use shardline_core::decide::decide_json;

use crate::args::{self, Out};
use crate::boundary::guard;
use crate::status::shardline_status;
use crate::string::to_c;

/// Decides conformance vectors (tests/vectors/README.md): one vector object, or an array.
///
/// @param vectors_json a vector object or an array of vectors.
/// @param explain when true, each result also carries an "explanation".
/// @param out_json receives the result in the vectors' `expect` shape: an object for an object,
///        an array for an array. A strategy finding no candidates is a result
///        (`{"error": "no-candidates"}`), not a failure.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT for invalid JSON or a malformed vector (the
///         message names the vector and field); SHARDLINE_STATUS_INVALID_STATE when a `rank`
///         vector's ordering is inconsistent.
///
/// Ownership: the caller frees `*out_json` with shardline_string_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `vectors_json` is a NUL-terminated string; `out_json` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_decide(
    vectors_json: *const c_char,
    explain: bool,
    out_json: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let text = unsafe { args::str(vectors_json, "vectors_json") }?;
        let out = Out::new(out_json, "out_json")?;
        let result = to_c(&decide_json(text, explain)?)?;
        // SAFETY: caller's contract.
        unsafe { out.write(result.into_raw()) };
        Ok(())
    })
}
