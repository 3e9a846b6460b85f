//! `org.shardline.CoordinatorDriver` and `org.shardline.RegionDriver`: the core's callback
//! drivers with Java host objects (Transport, Clock, Lease, Store, EntityHost) behind the
//! core's traits. An `InMemoryLease` / `InMemoryStore` handed to a driver is used natively,
//! without a round trip through Java.

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jbyteArray, jint, jlong};
use jni::JNIEnv;

use shardline_bind::driver_host as adapt;
use shardline_core::coordinator::Coordinator;
use shardline_core::host::Store;
use shardline_core::host::{Clock, CoordinatorDriver, RegionDriver, Transport};
use shardline_core::host::{InMemoryLease, InMemoryStore, Lease};
use shardline_core::region::Region;

use crate::backends;
use crate::boundary::Result;
use crate::convert::{bytes, member, opt_long, string};
use crate::handle::{self, free_native, Handle};
use crate::host::JavaHost;
use crate::native::native;
use crate::outputs::rows;
use crate::region::region_input;
use shardline_bind::rows::Rows;

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

/// `nPoll` and `nTakeNotices`, alike for both drivers.
macro_rules! queue_natives {
    ($poll:ident, $notices:ident, $t:ty) => {
        native! { fn $poll(_, h: jlong) -> jlong {
            Ok(opt_long(unsafe { handle::with::<$t, _>(h, |d| Ok(d.poll()?)) }?))
        }}

        native! { fn $notices(env, h: jlong, at: jlong, cap: jint) -> jbyteArray {
            let notices = unsafe { handle::with::<$t, _>(h, |d| Ok(d.take_notices())) }?;
            rows(env, at, cap, &notices, Rows::notice)
        }}
    };
}

queue_natives!(
    Java_org_shardline_CoordinatorDriver_nPoll,
    Java_org_shardline_CoordinatorDriver_nTakeNotices,
    CoordinatorDriver
);

queue_natives!(
    Java_org_shardline_RegionDriver_nPoll,
    Java_org_shardline_RegionDriver_nTakeNotices,
    RegionDriver
);

// ---- CoordinatorDriver ---------------------------------------------------------------------

native! {
#[allow(clippy::too_many_arguments)]
fn Java_org_shardline_CoordinatorDriver_nNew(
    env, coordinator: jlong, transport: JObject<'l>, clock: JObject<'l>, lease_handle: jlong,
    lease: JObject<'l>, store_handle: jlong, store: JObject<'l>,
) -> jlong {
    let (transport, clock) = transport_and_clock(env, &transport, &clock)?;
    let lease: Box<dyn Lease> = if lease_handle != 0 {
        Box::new(backends::shared::<InMemoryLease>(lease_handle)?)
    } else {
        adapt::lease(JavaHost::new(env, &lease, "lease")?)
    };
    let store: Box<dyn Store> = if store_handle != 0 {
        Box::new(backends::shared::<InMemoryStore>(store_handle)?)
    } else {
        adapt::store(JavaHost::new(env, &store, "store")?)
    };
    let c = unsafe { Handle::<Coordinator>::get(coordinator) }?.take()?;
    let d = CoordinatorDriver::new(c, transport, clock, lease, store);
    Ok(Handle::into_raw("coordinator driver", d))
}}

free_native!(
    Java_org_shardline_CoordinatorDriver_nFree,
    CoordinatorDriver
);

native! {
/// Kind -1: start; -2: leaseLost; any other: a step input, numbered as in
/// `Coordinator.nInput` (`x` its flag).
fn Java_org_shardline_CoordinatorDriver_nInput(
    env, h: jlong, kind: jint, a: JString<'l>, c: JByteArray<'l>, x: jlong,
) {
    let input = match kind {
        -1 | -2 => None,
        k => Some(crate::coordinator::input(env, k, &a, &c, 0, x, 0)?),
    };
    unsafe {
        handle::with::<CoordinatorDriver, _>(h, |d| {
            Ok(match input {
                Some(i) => d.input(i),
                None if kind == -1 => d.start(),
                None => d.lease_lost(),
            }?)
        })
    }
}}

native! { fn Java_org_shardline_CoordinatorDriver_nMember(
    env, h: jlong, fields: JObjectArray<'l>, up_number: jint,
) {
    let m = member(env, &fields, up_number)?;
    unsafe { handle::with::<CoordinatorDriver, _>(h, |d| Ok(d.member(m)?)) }
}}

// ---- RegionDriver --------------------------------------------------------------------------

native! { fn Java_org_shardline_RegionDriver_nNew(
    env, region: jlong, transport: JObject<'l>, clock: JObject<'l>, host: JObject<'l>,
) -> jlong {
    let (transport, clock) = transport_and_clock(env, &transport, &clock)?;
    let host = adapt::entity_host(JavaHost::new(env, &host, "entity host")?);
    let r = unsafe { Handle::<Region>::get(region) }?.take()?;
    let d = RegionDriver::new(r, transport, clock, host);
    Ok(Handle::into_raw("region driver", d))
}}

free_native!(Java_org_shardline_RegionDriver_nFree, RegionDriver);

native! { fn Java_org_shardline_RegionDriver_nStart(_, h: jlong) {
    unsafe {
        handle::with::<RegionDriver, _>(h, |d| Ok(d.start()?))
    }
}}

native! { fn Java_org_shardline_RegionDriver_nRoute(
    env, h: jlong, shard: JString<'l>, entity: JString<'l>, payload: JByteArray<'l>,
) {
    let shard = crate::convert::opt_string(env, &shard)?;
    let entity = string(env, &entity, "entityId")?;
    let payload = bytes(env, &payload, "payload")?;
    let route = |d: &mut RegionDriver| match &shard {
        Some(s) => d.route_to_shard(s, &entity, payload),
        None => d.route(&entity, payload),
    };
    unsafe { handle::with::<RegionDriver, _>(h, |d| Ok(route(d)?)) }
}}

native! {
/// Kinds as in `Region.nInput`.
fn Java_org_shardline_RegionDriver_nInput(
    env, h: jlong, kind: jint, a: JString<'l>, b: JString<'l>, c: JByteArray<'l>,
) {
    let input = region_input(env, kind, &a, &b, &c, 0)?;
    unsafe { handle::with::<RegionDriver, _>(h, |d| Ok(d.input(input)?)) }
}}
