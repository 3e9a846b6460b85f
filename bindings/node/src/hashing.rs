//! The library's functions (entity -> shard as Pekko and actor-ts compute it, Pekko's
//! MurmurHash, conformance decisions, trace replay) by name: `shardline_bind::ops::functions`,
//! named by lib/functions.cjs.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use shardline_bind::ops::functions;

use crate::error::boundary;
use crate::ops;

/// The library's functions by name; lib/functions.cjs names each.
#[napi(
    js_name = "_op",
    ts_args_type = "name: string, args: unknown[]",
    ts_return_type = "unknown"
)]
pub fn op<'a>(env: &'a Env, name: Unknown, args: Unknown) -> Result<Unknown<'a>> {
    boundary(env, None, |js| {
        ops::call(js, "shardline", name.raw(), args.raw(), functions::call)
    })
}
