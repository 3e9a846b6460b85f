//! `org.shardline.CoordinatorDriver` and `org.shardline.RegionDriver`: the core's callback
//! drivers with Java host objects (Transport, Clock, Lease, Store, EntityHost) behind the
//! core's traits. An `InMemoryLease` / `InMemoryStore` handed to a driver is used natively,
//! without a round trip through Java.

use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString, JValue};
use jni::sys::{jboolean, jint, jlong, jobjectArray};
use jni::JNIEnv;

use shardline_core::coordinator::Coordinator;
use shardline_core::coordinator::{Record, Snapshot};
use shardline_core::driver::{Clock, CoordinatorDriver, EntityHost, RegionDriver, Transport};
use shardline_core::lease::{Lease, LeaseGrant};
use shardline_core::protocol::{EntityId, Envelope, FencingToken, Payload};
use shardline_core::region::Region;
use shardline_core::store::{Store, StoredState, WriteOutcome};

use crate::backends;
use crate::boundary::{entry, Failure, Result};
use crate::callback::{call, JavaObject, Refusal, BRIDGE};
use crate::convert::{
    bytes, endpoint_id, envelope, local_opt_string, local_string_array, member, opt_long, string,
    to_json,
};
use crate::handle::{self, free_native, Handle};
use crate::outputs::{coordinator_notices, region_notices};
use crate::region::region_input;

fn non_negative(v: jlong, what: &str) -> Result<u64, Refusal> {
    u64::try_from(v).map_err(|_| Refusal::Invalid(format!("{what} is negative: {v}")))
}

struct JavaTransport(JavaObject);

impl Transport for JavaTransport {
    fn send(&mut self, e: Envelope) -> shardline_core::Result<()> {
        let target = &self.0.obj;
        call("Transport.send", |env| {
            let from = local_opt_string(env, endpoint_id(&e.from))?;
            let to = local_opt_string(env, endpoint_id(&e.to))?;
            let message = env.new_string(to_json(&e.message))?;
            env.call_static_method(
                BRIDGE,
                "send",
                "(Lorg/shardline/Transport;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)V",
                &[
                    JValue::Object(target.as_obj()),
                    JValue::Object(&from),
                    JValue::Object(&to),
                    JValue::Object(&message),
                ],
            )?;
            Ok(())
        })
    }
}

struct JavaClock(JavaObject);

impl Clock for JavaClock {
    fn now_ms(&self) -> u64 {
        let target = &self.0.obj;
        // A failing clock is reported when the call returns; meanwhile time stands still (the
        // state machines never let it go backwards).
        call("Clock.nowMs", |env| {
            let t = env.call_method(target.as_obj(), "nowMs", "()J", &[])?.j()?;
            non_negative(t, "Clock.nowMs()")
        })
        .unwrap_or(0)
    }
}

struct JavaLease(JavaObject);

impl Lease for JavaLease {
    fn acquire(&mut self, now_ms: u64) -> shardline_core::Result<Option<LeaseGrant>> {
        let target = &self.0.obj;
        call("Lease.acquire", |env| {
            let r = env
                .call_static_method(
                    BRIDGE,
                    "leaseAcquire",
                    "(Lorg/shardline/Lease;J)[J",
                    &[
                        JValue::Object(target.as_obj()),
                        JValue::Long(now_ms as jlong),
                    ],
                )?
                .l()?;
            if r.is_null() {
                return Ok(None);
            }
            let mut g = [0i64; 2];
            env.get_long_array_region(jni::objects::JLongArray::from(r), 0, &mut g)?;
            Ok(Some(LeaseGrant {
                token: FencingToken(non_negative(g[0], "LeaseGrant.token")?),
                valid_until_ms: non_negative(g[1], "LeaseGrant.validUntilMs")?,
            }))
        })
    }

    fn renew(&mut self, token: FencingToken, now_ms: u64) -> shardline_core::Result<Option<u64>> {
        let target = &self.0.obj;
        call("Lease.renew", |env| {
            let r = env
                .call_static_method(
                    BRIDGE,
                    "leaseRenew",
                    "(Lorg/shardline/Lease;JJ)J",
                    &[
                        JValue::Object(target.as_obj()),
                        JValue::Long(token.0 as jlong),
                        JValue::Long(now_ms as jlong),
                    ],
                )?
                .j()?;
            Ok(u64::try_from(r).ok())
        })
    }

    fn release(&mut self, token: FencingToken) -> shardline_core::Result<()> {
        let target = &self.0.obj;
        call("Lease.release", |env| {
            env.call_method(
                target.as_obj(),
                "release",
                "(J)V",
                &[JValue::Long(token.0 as jlong)],
            )?;
            Ok(())
        })
    }
}

struct JavaStore(JavaObject);

fn write_outcome(v: jlong) -> WriteOutcome {
    match u64::try_from(v) {
        Ok(highest) => WriteOutcome::Fenced {
            highest: FencingToken(highest),
        },
        Err(_) => WriteOutcome::Written,
    }
}

impl JavaStore {
    fn write(
        &mut self,
        what: &str,
        method: &str,
        token: FencingToken,
        json: String,
    ) -> shardline_core::Result<WriteOutcome> {
        let target = &self.0.obj;
        call(what, |env| {
            let json = env.new_string(json)?;
            let r = env
                .call_static_method(
                    BRIDGE,
                    method,
                    "(Lorg/shardline/Store;JLjava/lang/String;)J",
                    &[
                        JValue::Object(target.as_obj()),
                        JValue::Long(token.0 as jlong),
                        JValue::Object(&json),
                    ],
                )?
                .j()?;
            Ok(write_outcome(r))
        })
    }
}

