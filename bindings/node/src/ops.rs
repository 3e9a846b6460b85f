//! Node's side of the operations called by name (`shardline_bind::ops`). One native function,
//! `_op(target, name, args)`, answers every class's operations: it tells the class of `target`
//! by its type tag (as `_receive` does), converts the arguments and the answer, and runs what
//! `shardline_bind::ops` decides for that class; with a null target it runs the library's
//! functions. lib/ops.cjs's `define` puts `op(name, args)` over it on each class's prototype,
//! and each operation under its camelCase name; lib/index.d.ts declares them. An etcd lease's
//! or store's operation answers a Promise (see `etcd.rs`).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::driver_host::Spelling;
use shardline_bind::ops::{backends, etcd, functions, ids, state, steps};
use shardline_bind::ops::{Args, Reply, Tree};
use shardline_bind::Failure;

use crate::backends::{instance, InMemoryLease, InMemoryStore, ManualClock};
use crate::conv;
use crate::coordinator::{Coordinator, CoordinatorDriver};
use crate::error::{boundary, R};
use crate::etcd::{Etcd, EtcdLease, EtcdStore};
use crate::ids::{Snowflake, WorkerIdHolder, WorkerIdRegistry};
use crate::js::{Js, Type, V};
use crate::pipeline::CoordinatorPipeline;
use crate::region::{Region, RegionDriver};
use crate::state::{unknown, AllocationState};
use crate::strategy::Strategy;

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
    let items = conv::iterable(js, args, &format!("{at}: arguments"))?;
    values(js, &items, at)
}

fn values(js: Js, items: &[V], at: &str) -> R<Vec<Tree>> {
    let value = |(i, v): (usize, &V)| match js.bytes_of(*v)? {
        Some(b) => Ok(Tree::Bytes(b)),
        None => conv::tree_of(js, *v, &format!("{at}: argument {}", i + 1)),
    };
    items.iter().enumerate().map(value).collect()
}

/// What a constructor (`op` "new") or factory method makes from its arguments, which `f`
/// reads (`shardline_bind::ops::constructors`).
pub fn make<T>(
    env: &Env,
    kind: &'static str,
    op: &str,
    args: &[&Unknown],
    f: impl FnOnce(Args<'_>) -> std::result::Result<T, Failure>,
) -> Result<T> {
    boundary(env, None, |js| {
        let raw: Vec<V> = args.iter().map(|a| a.raw()).collect();
        let values = values(js, &raw, &format!("{kind}.{op}"))?;
        Ok(f(Args::new(kind, op, &values))?)
    })
}

/// `_op(target, name, args)`: `target`'s operation `name` (the library's functions when
/// `target` is null).
#[napi(js_name = "_op", skip_typescript)]
pub fn op<'a>(env: &'a Env, target: Unknown, name: Unknown, args: Unknown) -> Result<Unknown<'a>> {
    let (js, t, name, args) = (Js::new(env.raw()), target.raw(), name.raw(), args.raw());
    // `Class how |value, args| reply`: the value is the class's handle's (held for the call,
    // with its callbacks reachable), or the object itself for classes without one. A state
    // machine also answers `close`, the binding's own operation: it frees the machine and
    // forgets its callbacks (idempotent).
    macro_rules! classes {
        ($($class:ident $how:ident |$x:ident, $a:ident| $reply:expr;)*) => {$(
            if let Some(o) = instance::<$class>(js, t) {
                return classes!(@$how o, |$x, $a| call(js, stringify!($class), name, args, |$a| $reply));
            }
        )*};
        (@machine $o:ident, |$x:ident, $a:ident| $run:expr) => {
            if js.str_of(name).is_ok_and(|op| op == "close") {
                $o.inner.close(env, t)?;
                boundary(env, None, |js| Ok(unknown(js, js.undefined()?)))
            } else {
                classes!(@handle $o, |$x, $a| $run)
            }
        };
        (@handle $o:ident, |$x:ident, $a:ident| $run:expr) => {
            $o.inner.call_on(env, t, |_, $x| $run)
        };
        (@plain $o:ident, |$x:ident, $a:ident| $run:expr) => {
            boundary(env, None, |_| { let $x = &$o.inner; $run })
        };
    }
    // Checking the type tag of undefined or null would throw.
    if matches!(js.type_of(t), Ok(Type::Undefined | Type::Null)) {
        return boundary(env, None, |js| {
            call(js, "shardline", name, args, functions::call)
        });
    }
    if let Some(s) = instance::<Strategy>(js, t) {
        return s.op(env, t, name, args);
    }
    classes! {
        AllocationState plain |s, a| state::call(s, crate::state::run, a);
        Coordinator machine |c, a| steps::coordinator(c, a);
        CoordinatorDriver machine |d, a| steps::coordinator_driver(d, a);
        CoordinatorPipeline machine |p, a| steps::pipeline(p, Spelling::Camel, a);
        Region machine |r, a| steps::region(&mut r.machine, a);
        RegionDriver machine |d, a| steps::region_driver(&mut d.machine, a);
        Snowflake handle |g, a| ids::snowflake(g, a);
        WorkerIdHolder handle |h, a| ids::holder(h, a);
        WorkerIdRegistry plain |r, a| ids::registry(r, a);
        ManualClock plain |c, a| backends::clock(c, a);
        InMemoryLease plain |l, a| backends::lease(l, a);
        InMemoryStore plain |s, a| backends::store(s, a);
        Etcd plain |e, a| etcd::connection(e, a);
    }
    // etcd requests run on the libuv thread pool and answer Promises. Checked after the
    // classes above: each check that misses is a Node-API call on every operation.
    if let Some(l) = instance::<EtcdLease>(js, t) {
        return crate::etcd::spawn(env, "EtcdLease", &l.inner, name, args, etcd::lease);
    }
    if let Some(s) = instance::<EtcdStore>(js, t) {
        return crate::etcd::spawn(env, "EtcdStore", &s.inner, name, args, etcd::store);
    }
    boundary(env, None, |js| -> R<Unknown> {
        Err(conv::wrong(js, t, "_op: target", "a shardline object"))
    })
}
