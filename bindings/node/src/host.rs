//! JavaScript objects as the driver's host objects. `shardline_bind::driver_host` decides
//! what each role needs and how answers are read; this module only calls JavaScript.
//!
//! A [`JsObject`] holds no JavaScript value: it finds its object under its key in the
//! callback holder of the native call under way (see `error.rs`), so it is `Send` as the core
//! requires. A value a callback throws is kept in that call's frame and thrown again when the
//! call returns; the core meanwhile sees a failed callback and carries on as it documents.

use shardline_bind::driver_host::{HostObject, Role, Spelling};
use shardline_bind::host_value::{self, Given};
use shardline_bind::tree::Tree;
use shardline_bind::Failure;

use crate::conv;
use crate::error::{self, Fail, R};
use crate::handle::Holder;
use crate::js::{Js, Type, V};

/// The object under `key` in the callback holder; a plain function serves a one-method role
/// (`send`, `nowMs`).
pub struct JsObject {
    key: &'static str,
    callable: bool,
}

/// The JavaScript name of a method: the shared snake_case one in camelCase.
fn camel(method: &str) -> String {
    Spelling::Camel.spell(method)
}

fn has_method(js: Js, target: V, method: &str) -> R<bool> {
    let f = js.get(target, &camel(method))?;
    Ok(js.type_of(f)? == Type::Function)
}

impl HostObject for JsObject {
    fn call(&self, method: &str, args: Vec<Tree>) -> Result<Tree, Failure> {
        let answer = error::with_callback(self.key, |js, target| {
            let (this, f) = if self.callable {
                (js.undefined()?, target)
            } else {
                (target, js.get(target, &camel(method))?)
            };
            let args = args
                .iter()
                .map(|a| conv::tree_js(js, a))
                .collect::<R<Vec<_>>>()?;
            let answer = js.call(this, f, &args)?;
            conv::tree_of(js, answer, "answer").map_err(|f| match f {
                Fail::Code(f) => {
                    let message = format!("returned something that is not data ({})", f.message);
                    Failure::callback_failed(message).into()
                }
                threw => threw,
            })
        });
        answer.map_err(|f| match f {
            Fail::Code(f) => f,
            threw @ Fail::Threw(_) => {
                // The thrown value is what the caller gets; the failure only tells the core.
                error::record(threw);
                Failure::callback_failed("threw")
            }
        })
    }

    fn has(&self, method: &str) -> bool {
        self.callable
            || matches!(
                error::with_callback(self.key, |js, t| has_method(js, t, method)),
                Ok(true)
            )
    }

    fn keep(&self, failure: Failure) -> shardline_core::Error {
        error::keep(failure)
    }

    fn spelling(&self) -> Spelling {
        Spelling::Camel
    }
}

/// The option `key` (`v`) as the holder's `key` in `role`, once it has the methods the role
/// needs.
pub fn object(js: Js, v: V, key: &'static str, role: &Role) -> R<JsObject> {
    let what = format!("options.{key}");
    let given = match js.type_of(v)? {
        Type::Function => Given::Function,
        Type::Object => Given::Object,
        Type::Undefined | Type::Null => Given::Missing,
        _ => Given::Other,
    };
    let callable = host_value::serves(role, given, &what)?;
    role.check(Spelling::Camel, |m| {
        callable || has_method(js, v, m).unwrap_or(false)
    })?;
    Ok(JsObject { key, callable })
}

/// The required option `options[key]` in `role`, added to the callback holder under `key`.
pub fn option(
    js: Js,
    options: V,
    key: &'static str,
    role: &Role,
    holder: &mut Holder,
) -> R<JsObject> {
    join(js, js.get(options, key)?, key, role, holder)
}

/// The option `key` (`v`) in `role`, added to the callback holder under `key`.
pub fn join(js: Js, v: V, key: &'static str, role: &Role, holder: &mut Holder) -> R<JsObject> {
    let obj = object(js, v, key, role)?;
    holder.push((key, v));
    Ok(obj)
}
