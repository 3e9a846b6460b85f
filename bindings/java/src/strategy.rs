//! `org.shardline.Strategy`: built-in strategies from their JSON configuration, custom
//! strategies implemented in Java (`CustomStrategy`), and External fed by a Java
//! `ShardLocations` source.

use jni::objects::{JObject, JObjectArray, JString, JValue};
use jni::sys::{jlong, jobjectArray, jstring};
use jni::JNIEnv;

use shardline_bind::host_state::HostState;
use shardline_bind::strategy::StrategyHost;
use shardline_bind::{CustomStrategy, Failure as BindFailure};
use shardline_core::model::Address;
use shardline_core::model::{AllocationState, ShardId};
use shardline_core::strategy::{
    Allocation, AllocationStrategy, Explanation, External, InProgress, Lookup, ShardLocations,
    StrategyConfig,
};

use crate::boundary::{keep_failure, Result};
use crate::callback::{call, JavaObject, Refusal, BRIDGE};
use crate::convert::{
    from_json, local_opt_string, local_string_array, new_string, opt_string, opt_string_array,
    read_strings, string_array, with_opt_str, with_str,
};
use crate::handle::{self, free_native, Handle};
use crate::native::native;

pub type Strategy = Box<dyn AllocationStrategy>;

const WHAT: &str = "strategy";

/// The Java side of a custom strategy; the shared adapter checks and explains its answers.
pub struct JavaHost {
    target: JavaObject,
}

/// What the host reports when its callback failed: the exception (or the
/// `ShardlineException` for an unusable answer) is kept for the boundary already, and wins.
fn kept(e: shardline_core::Error) -> BindFailure {
    BindFailure::callback_failed(format!("failed: {}", e.message()))
}

fn read_opt_string(env: &mut JNIEnv, o: JObject) -> Result<Option<String>, Refusal> {
    if o.is_null() {
        return Ok(None);
    }
    Ok(Some(crate::convert::read(env, &JString::from(o))?))
}

fn read_string_array(
    env: &mut JNIEnv,
    o: JObject,
    what: &str,
) -> Result<Option<Vec<String>>, Refusal> {
    if o.is_null() {
        return Ok(None);
    }
    Ok(Some(read_strings(env, &JObjectArray::from(o), what)?))
}

impl StrategyHost for JavaHost {
    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
    ) -> Result<Option<String>, BindFailure> {
        // SAFETY: the view ends below, when the callback has returned.
        let view = unsafe { HostState::lend(state) };
        let view_handle = &view as *const HostState as jlong;
        let target = &self.target;
        let answer = call("allocate", |env| {
            let requester = local_opt_string(env, requester)?;
            let shard = env.new_string(shard)?;
            let r = env
                .call_static_method(
                    BRIDGE,
                    "allocate",
                    "(Lorg/shardline/CustomStrategy;JLjava/lang/String;Ljava/lang/String;)Ljava/lang/String;",
                    &[
                        JValue::Object(target.obj.as_obj()),
                        JValue::Long(view_handle),
                        JValue::Object(&requester),
                        JValue::Object(&shard),
                    ],
                )?
                .l()?;
            read_opt_string(env, r)
        });
        view.end_view();
        answer.map_err(kept)
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &[&str],
    ) -> Result<Vec<String>, BindFailure> {
        // SAFETY: the view ends below, when the callback has returned.
        let view = unsafe { HostState::lend(state) };
        let view_handle = &view as *const HostState as jlong;
        let target = &self.target;
        let answer = call("rebalance", |env| {
            let array = local_string_array(env, in_progress.iter())?;
            let r = env
                .call_static_method(
                    BRIDGE,
                    "rebalance",
                    "(Lorg/shardline/CustomStrategy;J[Ljava/lang/String;)[Ljava/lang/String;",
                    &[
                        JValue::Object(target.obj.as_obj()),
                        JValue::Long(view_handle),
                        JValue::Object(&array),
                    ],
                )?
                .l()?;
            Ok(read_string_array(env, r, "rebalance result")?.unwrap_or_default())
        });
        view.end_view();
        answer.map_err(kept)
    }

    fn keep(&mut self, failure: BindFailure) -> shardline_core::Error {
        let core = failure.to_core();
        if let Ok(mut env) = crate::vm().get_env() {
            keep_failure(&mut env, failure.status, &failure.message);
        }
        core
    }
}

