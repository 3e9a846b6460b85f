//! `org.shardline.Strategy`: built-in strategies from their JSON configuration, custom
//! strategies implemented in Java (`CustomStrategy`), and External fed by a Java
//! `ShardLocations` source.

use jni::objects::{JObject, JObjectArray, JString, JValue, JValueOwned};
use jni::sys::{jint, jlong, jobject, jstring};
use jni::JNIEnv;

use shardline_bind::driver_host::HostObject;
use shardline_bind::host_state::HostState;
use shardline_bind::ops::strategy as ops_strategy;
use shardline_bind::ops::{Args, Tree};
use shardline_bind::strategy::StrategyHost;
use shardline_bind::{CustomStrategy, Failure as BindFailure};
use shardline_core::model::Address;
use shardline_core::model::{AllocationState, ShardId};
use shardline_core::strategy::{
    Allocation, AllocationStrategy, External, InProgress, Lookup, ShardLocations, StrategyConfig,
};

use crate::answers::RegionStrings;
use crate::boundary::{Failure, Result};
use crate::callback::{call, keep, JavaObject, Refusal, BRIDGE};
use crate::convert::{
    from_json, local_opt_string, local_string_array, new_string, opt_string, opt_text,
    read_strings, string, text_packed, TextBuf,
};
use crate::handle::{self, free_native, Handle};
use crate::native::native;
use crate::ops;

pub type Strategy = Box<dyn AllocationStrategy>;

/// What a `Strategy` handle holds: the strategy, and the region ids it answered as Java
/// strings.
pub struct StrategyHandle {
    /// None once handed to a coordinator; the answers stay until the handle is freed (see
    /// `answers`).
    strategy: Option<Strategy>,
    answers: RegionStrings,
}

impl StrategyHandle {
    fn strategy(&mut self) -> Result<&mut Strategy> {
        self.strategy.as_mut().ok_or_else(moved)
    }

    /// Moves the strategy out, to a coordinator; every later call fails.
    pub fn take(&mut self) -> Result<Strategy> {
        self.strategy.take().ok_or_else(moved)
    }
}

fn moved() -> Failure {
    Failure::invalid_state("this strategy was handed to another object and can no longer be used")
}

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
    let s = (!o.is_null()).then(|| crate::convert::read(env, &JString::from(o)));
    Ok(s.transpose()?)
}

fn read_string_array(
    env: &mut JNIEnv,
    o: JObject,
    what: &str,
) -> Result<Option<Vec<String>>, Refusal> {
    let items = (!o.is_null()).then(|| read_strings(env, &JObjectArray::from(o), what));
    Ok(items.transpose()?)
}

impl JavaHost {
    /// Calls bridge method `method` with `state` lent for the call (its handle the first
    /// argument after the strategy).
    fn decide<R>(
        &self,
        state: &AllocationState,
        method: &str,
        sig: &str,
        args: impl FnOnce(&mut JNIEnv) -> Result<Vec<JValueOwned<'static>>, Refusal>,
        answer: impl FnOnce(&mut JNIEnv, JObject) -> Result<R, Refusal>,
    ) -> Result<R, BindFailure> {
        // SAFETY: the view ends below, when the callback has returned.
        let view = unsafe { HostState::lend(state) };
        let mut values = vec![JValueOwned::Long(&view as *const HostState as jlong)];
        let r = call(method, |env| {
            values.extend(args(env)?);
            let mut all = vec![JValue::Object(self.target.obj.as_obj())];
            all.extend(values.iter().map(JValueOwned::borrow));
            let r = env.call_static_method(BRIDGE, method, sig, &all)?.l()?;
            answer(env, r)
        });
        view.end_view();
        r.map_err(kept)
    }
}

