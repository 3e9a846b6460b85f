//! `org.shardline.bench.InProcess` (module shardline-bench): benchmark entry points that make
//! a decision many times inside one native call, so the JVM benchmarks can show the Rust
//! core's own cost next to the same decision through JNI (`Strategy.allocate` / `rebalance`,
//! one native call per decision) and next to Pekko's strategies.
//!
//! What a loop measures: the strategy's `allocate` / `rebalance` on the caller's
//! `AllocationState`, with both handles looked up and locked once for the whole loop (as a
//! Rust host holding its state would do); no argument conversion, no result conversion per
//! decision. The clock (`std::time::Instant`) lives here, with the benchmarks; the core stays
//! clock-free. Not part of the public API: compiled into the JNI library only with the crate's
//! `bench` feature (every Maven build but -Prelease).

use std::hint::black_box;
use std::time::Instant;

use jni::objects::{JClass, JObject, JObjectArray, JString};
use jni::sys::{jint, jlong};
use jni::JNIEnv;

use shardline_core::model::ShardId;
use shardline_core::strategy::{Allocation, InProgress};

use crate::boundary::{entry, Failure, Result};
use crate::convert::{opt_string, read_strings, string, string_array};
use crate::strategy::decide;

fn iterations(n: jint) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Failure::invalid_argument(format!("iterations must be at least 1, got {n}")))
}

fn out_slot(out: &JObjectArray, env: &mut JNIEnv) -> Result<()> {
    if out.is_null() {
        return Err(Failure::null("out"));
    }
    if env.get_array_length(out)? < 1 {
        return Err(Failure::invalid_argument(
            "out must have room for one element",
        ));
    }
    Ok(())
}

/// Allocates `shard` `iterations` times; returns the elapsed ns and stores the last decision
/// (the region id, or null for pending) in `out[0]`.
#[no_mangle]
pub extern "system" fn Java_org_shardline_bench_InProcess_nAllocate<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    strategy: jlong,
    state: jlong,
    requester: JString<'l>,
    shard: JString<'l>,
    n: jint,
    out: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let n = iterations(n)?;
        out_slot(&out, env)?;
        let requester = opt_string(env, &requester)?;
        let shard = string(env, &shard, "shard")?;
        // SAFETY: Java passes live handles and keeps them alive for the call (NativeHandle).
        let (elapsed, last) = unsafe {
            decide(strategy, state, |s, st| {
                let mut last = Allocation::Pending;
                let start = Instant::now();
                for _ in 0..n {
                    last = black_box(s.allocate(
                        black_box(st),
                        black_box(requester.as_deref()),
                        black_box(&shard),
                        None,
                    )?);
                }
                Ok((start.elapsed(), last))
            })
        }?;
        if let Allocation::Region(r) = last {
            let r = env.new_string(&*r)?;
            env.set_object_array_element(&out, 0, &r)?;
        }
        Ok(elapsed.as_nanos().min(i64::MAX as u128) as jlong)
    })
}

/// Rebalances `iterations` times; returns the elapsed ns and stores the last decision (a
/// `String[]` of shards in decision order) in `out[0]`.
#[no_mangle]
pub extern "system" fn Java_org_shardline_bench_InProcess_nRebalance<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    strategy: jlong,
    state: jlong,
    in_progress: JObjectArray<'l>,
    n: jint,
    out: JObjectArray<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let n = iterations(n)?;
        out_slot(&out, env)?;
        let in_progress: InProgress = read_strings(env, &in_progress, "inProgress")?
            .iter()
            .map(|s| ShardId::from(s.as_str()))
            .collect();
        // SAFETY: as above.
        let (elapsed, last) = unsafe {
            decide(strategy, state, |s, st| {
                let mut last = Vec::new();
                let start = Instant::now();
                for _ in 0..n {
                    last = black_box(s.rebalance(black_box(st), black_box(&in_progress), None)?);
                }
                Ok((start.elapsed(), last))
            })
        }?;
        let picked = string_array(env, last.iter().map(|s| &**s))?;
        // SAFETY: a fresh local reference just returned by string_array.
        let picked = unsafe { JObject::from_raw(picked) };
        env.set_object_array_element(&out, 0, &picked)?;
        Ok(elapsed.as_nanos().min(i64::MAX as u128) as jlong)
    })
}

/// The cheapest possible native call (no handle, no arguments, no boundary): the JVM's own
/// cost of entering and leaving native code.
#[no_mangle]
pub extern "system" fn Java_org_shardline_bench_InProcess_nNoop<'l>(
    _env: JNIEnv<'l>,
    _: JClass<'l>,
) -> jint {
    0
}