/// External's location source implemented by a Java `ShardLocations`.
struct JavaLocations {
    target: JavaObject,
}

fn parse_address(a: &str) -> Result<Address, Refusal> {
    Address::parse(a).map_err(|e| Refusal::Invalid(e.to_string()))
}

impl ShardLocations for JavaLocations {
    fn location(&mut self, shard: &str) -> Lookup<Option<Address>> {
        let target = &self.target;
        let r = call("ShardLocations.location", |env| {
            let shard = env.new_string(shard)?;
            let r = env
                .call_static_method(
                    BRIDGE,
                    "location",
                    "(Lorg/shardline/ShardLocations;Ljava/lang/String;)[Ljava/lang/String;",
                    &[JValue::Object(target.obj.as_obj()), JValue::Object(&shard)],
                )?
                .l()?;
            match read_string_array(env, r, "location")? {
                None => Ok(Lookup::Unavailable),
                Some(v) => match v.first() {
                    None => Ok(Lookup::Found(None)),
                    Some(a) => Ok(Lookup::Found(Some(parse_address(a)?))),
                },
            }
        });
        // A failed callback is kept for the boundary; for the decision it is unavailability,
        // which Pekko answers with the requester.
        r.unwrap_or(Lookup::Unavailable)
    }

    fn locations(&mut self) -> Lookup<Vec<(String, Address)>> {
        let target = &self.target;
        let r = call("ShardLocations.locations", |env| {
            let r = env
                .call_static_method(
                    BRIDGE,
                    "locations",
                    "(Lorg/shardline/ShardLocations;)[Ljava/lang/String;",
                    &[JValue::Object(target.obj.as_obj())],
                )?
                .l()?;
            match read_string_array(env, r, "locations")? {
                None => Ok(Lookup::Unavailable),
                Some(flat) => {
                    let mut out = Vec::with_capacity(flat.len() / 2);
                    for pair in flat.chunks(2) {
                        if let [shard, address] = pair {
                            out.push((shard.clone(), parse_address(address)?));
                        }
                    }
                    Ok(Lookup::Found(out))
                }
            }
        });
        r.unwrap_or(Lookup::Unavailable)
    }
}

fn into_handle(s: Strategy) -> jlong {
    Handle::into_raw(WHAT, s)
}

native! { fn Java_org_shardline_Strategy_nFromJson(env, json: JString<'l>) -> jlong {
    let value: serde_json::Value = from_json(env, &json, "strategy")?;
    Ok(into_handle(StrategyConfig::from_json(&value)?.build()?))
}}

native! { fn Java_org_shardline_Strategy_nCustom(
    env, target: JObject<'l>, name: JString<'l>,
) -> jlong {
    let name = opt_string(env, &name)?.unwrap_or_else(|| "custom".into());
    let target = JavaObject::new(env, &target, "strategy")?;
    Ok(into_handle(Box::new(CustomStrategy::new(
        name,
        JavaHost { target },
    ))))
}}

native! { fn Java_org_shardline_Strategy_nExternalSource(env, source: JObject<'l>) -> jlong {
    let target = JavaObject::new(env, &source, "locations")?;
    Ok(into_handle(Box::new(External::with_source(Box::new(
        JavaLocations { target },
    )))))
}}

free_native!(Java_org_shardline_Strategy_nFree, Strategy);

native! { fn Java_org_shardline_Strategy_nName(env, h: jlong) -> jstring {
    let name = unsafe { handle::with::<Strategy, _>(h, |s| Ok(s.name().to_owned())) }?;
    new_string(env, &name)
}}