impl StrategyHost for JavaHost {
    fn allocate(
        &mut self,
        state: &AllocationState,
        requester: Option<&str>,
        shard: &str,
    ) -> Result<Option<String>, BindFailure> {
        let sig = "(Lorg/shardline/CustomStrategy;JLjava/lang/String;Ljava/lang/String;)Ljava/lang/String;";
        let args = |env: &mut JNIEnv| {
            let (r, s) = (
                local_opt_string(env, requester)?,
                local_opt_string(env, Some(shard))?,
            );
            Ok(vec![JValueOwned::from(r), JValueOwned::from(s)])
        };
        self.decide(state, "allocate", sig, args, read_opt_string)
    }

    fn rebalance(
        &mut self,
        state: &AllocationState,
        in_progress: &[&str],
    ) -> Result<Vec<String>, BindFailure> {
        let sig = "(Lorg/shardline/CustomStrategy;J[Ljava/lang/String;)[Ljava/lang/String;";
        let args = |env: &mut JNIEnv| {
            Ok(vec![JValueOwned::from(local_string_array(
                env,
                in_progress.iter(),
            )?)])
        };
        self.decide(state, "rebalance", sig, args, |env, r| {
            Ok(read_string_array(env, r, "rebalance result")?.unwrap_or_default())
        })
    }

    fn keep(&mut self, failure: BindFailure) -> shardline_core::Error {
        keep(failure)
    }
}

/// External's location source implemented by a Java `ShardLocations`, called through
/// `Callbacks.host` as the drivers' host objects are.
struct JavaLocations(crate::host::JavaHost);

impl JavaLocations {
    /// `m`'s answer as `read` reads it. Null, or a failure (kept for the boundary), is
    /// unavailability, which Pekko answers with the requester.
    fn ask<T>(&self, m: &str, a: Vec<Tree>, read: fn(Tree) -> Result<T, String>) -> Lookup<T> {
        let unusable = BindFailure::callback_failed;
        let answer = self.0.call(m, a).and_then(|t| match t {
            Tree::Null => Ok(Lookup::Unavailable),
            t => read(t).map(Lookup::Found).map_err(unusable),
        });
        answer.unwrap_or_else(|f| {
            let message = format!("ShardLocations.{m}: {}", f.message);
            keep(BindFailure::new(f.status, message));
            Lookup::Unavailable
        })
    }
}

fn address(a: &str) -> Result<Address, String> {
    Address::parse(a).map_err(|e| e.to_string())
}

impl ShardLocations for JavaLocations {
    fn location(&mut self, shard: &str) -> Lookup<Option<Address>> {
        self.ask("location", vec![Tree::Text(shard.into())], |t| {
            match t.into_array().ok().as_deref() {
                Some([]) => Ok(None),
                Some([Tree::Text(a)]) => address(a).map(Some),
                _ => Err("returned neither nothing nor one address".into()),
            }
        })
    }

    fn locations(&mut self) -> Lookup<Vec<(String, Address)>> {
        self.ask("locations", vec![], |t| {
            let pair = |p| match p {
                (Tree::Text(s), Tree::Text(a)) => Ok((s, address(&a)?)),
                _ => Err("returned a shard or address that is not a string".to_owned()),
            };
            let pairs = t.into_map().map_err(|_| "did not return a map")?;
            pairs.into_iter().map(pair).collect()
        })
    }
}

fn into_handle(strategy: Strategy) -> jlong {
    let answers = RegionStrings::default();
    let strategy = Some(strategy);
    Handle::into_raw(WHAT, StrategyHandle { strategy, answers })
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
    let source = crate::host::JavaHost::new(env, &source, "locations")?;
    Ok(into_handle(Box::new(External::with_source(Box::new(JavaLocations(source))))))
}}

free_native!(Java_org_shardline_Strategy_nFree, StrategyHandle);

