//! `org.shardline.Coordinator` (the sans-IO step API) and the queries it shares with
//! `CoordinatorDriver` (`org.shardline.CoordinatorQueries`).

use jni::objects::{JClass, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jobjectArray, jstring, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;

use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::{Coordinator, CoordinatorConfig, CoordinatorInput};
use shardline_core::host::CoordinatorDriver;
use shardline_core::model::Address;
use shardline_core::protocol::FencingToken;

use crate::boundary::{entry, Failure, Result};
use crate::convert::{
    envelope, from_json, member, new_string, opt_from_json, opt_long, opt_new_string, opt_string,
    string, string_array, unsigned,
};
use crate::handle::{self, free_native, Handle};
use crate::outputs::coordinator_outputs;
use crate::strategy::Strategy;

pub fn config(env: &mut JNIEnv, json: &JString) -> Result<CoordinatorConfig> {
    match opt_from_json(env, json, "coordinator config")? {
        None => Ok(CoordinatorConfig::default()),
        Some(value) => Ok(CoordinatorConfig::from_json(&value)?),
    }
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Coordinator_nNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    config_json: JString<'l>,
    strategy: jlong,
    self_address: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let config = config(env, &config_json)?;
        let a = Address::parse(&string(env, &self_address, "selfAddress")?)?;
        // Validate everything before taking the strategy, so a failure leaves it usable.
        config.validate()?;
        let s = unsafe { Handle::<Strategy>::get(strategy) }?.take()?;
        let c = Coordinator::new(config, s, a)?;
        Ok(Handle::into_raw("coordinator", c))
    })
}

free_native!(Java_org_shardline_Coordinator_nFree, Coordinator);

#[no_mangle]
pub extern "system" fn Java_org_shardline_Coordinator_nStart<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
) {
    entry(&mut env, (), |_| {
        let now = unsigned(now, "nowMs")?;
        unsafe {
            handle::with::<Coordinator, _>(h, |c| {
                c.start(now);
                Ok(())
            })
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Coordinator_nOnTimeout<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
) {
    entry(&mut env, (), |_| {
        let now = unsigned(now, "nowMs")?;
        unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.on_timeout(now)?)) }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Coordinator_nDrain<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let outputs = unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.drain_outputs())) }?;
        coordinator_outputs(env, outputs)
    })
}

fn token(x: jlong) -> Result<FencingToken> {
    Ok(FencingToken(unsigned(x, "token")?))
}

/// Every input but `Member`; `kind` numbers are shared with `Coordinator.java`.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_shardline_Coordinator_nInput<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
    kind: jint,
    a: JString<'l>,
    b: JString<'l>,
    c: JString<'l>,
    x: jlong,
    y: jlong,
) {
    entry(&mut env, (), |env| {
        let now = unsigned(now, "nowMs")?;
        let input = match kind {
            0 => CoordinatorInput::Receive(envelope(env, &a, &b, &c)?),
            1 => CoordinatorInput::MemberRemoved {
                address: Address::parse(&string(env, &a, "address")?)?.to_string(),
            },
            2 => CoordinatorInput::Reachability {
                address: Address::parse(&string(env, &a, "address")?)?.to_string(),
                reachable: x != 0,
            },
            3 => CoordinatorInput::RegionTerminated {
                region: string(env, &a, "region")?,
            },
            4 => CoordinatorInput::LeaseGranted(LeaseGrant {
                token: token(x)?,
                valid_until_ms: unsigned(y, "validUntilMs")?,
            }),
            5 => CoordinatorInput::LeaseDenied,
            6 => CoordinatorInput::LeaseRenewed {
                token: token(x)?,
                valid_until_ms: unsigned(y, "validUntilMs")?,
            },
            7 => CoordinatorInput::LeaseRenewFailed { token: token(x)? },
            8 => CoordinatorInput::LeaseLost { token: token(x)? },
            9 => CoordinatorInput::StateLoaded(from_json(env, &c, "stored state")?),
            10 => CoordinatorInput::StateLoadFailed { fenced: x != 0 },
            11 => CoordinatorInput::StoreFailed { fenced: x != 0 },
            12 => CoordinatorInput::PreparingForShutdown,
            13 => CoordinatorInput::Stop,
            other => {
                return Err(Failure::invalid_argument(format!(
                    "unknown input kind {other}"
                )))
            }
        };
        unsafe { handle::with::<Coordinator, _>(h, |co| Ok(co.handle(now, input)?)) }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Coordinator_nMember<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    now: jlong,
    fields: JObjectArray<'l>,
    up_number: jint,
) {
    entry(&mut env, (), |env| {
        let now = unsigned(now, "nowMs")?;
        let m = member(env, &fields, up_number)?;
        unsafe {
            handle::with::<Coordinator, _>(h, |c| Ok(c.handle(now, CoordinatorInput::Member(m))?))
        }
    })
}

// ---- queries shared by Coordinator and CoordinatorDriver -----------------------------------

/// Runs `f` on the coordinator behind a `Coordinator` handle or a `CoordinatorDriver` handle.
unsafe fn query<R>(
    h: jlong,
    driver: jboolean,
    f: impl FnOnce(&Coordinator) -> Result<R>,
) -> Result<R> {
    // SAFETY: Java passes a live handle of the kind it says.
    unsafe { handle::query(h, driver, CoordinatorDriver::coordinator, f) }
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorQueries_nPhase<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: the Java side passes a live handle of the kind `driver` names.
        let phase = unsafe { query(h, driver, |c| Ok(c.phase())) }?;
        new_string(env, shardline_core::coordinator::phase_name(phase))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorQueries_nToken<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
) -> jlong {
    entry(&mut env, -1, |_| unsafe {
        query(h, driver, |c| Ok(opt_long(c.token().map(|t| t.0))))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorQueries_nNextDeadline<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
) -> jlong {
    entry(&mut env, -1, |_| unsafe {
        query(h, driver, |c| Ok(opt_long(c.next_deadline())))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorQueries_nHomeOf<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
    shard: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let shard = string(env, &shard, "shard")?;
        let home = unsafe { query(h, driver, |c| Ok(c.state().home_of(&shard).cloned())) }?;
        opt_new_string(env, home.as_deref())
    })
}

/// What = 0: regions in map order; 1: shards of `arg` (oldest first); 2: hand-offs in
/// progress; 3: unallocated shards.
#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorQueries_nList<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
    what: jint,
    arg: JString<'l>,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let arg = opt_string(env, &arg)?;
        let items: Vec<String> = unsafe {
            query(h, driver, |c| {
                Ok(match what {
                    0 => c.state().regions().map(|(r, _, _)| r.clone()).collect(),
                    1 => c
                        .state()
                        .shards_of(arg.as_deref().unwrap_or_default())
                        .to_vec(),
                    2 => c.handoffs_in_progress(),
                    _ => c.state().unallocated().cloned().collect(),
                })
            })
        }?;
        string_array(env, items.iter())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorQueries_nSnapshot<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let json = unsafe {
            query(h, driver, |c| {
                Ok(crate::convert::to_json(&c.state().snapshot()))
            })
        }?;
        crate::convert::new_string(env, &json)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorQueries_nIsAlive<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    driver: jboolean,
    region: JString<'l>,
) -> jboolean {
    entry(&mut env, JNI_FALSE, |env| {
        let r = string(env, &region, "region")?;
        let alive = unsafe { query(h, driver, |c| Ok(c.is_alive(&r))) }?;
        Ok(if alive { JNI_TRUE } else { JNI_FALSE })
    })
}