impl Store for JavaStore {
    fn append(
        &mut self,
        token: FencingToken,
        record: &Record,
    ) -> shardline_core::Result<WriteOutcome> {
        self.write("Store.append", "storeAppend", token, to_json(record))
    }

    fn save_snapshot(
        &mut self,
        token: FencingToken,
        snapshot: &Snapshot,
    ) -> shardline_core::Result<WriteOutcome> {
        self.write(
            "Store.saveSnapshot",
            "storeSaveSnapshot",
            token,
            to_json(snapshot),
        )
    }

    fn load(&mut self, token: FencingToken) -> shardline_core::Result<Option<StoredState>> {
        let target = &self.0.obj;
        call("Store.load", |env| {
            let r = env
                .call_static_method(
                    BRIDGE,
                    "storeLoad",
                    "(Lorg/shardline/Store;J)Ljava/lang/String;",
                    &[
                        JValue::Object(target.as_obj()),
                        JValue::Long(token.0 as jlong),
                    ],
                )?
                .l()?;
            if r.is_null() {
                return Ok(None);
            }
            let text = crate::convert::read(env, &JString::from(r))?;
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| Refusal::Invalid(format!("stored state: {e}")))
        })
    }
}

struct JavaHost(JavaObject);

impl JavaHost {
    fn start(
        &mut self,
        method: &str,
        shard: &str,
        entities: &[EntityId],
    ) -> shardline_core::Result<()> {
        let target = &self.0.obj;
        call(&format!("EntityHost.{method}"), |env| {
            let shard = env.new_string(shard)?;
            let entities = local_string_array(env, entities.iter())?;
            env.call_static_method(
                BRIDGE,
                method,
                "(Lorg/shardline/EntityHost;Ljava/lang/String;[Ljava/lang/String;)V",
                &[
                    JValue::Object(target.as_obj()),
                    JValue::Object(&shard),
                    JValue::Object(&entities),
                ],
            )?;
            Ok(())
        })
    }
}

impl EntityHost for JavaHost {
    fn start_shard(&mut self, shard: &str, entities: &[EntityId]) -> shardline_core::Result<()> {
        self.start("startShard", shard, entities)
    }

    fn start_entities(&mut self, shard: &str, entities: &[EntityId]) -> shardline_core::Result<()> {
        self.start("startEntities", shard, entities)
    }

    fn deliver(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
    ) -> shardline_core::Result<()> {
        let target = &self.0.obj;
        call("EntityHost.deliver", |env| {
            let shard = env.new_string(shard)?;
            let entity = env.new_string(entity)?;
            let payload = env.byte_array_from_slice(&payload)?;
            env.call_static_method(
                BRIDGE,
                "deliver",
                "(Lorg/shardline/EntityHost;Ljava/lang/String;Ljava/lang/String;[B)V",
                &[
                    JValue::Object(target.as_obj()),
                    JValue::Object(&shard),
                    JValue::Object(&entity),
                    JValue::Object(&payload),
                ],
            )?;
            Ok(())
        })
    }

    fn stop_shard(&mut self, shard: &str) -> shardline_core::Result<bool> {
        let target = &self.0.obj;
        call("EntityHost.stopShard", |env| {
            let shard = env.new_string(shard)?;
            Ok(env
                .call_method(
                    target.as_obj(),
                    "stopShard",
                    "(Ljava/lang/String;)Z",
                    &[JValue::Object(&shard)],
                )?
                .z()?)
        })
    }

    fn undeliverable(
        &mut self,
        shard: &str,
        entity: &str,
        payload: Payload,
        reason: &str,
    ) -> shardline_core::Result<()> {
        let target = &self.0.obj;
        call("EntityHost.undeliverable", |env| {
            let shard = env.new_string(shard)?;
            let entity = env.new_string(entity)?;
            let payload = env.byte_array_from_slice(&payload)?;
            let reason = env.new_string(reason)?;
            env.call_method(
                target.as_obj(),
                "undeliverable",
                "(Ljava/lang/String;Ljava/lang/String;[BLjava/lang/String;)V",
                &[
                    JValue::Object(&shard),
                    JValue::Object(&entity),
                    JValue::Object(&payload),
                    JValue::Object(&reason),
                ],
            )?;
            Ok(())
        })
    }

    fn stopped(&mut self) -> shardline_core::Result<()> {
        let target = &self.0.obj;
        call("EntityHost.stopped", |env| {
            env.call_method(target.as_obj(), "stopped", "()V", &[])?;
            Ok(())
        })
    }
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
        let transport = JavaTransport(JavaObject::new(env, &transport, "transport")?);
        let clock = JavaClock(JavaObject::new(env, &clock, "clock")?);
        let lease: Box<dyn Lease> = if lease_handle != 0 {
            Box::new(backends::lease(lease_handle)?)
        } else {
            Box::new(JavaLease(JavaObject::new(env, &lease, "lease")?))
        };
        let store: Box<dyn Store> = if store_handle != 0 {
            Box::new(backends::store(store_handle)?)
        } else {
            Box::new(JavaStore(JavaObject::new(env, &store, "store")?))
        };
        let c = unsafe { Handle::<Coordinator>::get(coordinator) }?.take()?;
        let d = CoordinatorDriver::new(c, Box::new(transport), Box::new(clock), lease, store);
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
            Ok(shardline_core::address::Address::parse(&string(env, &a, "address")?)?.to_string())
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
        let transport = JavaTransport(JavaObject::new(env, &transport, "transport")?);
        let clock = JavaClock(JavaObject::new(env, &clock, "clock")?);
        let host = JavaHost(JavaObject::new(env, &host, "entity host")?);
        let r = unsafe { Handle::<Region>::get(region) }?.take()?;
        let d = RegionDriver::new(r, Box::new(transport), Box::new(clock), Box::new(host));
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
