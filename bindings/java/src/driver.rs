//! `org.shardline.CoordinatorDriver` and `org.shardline.RegionDriver`: the core's callback
//! drivers with Java host objects (Transport, Clock, Lease, Store, EntityHost) behind the
//! core's traits. An `InMemoryLease` / `InMemoryStore` handed to a driver is used natively,
//! without a round trip through Java.

use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jint, jlong, jobjectArray};
use jni::JNIEnv;

use shardline_bind::driver_host as adapt;
use shardline_core::coordinator::Coordinator;
use shardline_core::host::Lease;
use shardline_core::host::Store;
use shardline_core::host::{Clock, CoordinatorDriver, RegionDriver, Transport};
use shardline_core::region::Region;

use crate::backends;
use crate::boundary::{entry, Failure, Result};
use crate::convert::{bytes, envelope, member, opt_long, string};
use crate::handle::{self, free_native, Handle};
use crate::host::JavaHost;
use crate::outputs::{coordinator_notices, region_notices};
use crate::region::region_input;

fn transport_and_clock(
    env: &mut JNIEnv,
    transport: &JObject,
    clock: &JObject,
) -> Result<(Box<dyn Transport>, Box<dyn Clock>)> {
    Ok((
        adapt::transport(JavaHost::new(env, transport, "transport")?),
        adapt::clock(JavaHost::new(env, clock, "clock")?),
    ))
}

// ---- CoordinatorDriver ---------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorDriver_nNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    coordinator: jlong,
    transport: JObject<'l>,
    clock: JObject<'l>,
    lease_handle: jlong,
    lease: JObject<'l>,
    store_handle: jlong,
    store: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let (transport, clock) = transport_and_clock(env, &transport, &clock)?;
        let lease: Box<dyn Lease> = if lease_handle != 0 {
            Box::new(backends::lease(lease_handle)?)
        } else {
            adapt::lease(JavaHost::new(env, &lease, "lease")?)
        };
        let store: Box<dyn Store> = if store_handle != 0 {
            Box::new(backends::store(store_handle)?)
        } else {
            adapt::store(JavaHost::new(env, &store, "store")?)
        };
        let c = unsafe { Handle::<Coordinator>::get(coordinator) }?.take()?;
        let d = CoordinatorDriver::new(c, transport, clock, lease, store);
        Ok(Handle::into_raw("coordinator driver", d))
    })
}

free_native!(
    Java_org_shardline_CoordinatorDriver_nFree,
    CoordinatorDriver
);

/// Kind 0: start; 1: receive(a, b, c); 2: memberRemoved(a); 3: reachability(a, flag);
/// 4: regionTerminated(a); 5: leaseLost; 6: preparingForShutdown; 7: stop.
#[allow(clippy::too_many_arguments)]
#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorDriver_nInput<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    kind: jint,
    a: JString<'l>,
    b: JString<'l>,
    c: JString<'l>,
    flag: jboolean,
) {
    entry(&mut env, (), |env| {
        let address = |env: &mut JNIEnv| -> Result<String> {
            Ok(shardline_core::model::Address::parse(&string(env, &a, "address")?)?.to_string())
        };
        match kind {
            0 => unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.start()?)) },
            1 => {
                let e = envelope(env, &a, &b, &c)?;
                unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.receive(e)?)) }
            }
            2 => {
                let addr = address(env)?;
                unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.member_removed(&addr)?)) }
            }
            3 => {
                let addr = address(env)?;
                unsafe {
                    handle::with::<CoordinatorDriver, _>(h, |d| {
                        Ok(d.reachability(&addr, flag != 0)?)
                    })
                }
            }
            4 => {
                let r = string(env, &a, "region")?;
                unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.region_terminated(&r)?)) }
            }
            5 => unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.lease_lost()?)) },
            6 => unsafe {
                handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.preparing_for_shutdown()?))
            },
            7 => unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.stop()?)) },
            other => Err(Failure::invalid_argument(format!(
                "unknown input kind {other}"
            ))),
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorDriver_nMember<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    fields: JObjectArray<'l>,
    up_number: jint,
) {
    entry(&mut env, (), |env| {
        let m = member(env, &fields, up_number)?;
        unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.member(m)?)) }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorDriver_nPoll<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, -1, |_| {
        Ok(opt_long(unsafe {
            handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.poll()?))
        }?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_CoordinatorDriver_nTakeNotices<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let notices = unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.take_notices())) }?;
        coordinator_notices(env, notices)
    })
}

// ---- RegionDriver --------------------------------------------------------------------------

#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionDriver_nNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    region: jlong,
    transport: JObject<'l>,
    clock: JObject<'l>,
    host: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let (transport, clock) = transport_and_clock(env, &transport, &clock)?;
        let host = adapt::entity_host(JavaHost::new(env, &host, "entity host")?);
        let r = unsafe { Handle::<Region>::get(region) }?.take()?;
        let d = RegionDriver::new(r, transport, clock, host);
        Ok(Handle::into_raw("region driver", d))
    })
}

free_native!(Java_org_shardline_RegionDriver_nFree, RegionDriver);

#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionDriver_nStart<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) {
    entry(&mut env, (), |_| unsafe {
        handle::with::<RegionDriver, _>(h, |d| Ok(d.start()?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionDriver_nRoute<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    shard: JString<'l>,
    entity: JString<'l>,
    payload: JByteArray<'l>,
) {
    entry(&mut env, (), |env| {
        let shard = crate::convert::opt_string(env, &shard)?;
        let entity = string(env, &entity, "entityId")?;
        let payload = bytes(env, &payload, "payload")?;
        unsafe {
            handle::with::<RegionDriver, _>(h, |d| {
                match &shard {
                    Some(s) => d.route_to_shard(s, &entity, payload)?,
                    None => d.route(&entity, payload)?,
                }
                Ok(())
            })
        }
    })
}

/// Kinds as in `Region.nInput`.
#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionDriver_nInput<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
    kind: jint,
    a: JString<'l>,
    b: JString<'l>,
    c: JString<'l>,
) {
    entry(&mut env, (), |env| {
        let input = region_input(env, kind, &a, &b, &c)?;
        use shardline_core::region::RegionInput as I;
        unsafe {
            handle::with::<RegionDriver, _>(h, |d| {
                match input {
                    I::Receive(e) => d.receive(e)?,
                    I::CoordinatorChanged => d.coordinator_changed()?,
                    I::RegionTerminated { region } => d.region_terminated(&region)?,
                    I::ShardStopped { shard } => d.shard_stopped(&shard)?,
                    I::EntityPassivated { shard, entity } => {
                        d.entity_passivated(&shard, &entity)?
                    }
                    I::GracefulShutdown => d.graceful_shutdown()?,
                }
                Ok(())
            })
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionDriver_nPoll<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jlong {
    entry(&mut env, -1, |_| {
        Ok(opt_long(unsafe {
            handle::with::<RegionDriver, _>(h, |d| Ok(d.poll()?))
        }?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_RegionDriver_nTakeNotices<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    h: jlong,
) -> jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let notices = unsafe { handle::with::<RegionDriver, _>(h, |d| Ok(d.take_notices())) }?;
        region_notices(env, notices)
    })
}
