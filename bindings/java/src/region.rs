//! `org.shardline.Region` (the sans-IO step API) and the queries it shares with
//! `RegionDriver` (`org.shardline.RegionQueries`).

use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jboolean, jint, jlong, jobjectArray, jstring, JNI_TRUE};
use jni::JNIEnv;

use shardline_core::host::RegionDriver;
use shardline_core::region::{Region, RegionConfig, RegionInput, ShardExtractor};

use crate::boundary::{entry, Failure, Result};
use crate::convert::{
    bytes, envelope, opt_from_json, opt_long, opt_new_string, opt_string, string, string_array,
    unsigned,
};
use crate::handle::{self, free_native, Handle};
use crate::outputs::region_outputs;

pub fn config(env: &mut JNIEnv, json: &JString) -> Result<RegionConfig> {
    match opt_from_json(env, json, "region config")? {
        None => Ok(RegionConfig::default()),
        Some(value) => Ok(RegionConfig::from_json(&value)?),
    }
}

/// Kind 0: Pekko `HashCodeMessageExtractor(n)`; 1: actor-ts `hashShardId(n)`; 2: the Java
/// side computes shard ids itself and only ever routes with a known shard.
fn extractor(kind: jint, n: jint) -> Result<ShardExtractor> {
    Ok(match kind {
        0 => ShardExtractor::pekko(n)?,
        1 => {
            ShardExtractor::actor_ts(u32::try_from(n).map_err(|_| {
                Failure::invalid_argument(format!("numShards must be >= 1, got {n}"))
            })?)?
        }
        2 => ShardExtractor::custom(|entity| entity.to_owned()),
        other => {
            return Err(Failure::invalid_argument(format!(
                "unknown extractor kind {other}"
            )))
        }
    })
}

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_shardline_Region_nNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    config_json: JString<'l>,
    id: JString<'l>,
    node: JString<'l>,
    kind: jint,
    n: jint,
) -> jlong {
    entry(&mut env, 0, |env| {
        let config = config(env, &config_json)?;
        let id = string(env, &id, "region id")?;
        let node = shardline_core::model::Address::parse(&string(env, &node, "node")?)?;
        let r = Region::new(config, &id, node.as_str(), extractor(kind, n)?)?;
        Ok(Handle::into_raw("region", r))
    })
}

free_native!(Java_org_shardline_Region_nFree, Region);

#[no_mangle]
pub extern "system" fn Java_org_shardline_Region_nStart<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
) {
    entry(&mut env, (), |_| {
        let now = unsigned(now, "nowMs")?;
        unsafe {
            handle::with::<Region, _>(h, |r| {
                r.start(now);
                Ok(())
            })
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Region_nOnTimeout<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
) {
    entry(&mut env, (), |_| {
        let now = unsigned(now, "nowMs")?;
        unsafe {
            handle::with::<Region, _>(h, |r| {
                r.on_timeout(now);
                Ok(())
            })
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Region_nRoute<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
    shard: JString<'l>,
    entity: JString<'l>,
    payload: JByteArray<'l>,
) {
    entry(&mut env, (), |env| {
        let now = unsigned(now, "nowMs")?;
        let shard = opt_string(env, &shard)?;
        let entity = string(env, &entity, "entityId")?;
        let payload = bytes(env, &payload, "payload")?;
        unsafe {
            handle::with::<Region, _>(h, |r| {
                let routed = match &shard {
                    Some(s) => r.route_to_shard(now, s, &entity, payload),
                    None => r.route(now, &entity, payload),
                };
                routed.map_err(|rejected| Failure::invalid_state(rejected.to_string()))
            })
        }
    })
}

/// Kind 0: receive(a=from, b=to, c=message); 1: coordinatorChanged; 2: regionTerminated(a);
/// 3: shardStopped(a); 4: entityPassivated(a=shard, b=entity); 5: gracefulShutdown.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_shardline_Region_nInput<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
    kind: jint,
    a: JString<'l>,
    b: JString<'l>,
    c: JString<'l>,
) {
    entry(&mut env, (), |env| {
        let now = unsigned(now, "nowMs")?;
        let input = region_input(env, kind, &a, &b, &c)?;
        unsafe {
            handle::with::<Region, _>(h, |r| {
                r.handle(now, input);
                Ok(())
            })
        }
    })
}

pub fn region_input(
    env: &mut JNIEnv,
    kind: jint,
    a: &JString,
    b: &JString,
    c: &JString,
) -> Result<RegionInput> {
    Ok(match kind {
        0 => RegionInput::Receive(envelope(env, a, b, c)?),
        1 => RegionInput::CoordinatorChanged,
        2 => RegionInput::RegionTerminated {
            region: string(env, a, "region")?,
        },
        3 => RegionInput::ShardStopped {
            shard: string(env, a, "shard")?,
        },
        4 => RegionInput::EntityPassivated {
            shard: string(env, a, "shard")?,
            entity: string(env, b, "entityId")?,
        },
        5 => RegionInput::GracefulShutdown,
        other => {
            return Err(Failure::invalid_argument(format!(
                "unknown input kind {other}"
            )))
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Region_nDrain<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let outputs = unsafe { handle::with::<Region, _>(h, |r| Ok(r.drain_outputs())) }?;
        region_outputs(env, outputs)
    })
}

// ---- queries shared by Region and RegionDriver ----------------------------------------------

unsafe fn query<R>(h: jlong, driver: jboolean, f: impl FnOnce(&Region) -> Result<R>) -> Result<R> {
    // SAFETY: Java passes a live handle of the kind it says.
    unsafe { handle::query(h, driver, RegionDriver::region, f) }
}

/// What = 0: id; 1: home of shard `arg`; 2: shard of entity `arg`.
#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionQueries_nString<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
    what: jint,
    arg: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let arg = opt_string(env, &arg)?;
        let arg = arg.as_deref().unwrap_or_default();
        let s = unsafe {
            query(h, driver, |r| {
                Ok(match what {
                    0 => Some(r.id().to_owned()),
                    1 => r.home_of(arg).map(str::to_owned),
                    _ => Some(r.shard_of(arg)?),
                })
            })
        }?;
        opt_new_string(env, s.as_deref())
    })
}

/// What = 0: local shards; 1: running shards.
#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionQueries_nList<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
    what: jint,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let items = unsafe {
            query(h, driver, |r| {
                Ok(if what == 0 {
                    r.local_shards()
                } else {
                    r.running_shards()
                })
            })
        }?;
        string_array(env, items.iter())
    })
}

/// What = 0: registered (0/1); 1: buffered messages; 2: buffered for shard `arg`; 3: next
/// deadline (-1 none).
#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionQueries_nLong<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
    what: jint,
    arg: JString<'l>,
) -> jlong {
    entry(&mut env, -1, |env| {
        let arg = opt_string(env, &arg)?;
        unsafe {
            query(h, driver, |r| {
                Ok(match what {
                    0 => {
                        if r.is_registered() {
                            JNI_TRUE as jlong
                        } else {
                            0
                        }
                    }
                    1 => r.buffered() as jlong,
                    2 => r.buffered_for(arg.as_deref().unwrap_or_default()) as jlong,
                    _ => opt_long(r.next_deadline()),
                })
            })
        }
    })
}
