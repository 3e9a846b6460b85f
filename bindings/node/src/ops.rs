//! Node's side of the operations called by name (`shardline_bind::ops`): a native class's one
//! `op(name, args)` method converts the arguments and the answer here, and the package's
//! JavaScript gives each operation its camelCase name.
//!
//! The pattern, for a class whose operations `shardline_bind::ops::<group>::<kind>` decides:
//!
//! ```ignore
//! /// The named operations (`shardline_bind::ops::<group>`); lib/<group>.cjs names each.
//! #[napi(ts_args_type = "name: string, args: unknown[]", ts_return_type = "unknown")]
//! pub fn op<'a>(&self, env: &'a Env, name: Unknown, args: Unknown) -> Result<Unknown<'a>> {
//!     self.inner
//!         .query(env, |js, x| ops::call(js, "Kind", name.raw(), args.raw(), |a| group::kind(x, a)))
//! }
//! ```
//!
//! and in JavaScript `ops.define(native.Kind, {getters, methods})` (lib/ops.cjs) puts the
//! public methods on the native prototype, declared for TypeScript in lib/index.d.ts's
//! `declare module '../index' { interface Kind { ... } }`, so the public types keep every
//! method while the generated index.d.ts shows only `op`.

use shardline_bind::ops::{Args, Reply, Tree};

use crate::conv;
use crate::error::R;
use crate::js::{Js, V};
use crate::state::unknown;
use napi::bindgen_prelude::Unknown;

/// Runs `f` on the arguments of `kind.name(...args)` and answers with a JavaScript value.
pub fn call<'a>(
    js: Js,
    kind: &'static str,
    name: V,
    args: V,
    f: impl FnOnce(Args<'_>) -> Reply,
) -> R<Unknown<'a>> {
    let op = conv::string(js, name, &format!("{kind}.op: name"))?;
    let values = arguments(js, args, &format!("{kind}.{op}"))?;
    let answer = f(Args::new(kind, &op, &values))?;
    Ok(unknown(js, conv::tree_js(js, &answer)?))
}

/// A JavaScript arguments array as trees: a Buffer or TypedArray argument is bytes, anything
/// else is read as [`conv::json`] reads data; errors name the argument (`Kind.op: argument 2`).
pub fn arguments(js: Js, args: V, at: &str) -> R<Vec<Tree>> {
    if js.is_nullish(args)? {
        return Ok(Vec::new());
    }
    conv::iterable(js, args, &format!("{at}: arguments"))?
        .into_iter()
        .enumerate()
        .map(|(i, v)| match js.bytes_of(v)? {
            Some(b) => Ok(Tree::Bytes(b)),
            None => conv::tree_of(js, v, &format!("{at}: argument {}", i + 1)),
        })
        .collect()
}
