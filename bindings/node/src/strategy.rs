//! `Strategy`: a built-in allocation strategy made from its configuration, or a custom one
//! written in JavaScript, both deciding through the core's `AllocationStrategy` trait.

use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_bind::objects::{ExplainedAllocation, ExplainedRebalance};
use shardline_bind::strategy::{wrong_allocation, wrong_shard, StrategyHost};
use shardline_bind::{CustomStrategy, Failure, HandleCell};
use shardline_core::model::{AllocationState as CoreState, ShardId};
use shardline_core::strategy::{
    Allocation, AllocationStrategy, Explanation, InProgress, StrategyConfig,
};

use crate::conv;
use crate::error::{self, boundary, Code, Fail, R};
use crate::handle::install;
use crate::js::{Js, Type, V};
use crate::state::{unknown, AllocationState};

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

/// `target[name]`, which must be a function.
pub fn own_method(js: Js, target: V, role: &str, name: &str) -> R<(V, V)> {
    let f = js.get(target, name)?;
    if js.type_of(f)? != Type::Function {
        return Err(Fail::new(
            Code::CallbackFailed,
            format!("the {role} has no {name} function"),
        ));
    }
    Ok((target, f))
}

/// Calls `imp[method](view, ...rest)` with `state` lent to a view for the duration.
fn call_with_view(js: Js, imp: V, method: &str, state: &CoreState, rest: &[V]) -> R<V> {
    let (imp, f) = own_method(js, imp, "custom strategy", method)?;
    let env = Env::from_raw(js.env);
    let view = AllocationState::view()
        .into_instance(&env)
        .map_err(|e| Fail::new(Code::Internal, format!("creating a state view: {e}")))?;
    view.lend(Some(state));
    let mut args = vec![view.value];
    args.extend_from_slice(rest);
    let out = js.call(imp, f, &args);
    view.lend(None);
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
            let rest = [js.string(shard)?, js.opt_string(requester)?];
            let out = call_with_view(js, imp, "allocate", state, &rest)?;
            Ok(match js.type_of(out)? {
                Type::Undefined | Type::Null => Ok(None),
                Type::String => Ok(Some(js.str_of(out)?)),
                t => Err(wrong_allocation(t.name())),
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
            let mut picked = Vec::with_capacity(items.len());
            for (i, v) in items.into_iter().enumerate() {
                match conv::shard(js, v, "item") {
                    Ok(s) => picked.push(s),
                    Err(_) => return Ok(Err(wrong_shard(&format!("item {i}")))),
                }
            }
            Ok(Ok(picked))
        })
        .ok_or_else(threw)?
    }

    fn keep(&mut self, failure: Failure) -> shardline_core::Error {
        let core = failure.to_core();
        error::record(failure.into());
        core
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
        let env = Env::from_raw(js.env);
        if Strategy::instance_of(&env, &unknown(js, v)).unwrap_or(false) {
            // SAFETY: checked to be a Strategy of this env.
            let inst = unsafe { ClassInstance::<Strategy>::from_napi_value(js.env, v) }
                .map_err(|e| Fail::invalid(format!("{what}: {e}")))?;
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
        if value.get("kind").is_none() {
            return Err(Fail::invalid(format!(
                "{what}: expected a strategy configuration ({{kind: ...}}), a Strategy, or an object with an allocate function"
            )));
        }
        Ok(Spec::Builtin(StrategyConfig::from_json(&value)?))
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
    inner: HandleCell<Box<dyn AllocationStrategy>>,
}

/// The `AllocationState` instance behind an argument.
pub fn state_arg<'a>(js: Js, v: V) -> R<&'a AllocationState> {
    if js.is_nullish(v)? {
        return Err(conv::missing("state"));
    }
    // Unwrapping checks the class the object was wrapped as (napi-rs's class identity), so a
    // plain object or another shardline class is refused here; no separate instanceof.
    // SAFETY: the reference is used only during this call, while the argument keeps the
    // object alive.
    let inst = unsafe { ClassInstance::<AllocationState>::from_napi_value(js.env, v) }
        .map_err(|_| Fail::invalid("state: expected an AllocationState"))?;
    Ok(unsafe { &*(&*inst as *const AllocationState) })
}

impl Strategy {
    fn decide<T>(
        &self,
        env: &Env,
        this: &This,
        f: impl FnOnce(Js, &mut dyn AllocationStrategy) -> R<T>,
    ) -> Result<T> {
        let js = Js::new(env.raw());
        // Only a JavaScript strategy has a holder to find; a named-property lookup costs more
        // than a built-in decision, so built-ins skip it.
        let holder = match self.config {
            Some(_) => None,
            None => holder_of(js, this.object.raw()).ok().flatten(),
        };
        boundary(env, holder, |js| {
            let mut inner = self.inner.hold()?;
            f(js, &mut **inner)
        })
    }
}

fn allocation_js(js: Js, a: &Allocation) -> R<V> {
    match a {
        Allocation::Region(r) => js.string(r),
        Allocation::Pending => js.null(),
    }
}

fn in_progress(js: Js, v: V) -> R<InProgress> {
    Ok(conv::shards(js, v, "inProgress")?
        .into_iter()
        .map(|s| ShardId::from(s.as_str()))
        .collect())
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
                config,
                name,
                inner: HandleCell::new("Strategy", inner),
            })
        })
    }

    /// The name explanations use (`least-shard`, ..., or the custom strategy's name).
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// The configuration with every default filled in; null for a custom strategy.
    #[napi(getter, ts_return_type = "StrategyConfig | null")]
    pub fn config(&self, env: &Env) -> Result<Unknown<'_>> {
        boundary(env, None, |js| {
            let v = match &self.config {
                Some(c) => conv::ser(js, c)?,
                None => js.null()?,
            };
            Ok(unknown(js, v))
        })
    }

    /// Where `shard` goes: a region id, or null when the strategy decides later (Pekko's
    /// External strategy without an answer). Throws NO_CANDIDATES when no region can take it.
    #[napi(
        ts_args_type = "state: AllocationState, shard: ShardId, requester?: string | null",
        ts_return_type = "string | null"
    )]
    pub fn allocate<'a>(
        &self,
        env: &'a Env,
        this: This,
        state: Unknown,
        shard: Unknown,
        requester: Unknown,
    ) -> Result<Unknown<'a>> {
        self.decide(env, &this, |js, s| {
            let st = state_arg(js, state.raw())?;
            let shard = conv::shard(js, shard.raw(), "shard")?;
            let requester = conv::opt_string(js, requester.raw(), "requester")?;
            let a = st.read(|cs| Ok(s.allocate(cs, requester.as_deref(), &shard, None)?))?;
            Ok(unknown(js, allocation_js(js, &a)?))
        })
    }

    /// The shards to hand off, in decision order.
    #[napi(ts_args_type = "state: AllocationState, inProgress?: Iterable<ShardId>")]
    pub fn rebalance(
        &self,
        env: &Env,
        this: This,
        state: Unknown,
        in_prog: Unknown,
    ) -> Result<Vec<String>> {
        self.decide(env, &this, |js, s| {
            let st = state_arg(js, state.raw())?;
            let ip = in_progress(js, in_prog.raw())?;
            let picked = st.read(|cs| Ok(s.rebalance(cs, &ip, None)?))?;
            Ok(picked.iter().map(|s| s.to_string()).collect())
        })
    }

    /// `allocate` plus a structured explanation of the decision.
    #[napi(
        ts_args_type = "state: AllocationState, shard: ShardId, requester?: string | null",
        ts_return_type = "{ region: string | null; explanation: Explanation }"
    )]
    pub fn explain_allocate<'a>(
        &self,
        env: &'a Env,
        this: This,
        state: Unknown,
        shard: Unknown,
        requester: Unknown,
    ) -> Result<Unknown<'a>> {
        self.decide(env, &this, |js, s| {
            let st = state_arg(js, state.raw())?;
            let shard = conv::shard(js, shard.raw(), "shard")?;
            let requester = conv::opt_string(js, requester.raw(), "requester")?;
            let mut e = Explanation::default();
            let a =
                st.read(|cs| Ok(s.allocate(cs, requester.as_deref(), &shard, Some(&mut e))?))?;
            Ok(unknown(
                js,
                conv::ser(js, &ExplainedAllocation::new(&a, &e))?,
            ))
        })
    }

    /// `rebalance` plus a structured explanation of the decision.
    #[napi(
        ts_args_type = "state: AllocationState, inProgress?: Iterable<ShardId>",
        ts_return_type = "{ shards: string[]; explanation: Explanation }"
    )]
    pub fn explain_rebalance<'a>(
        &self,
        env: &'a Env,
        this: This,
        state: Unknown,
        in_prog: Unknown,
    ) -> Result<Unknown<'a>> {
        self.decide(env, &this, |js, s| {
            let st = state_arg(js, state.raw())?;
            let ip = in_progress(js, in_prog.raw())?;
            let mut e = Explanation::default();
            let picked = st.read(|cs| Ok(s.rebalance(cs, &ip, Some(&mut e))?))?;
            Ok(unknown(
                js,
                conv::ser(js, &ExplainedRebalance::new(&picked, &e))?,
            ))
        })
    }
}
