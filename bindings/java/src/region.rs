//! `org.shardline.Region` (the sans-IO step API) and the queries it shares with
//! `RegionDriver` (`org.shardline.RegionQueries`).

use jni::objects::{JByteArray, JObjectArray, JString};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jobject, JNI_FALSE};
use jni::JNIEnv;

use serde_json::Value;
use shardline_bind::machine_init;
use shardline_bind::ops::machines;
use shardline_core::host::RegionDriver;
use shardline_core::region::{Region, RegionInput, ShardExtractor};

use crate::boundary::{Failure, Result};
use crate::convert::{
    bytes, opt_from_json, opt_long, opt_string, string, unsigned, utf8_json, with_bytes,
};
use crate::envelope;
use crate::handle::{self, free_native, Handle};
use crate::native::native;
use crate::ops;
use crate::outputs::rows;
use shardline_bind::rows::Rows;

native! {
/// `extractor`: a built-in extractor's description (`BuiltinExtractor.description`); null: the Java
/// side computes shard ids itself and only ever routes with a known shard.
fn Java_org_shardline_Region_nNew(
    env, config_json: JString<'l>, id: JString<'l>, node: JString<'l>, extractor: JString<'l>,
) -> jlong {
    let config: Option<Value> = opt_from_json(env, &config_json, "region config")?;
    let id = string(env, &id, "region id")?;
    let node = string(env, &node, "node")?;
    let extractor = match opt_from_json(env, &extractor, "extractor")? {
        Some(doc) => machine_init::extractor(doc, "extractor")?,
        None => ShardExtractor::custom(|entity| entity.into()),
    };
    let r = machine_init::region_named(&id, (&node, "node"), extractor, config.as_ref())?;
    Ok(Handle::into_raw("region", r))
}}

free_native!(Java_org_shardline_Region_nFree, Region);

native! { fn Java_org_shardline_Region_nStart(_, h: jlong, now: jlong) {
    let now = unsigned(now, "nowMs")?;
    unsafe { handle::run::<Region>(h, |r| r.start(now)) }
}}

native! { fn Java_org_shardline_Region_nOnTimeout(_, h: jlong, now: jlong) {
    let now = unsigned(now, "nowMs")?;
    unsafe { handle::run::<Region>(h, |r| r.on_timeout(now)) }
}}

native! { fn Java_org_shardline_Region_nRoute(
    env, h: jlong, now: jlong, shard: JString<'l>, entity: JString<'l>, payload: JByteArray<'l>,
) {
    let now = unsigned(now, "nowMs")?;
    let shard = opt_string(env, &shard)?;
    let entity = string(env, &entity, "entityId")?;
    let payload = bytes(env, &payload, "payload")?;
    let route = |r: &mut Region| match &shard {
        Some(s) => r.route_to_shard(now, s, &entity, payload),
        None => r.route(now, &entity, payload),
    };
    let rejected = |e: shardline_core::region::Rejected| Failure::invalid_state(e.to_string());
    unsafe { handle::with::<Region, _>(h, |r| route(r).map_err(rejected)) }
}}

native! {
/// `c` or the scratch memory at `at` as in `Coordinator.nInput`. Kind 0: receive(c=`Envelope.flat()`); 1: coordinatorChanged; 2: regionTerminated(a);
/// 3: shardStopped(a); 4: entityPassivated(a=shard, b=entity); 5: gracefulShutdown.
fn Java_org_shardline_Region_nInput(
    env, h: jlong, now: jlong, kind: jint, a: JString<'l>, b: JString<'l>, c: JByteArray<'l>,
    at: jlong,
) {
    let now = unsigned(now, "nowMs")?;
    let input = region_input(env, kind, &a, &b, &c, at)?;
    unsafe { handle::run::<Region>(h, |r| r.handle(now, input)) }
}}

pub fn region_input(
    env: &mut JNIEnv,
    kind: jint,
    a: &JString,
    b: &JString,
    c: &JByteArray,
    at: jlong,
) -> Result<RegionInput> {
    Ok(match kind {
        0 => RegionInput::Receive(with_bytes(env, c, at, "envelope", envelope::read)?),
        1 => RegionInput::CoordinatorChanged,
        2 => RegionInput::RegionTerminated {
            region: string(env, a, "region")?,
        },
        3 => RegionInput::ShardStopped {
            shard: string(env, a, "shard")?.into(),
        },
        4 => RegionInput::EntityPassivated {
            shard: string(env, a, "shard")?.into(),
            entity: string(env, b, "entityId")?.into(),
        },
        5 => RegionInput::GracefulShutdown,
        // The inputs that carry maps (reportLoads, updateOffer), as a step document in `c`.
        6 => utf8_json(env, c, at, "input")?,
        other => {
            return Err(Failure::invalid_argument(format!(
                "unknown input kind {other}"
            )))
        }
    })
}

native! { fn Java_org_shardline_Region_nDrain(env, h: jlong, at: jlong, cap: jint) -> jbyteArray {
    let outputs = unsafe { handle::with::<Region, _>(h, |r| Ok(r.drain_outputs())) }?;
    rows(env, at, cap, &outputs, Rows::region)
}}

// ---- queries shared by Region and RegionDriver ----------------------------------------------

unsafe fn query<R>(h: jlong, driver: jboolean, f: impl FnOnce(&Region) -> Result<R>) -> Result<R> {
    // SAFETY: Java passes a live handle of the kind it says.
    unsafe { handle::query(h, driver, RegionDriver::region, f) }
}

native! { fn Java_org_shardline_RegionQueries_nNextDeadline(
    _, h: jlong, driver: jboolean,
) -> jlong {
    // SAFETY: the Java side passes a live handle of the kind `driver` names.
    unsafe { query(h, driver, |r| Ok(opt_long(r.next_deadline()))) }
}}

native! {
/// The queries (`shardline_bind::ops::machines::region`), named in `AbstractRegion.java`.
fn Java_org_shardline_RegionQueries_nOp(
    env, h: jlong, driver: jboolean, op: JString<'l>, args: JObjectArray<'l>,
) -> jobject {
    let kind = if driver != JNI_FALSE { "RegionDriver" } else { "Region" };
    ops::call(env, kind, &op, &args, |a| {
        // SAFETY: the Java side passes a live handle of the kind `driver` names.
        unsafe { query(h, driver, |r| Ok(machines::region(r, a)?)) }
    })
}}