native! { fn Java_org_shardline_Strategy_nName(env, h: jlong) -> jstring {
    let name = unsafe { handle::with::<StrategyHandle, _>(h, |s| Ok(s.strategy()?.name().to_owned())) }?;
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
    // SAFETY: forwarded contract.
    unsafe { hold(h, state, |s, st| f(s.strategy()?, st)) }
}

/// [`decide`] with the whole handle.
///
/// # Safety
/// As for [`decide`].
unsafe fn hold<R>(
    h: jlong,
    state: jlong,
    f: impl FnOnce(&mut StrategyHandle, &AllocationState) -> Result<R>,
) -> Result<R> {
    // The strategy first: it is the object callers share, and a thread that holds nothing
    // waits for it; the state (usually the caller's own) is then taken while holding it.
    // SAFETY: forwarded contract.
    unsafe { handle::with::<StrategyHandle, _>(h, |s| crate::state::read(state, |st| f(s, st))) }
}

native! {
/// `Strategy.allocate`, typed: the call a host makes per new shard. Null: decide later.
/// `lo`, `hi`, `shard_length`: the shard id packed by the Java side when it is short ASCII (see
/// `convert::text_packed`). A region answered before comes back as the same `String` (see
/// `answers`).
fn Java_org_shardline_Strategy_nAllocate(
    env, h: jlong, state: jlong, lo: jlong, hi: jlong, shard_length: jint, shard: JString<'l>,
    requester: JString<'l>,
) -> jstring {
    let (mut shard_buf, mut requester_buf) = (TextBuf::new(), TextBuf::new());
    let packed = (lo, hi, shard_length);
    let shard = text_packed(env, packed, &shard, "shard", &mut shard_buf)?;
    let requester = opt_text(env, &requester, &mut requester_buf)?;
    // SAFETY: Java passes live handles and keeps them alive for the call (NativeHandle).
    unsafe {
        hold(h, state, |s, st| {
            match s.strategy()?.allocate(st, requester, shard, None)? {
                Allocation::Region(r) => s.answers.get(env, &r),
                Allocation::Pending => Ok(std::ptr::null_mut()),
            }
        })
    }
}}

native! {
/// `Strategy.rebalance`, typed: a coordinator asks on every rebalance tick, and the generic
/// operation path would cost one Java object and one upcall per shard picked. The picked shards
/// come back packed in one string, each as its length in UTF-16 units, ':', then the id (ids may
/// hold any character, so no separator would do); in-progress shards come in as a `String[]`.
fn Java_org_shardline_Strategy_nRebalance(
    env, h: jlong, state: jlong, in_progress: JObjectArray<'l>,
) -> jstring {
    let busy: InProgress = read_strings(env, &in_progress, "inProgress")?
        .iter()
        .map(|s| ShardId::from(s.as_str()))
        .collect();
    // SAFETY: Java passes live handles and keeps them alive for the call (NativeHandle).
    let picked = unsafe { decide(h, state, |s, st| Ok(s.rebalance(st, &busy, None)?)) }?;
    let mut packed = String::with_capacity(picked.iter().map(|s| s.len() + 4).sum());
    for shard in &picked {
        // an ASCII id's UTF-16 length is its byte length, and the digits come from `itoa`:
        // `write!` costs more per shard than the rest of the packing
        let units = if shard.is_ascii() {
            shard.len()
        } else {
            shard.encode_utf16().count()
        };
        packed.push_str(itoa::Buffer::new().format(units));
        packed.push(':');
        packed.push_str(shard);
    }
    new_string(env, &packed)
}}

native! {
/// The decisions of `shardline_bind::ops::strategy`; the first argument is the handle of the
/// AllocationState decided on.
fn Java_org_shardline_Strategy_nOp(
    env, h: jlong, op: JString<'l>, args: JObjectArray<'l>,
) -> jobject {
    let op = string(env, &op, "Strategy.op: name")?;
    let values = ops::arguments(env, &args, &format!("Strategy.{op}"))?;
    let state = match values.first() {
        Some(Tree::Integer(i)) if ops_strategy::is_decision(&op) => i128::from(*i) as jlong,
        _ => return Err(Args::new("Strategy", &op, &values).unknown().into()),
    };
    let a = Args::new("Strategy", &op, &values[1..]);
    // SAFETY: Java passes live handles and keeps them alive for the call (NativeHandle).
    let answer =
        unsafe { decide(h, state, |s, st| Ok(ops_strategy::decide(&mut **s, st, a)?)) }?;
    ops::to_java(env, &answer)
}}