/// Runs `f` on the strategy behind `h` and the state behind `state`, both held for the call.
///
/// # Safety
/// Both are live handles (Java keeps them alive for the call, see NativeHandle).
pub unsafe fn decide<R>(
    h: jlong,
    state: jlong,
    f: impl FnOnce(&mut Strategy, &AllocationState) -> Result<R>,
) -> Result<R> {
    // The strategy first: it is the object callers share, and a thread that holds nothing
    // waits for it; the state (usually the caller's own) is then taken while holding it.
    // SAFETY: forwarded contract.
    unsafe { handle::with::<Strategy, _>(h, |s| crate::state::read(state, |st| f(s, st))) }
}

fn explanation_json(e: Option<Explanation>) -> Option<String> {
    e.map(|e| serde_json::to_string(&e).expect("explanations serialize"))
}

native! {
/// The region id, or null for pending: the hot path returns the decision alone (no array).
fn Java_org_shardline_Strategy_nAllocate(
    env, h: jlong, state: jlong, requester: JString<'l>, shard: JString<'l>,
) -> jstring {
    match allocate(env, h, state, &requester, &shard, None)? {
        Allocation::Region(r) => new_string(env, &r),
        Allocation::Pending => Ok(std::ptr::null_mut()),
    }
}}

native! {
/// {region id or null for pending, explanation JSON}.
fn Java_org_shardline_Strategy_nExplainAllocate(
    env, h: jlong, state: jlong, requester: JString<'l>, shard: JString<'l>,
) -> jobjectArray {
    let mut explanation = Explanation::default();
    let region = match allocate(env, h, state, &requester, &shard, Some(&mut explanation))? {
        Allocation::Region(r) => Some(r.to_string()),
        Allocation::Pending => None,
    };
    let out = [region, explanation_json(Some(explanation))];
    opt_string_array(env, &out)
}}

fn allocate(
    env: &mut JNIEnv,
    h: jlong,
    state: jlong,
    requester: &JString,
    shard: &JString,
    explanation: Option<&mut Explanation>,
) -> Result<Allocation> {
    let env: &JNIEnv = env;
    with_opt_str(env, requester, |requester| {
        with_str(env, shard, "shard", |shard| {
            // SAFETY: Java passes live handles and keeps them alive for the call (NativeHandle).
            unsafe {
                decide(h, state, |s, st| {
                    Ok(s.allocate(st, requester, shard, explanation)?)
                })
            }
        })
    })
}

fn rebalance(
    env: &mut JNIEnv,
    h: jlong,
    state: jlong,
    in_progress: &JObjectArray,
    explanation: Option<&mut Explanation>,
) -> Result<Vec<ShardId>> {
    let in_progress: InProgress = read_strings(env, in_progress, "inProgress")?
        .iter()
        .map(|s| ShardId::from(s.as_str()))
        .collect();
    // SAFETY: as above.
    unsafe {
        decide(h, state, |s, st| {
            Ok(s.rebalance(st, &in_progress, explanation)?)
        })
    }
}

native! {
/// Shards in decision order.
fn Java_org_shardline_Strategy_nRebalance(
    env, h: jlong, state: jlong, in_progress: JObjectArray<'l>,
) -> jobjectArray {
    let picked = rebalance(env, h, state, &in_progress, None)?;
    string_array(env, picked.iter().map(|s| &**s))
}}

native! {
/// {String[] shards in decision order, explanation JSON}.
fn Java_org_shardline_Strategy_nExplainRebalance(
    env, h: jlong, state: jlong, in_progress: JObjectArray<'l>,
) -> jobjectArray {
    let mut explanation = Explanation::default();
    let picked = rebalance(env, h, state, &in_progress, Some(&mut explanation))?;
    let shards = string_array(env, picked.iter().map(|s| &**s))?;
    // SAFETY: a fresh local reference just returned by string_array.
    let shards = unsafe { JObject::from_raw(shards) };
    let class = crate::classes::OBJECT.get(env)?;
    let array = env.new_object_array(2, class, JObject::null())?;
    env.set_object_array_element(&array, 0, &shards)?;
    if let Some(e) = explanation_json(Some(explanation)) {
        let s = env.new_string(e)?;
        env.set_object_array_element(&array, 1, &s)?;
    }
    Ok(array.into_raw())
}}
