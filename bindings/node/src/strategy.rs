//! `Strategy`: a built-in allocation strategy made from its configuration, or a custom one
//! written in JavaScript, both deciding through the core's `AllocationStrategy` trait.

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::ops::strategy as ops_strategy;
use shardline_bind::strategy::{wrong_allocation, wrong_shard, StrategyHost};
use shardline_bind::{CustomStrategy, Failure};
use shardline_core::model::AllocationState as CoreState;
use shardline_core::strategy::{Allocation, AllocationStrategy, StrategyConfig};

use crate::backends::checked;
use crate::conv;
use crate::error::{self, boundary, Code, Fail, R};
use crate::handle::{install, Handle};
use crate::js::{type_name, Js, Type, V};
use crate::ops;
use crate::state::AllocationState;

/// Where a native object keeps the JavaScript objects its callbacks live on.
pub const HOLDER: &CStr = c"__shardline";

pub fn holder_of(js: Js, this: V) -> R<Option<V>> {
    let h = js.get(this, "__shardline")?;
    Ok(if js.is_nullish(h)? { None } else { Some(h) })
}

pub fn is_function(js: Js, v: V) -> R<bool> {
    Ok(js.type_of(v)? == Type::Function)
}

/// The JavaScript side of a custom strategy: `allocate(state, shard, requester)` returns a
/// region id (or null: decide later), `rebalance(state, inProgress)` the shards to hand off.
/// The object is found through the frame of the call under way (role `strategy`); the shared
/// adapter checks and explains its answers.
pub struct JsHost;

/// A callback that threw: its value is recorded in the frame already, and wins.
fn threw() -> Failure {
    Failure::callback_failed("threw")
}

/// Calls `imp[method](view, ...rest)` with `state` lent to a view for the duration.
fn call_with_view(js: Js, imp: V, method: &str, state: &CoreState, rest: &[V]) -> R<V> {
    let f = js.get(imp, method)?;
    if !is_function(js, f)? {
        let message = format!("the custom strategy has no {method} function");
        return Err(Fail::new(Code::CallbackFailed, message));
    }
    let env = Env::from_raw(js.env);
    // SAFETY: the view ends below, before the borrow of `state` does.
    let view = unsafe { AllocationState::lend(state) }
        .into_instance(&env)
        .map_err(|e| Fail::new(Code::Internal, format!("creating a state view: {e}")))?;
    let mut args = vec![view.value];
    args.extend_from_slice(rest);
    let out = js.call(imp, f, &args);
    view.end_view();
    Ok(out?)
}

impl StrategyHost for JsHost {
    fn allocate(
        &mut self,
        state: &CoreState,
        requester: Option<&str>,
        shard: &str,
    ) -> std::result::Result<Option<String>, Failure> {
        error::callback("strategy", |js, imp| {
            let rest = [js.string(shard)?, js.to(requester)?];
            let out = call_with_view(js, imp, "allocate", state, &rest)?;
            Ok(match js.type_of(out)? {
                Type::Undefined | Type::Null => Ok(None),
                Type::String => Ok(Some(js.str_of(out)?)),
                t => Err(wrong_allocation(type_name(t))),
            })
        })
        .ok_or_else(threw)?
    }

    fn rebalance(
        &mut self,
        state: &CoreState,
        in_progress: &[&str],
    ) -> std::result::Result<Vec<String>, Failure> {
        error::callback("strategy", |js, imp| {
            if !is_function(js, js.get(imp, "rebalance")?)? {
                return Ok(Ok(Vec::new()));
            }
            let rest = [js.strings(in_progress)?];
            let out = call_with_view(js, imp, "rebalance", state, &rest)?;
            if js.is_nullish(out)? {
                return Ok(Ok(Vec::new()));
            }
            let Ok(items) = conv::iterable(js, out, "rebalance") else {
                return Ok(Err(wrong_shard("something that is not iterable")));
            };
            let picked = items.into_iter().enumerate().map(|(i, v)| {
                conv::shard(js, v, "item").map_err(|_| wrong_shard(&format!("item {i}")))
            });
            Ok(picked.collect())
        })
        .ok_or_else(threw)?
    }

    fn keep(&mut self, failure: Failure) -> shardline_core::Error {
        error::keep(failure)
    }
}

/// What a `strategy` option or constructor argument holds.
pub enum Spec {
    Builtin(StrategyConfig),
    /// A JavaScript object with `allocate` (and optionally `rebalance`).
    Custom {
        name: String,
        imp: V,
    },
}

impl Spec {
    pub fn parse(js: Js, v: V, what: &str) -> R<Spec> {
        let v = conv::object(js, v, what)?;
        // A Strategy instance stands for what it was made from.
        if let Some(inst) = checked::<Strategy>(js, v) {
            if let Some(c) = &inst.config {
                return Ok(Spec::Builtin(c.clone()));
            }
            let h = holder_of(js, v)?
                .ok_or_else(|| Fail::new(Code::Internal, "custom Strategy without its object"))?;
            return Ok(Spec::Custom {
                name: inst.name.clone(),
                imp: js.get(h, "strategy")?,
            });
        }
        if is_function(js, js.get(v, "allocate")?)? {
            let rebalance = js.get(v, "rebalance")?;
            if !js.is_nullish(rebalance)? && !is_function(js, rebalance)? {
                return Err(Fail::invalid(format!(
                    "{what}.rebalance: expected a function"
                )));
            }
            let name = match conv::field(js, v, "name")? {
                Some(n) if js.type_of(n)? == Type::String => js.str_of(n)?,
                _ => "custom".to_owned(),
            };
            return Ok(Spec::Custom { name, imp: v });
        }
        let value = conv::json(js, v, what)?;
        Ok(Spec::Builtin(ops_strategy::config(
            value,
            Default::default(),
            what,
        )?))
    }

    pub fn build(&self) -> R<Box<dyn AllocationStrategy>> {
        Ok(match self {
            Spec::Builtin(c) => c.build()?,
            Spec::Custom { name, .. } => Box::new(CustomStrategy::new(name.clone(), JsHost)),
        })
    }

    /// The object custom decisions are delegated to, if any.
    pub fn imp(&self) -> Option<V> {
        match self {
            Spec::Custom { imp, .. } => Some(*imp),
            Spec::Builtin(_) => None,
        }
    }
}

#[napi]
pub struct Strategy {
    config: Option<StrategyConfig>,
    name: String,
    /// Only a JavaScript strategy has callbacks: a built-in's decisions skip looking for them.
    inner: Handle<Box<dyn AllocationStrategy>>,
}

/// The `AllocationState` instance behind an argument (its class tag is checked, so a plain
/// object or another shardline class is refused).
pub fn state_arg<'a>(js: Js, v: V) -> R<&'a AllocationState> {
    if js.is_nullish(v)? {
        return Err(conv::missing("state"));
    }
    checked(js, v).ok_or_else(|| Fail::invalid("state: expected an AllocationState"))
}

#[napi]
impl Strategy {
    /// `new Strategy({kind: 'least-shard', absoluteLimit: 10})` for a built-in strategy, or
    /// `new Strategy({name, allocate(state, shard, requester), rebalance?(state, inProgress)})`
    /// for one written in JavaScript.
    #[napi(constructor, ts_args_type = "spec: StrategyConfig | CustomStrategy")]
    pub fn new(env: &Env, this: This, spec: Unknown) -> Result<Self> {
        let this_raw = this.object.raw();
        boundary(env, None, |js| {
            let spec = Spec::parse(js, spec.raw(), "spec")?;
            let inner = spec.build()?;
            let (config, name) = match &spec {
                Spec::Builtin(c) => (Some(c.clone()), inner.name().to_owned()),
                Spec::Custom { name, imp } => {
                    install(js, this_raw, &[("strategy", *imp)])?;
                    (None, name.clone())
                }
            };
            Ok(Strategy {
                inner: Handle::new("Strategy", inner).calling_back(config.is_none()),
                config,
                name,
            })
        })
    }
}

/// `Strategy.prototype.allocate(state, shard, requester?)` (lib/state.cjs): where `shard` goes,
/// a region id, or null when the strategy decides later (Pekko's External strategy without an
/// answer); NO_CANDIDATES when no region can take it. A plain function rather than a class
/// method: napi-rs records every `&self` method's receiver in its borrow tracker (a locked
/// hash map insert and remove per call), which cost more than the decision itself; the
/// `Handle` already serialises calls on the strategy. The shard id is read without a heap
/// copy and the answer becomes a JavaScript string directly, the call a host makes per new
/// shard.
#[napi(js_name = "_allocate", skip_typescript)]
pub fn allocate<'a>(
    env: &'a Env,
    strategy: Unknown,
    state: Unknown,
    shard: Unknown,
    requester: Unknown,
) -> Result<Unknown<'a>> {
    let js = Js::new(env.raw());
    let this = strategy.raw();
    let Some(s) = checked::<Strategy>(js, this) else {
        return boundary(env, None, |_| {
            Err(Fail::invalid("Strategy.allocate: this is not a Strategy"))
        });
    };
    let region = s.inner.call_on(env, this, |js, s| {
        let st = state_arg(js, state.raw())?;
        let requester = conv::opt_string(js, requester.raw(), "requester")?;
        conv::with_shard(js, shard.raw(), "shard", |shard| {
            st.read(
                |cs| match s.allocate(cs, requester.as_deref(), shard, None)? {
                    Allocation::Region(r) => js.string(&r),
                    Allocation::Pending => js.null(),
                },
            )
        })
    })?;
    Ok(crate::state::unknown(js, region))
}

impl Strategy {
    /// `_op` on a strategy (`shardline_bind::ops::strategy`): a decision takes the
    /// `AllocationState` first and may call the JavaScript strategy on `this`.
    pub fn op<'a>(&self, env: &'a Env, this: V, name: V, args: V) -> Result<Unknown<'a>> {
        let kind = "Strategy";
        let decision = Js::new(env.raw())
            .str_of(name)
            .is_ok_and(|op| ops_strategy::is_decision(&op));
        if !decision {
            return boundary(env, None, |js| {
                ops::call(js, kind, name, args, |a| {
                    ops_strategy::describe(self.config.as_ref(), &self.name, a)
                })
            });
        }
        self.inner.call_on(env, this, |js, s| {
            let items = conv::iterable(js, args, "Strategy.op: arguments")?;
            let st = state_arg(js, items.first().copied().unwrap_or(js.null()?))?;
            let rest = js.array_of(&items[1..], |v| Ok(*v))?;
            st.read(|cs| {
                ops::call(js, kind, name, rest, |a| {
                    ops_strategy::decide(&mut **s, cs, a)
                })
            })
        })
    }
}
