//! `org.shardline.Coordinator` (the sans-IO step API) and the queries it shares with
//! `CoordinatorDriver` (`org.shardline.CoordinatorQueries`).

use jni::objects::{JByteArray, JObjectArray, JString};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jobjectArray, jstring, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;

use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::{Coordinator, CoordinatorConfig, CoordinatorInput};
use shardline_core::host::CoordinatorDriver;
use shardline_core::model::Address;
use shardline_core::protocol::FencingToken;

use crate::boundary::{Failure, Result};
use crate::convert::{
    envelope, from_utf8_json, member, new_string, opt_from_json, opt_long, opt_new_string,
    opt_string, string, string_array, unsigned,
};
use crate::handle::{self, free_native, Handle};
use crate::native::native;
use crate::outputs::{rows, Rows};
use crate::strategy::Strategy;

pub fn config(env: &mut JNIEnv, json: &JString) -> Result<CoordinatorConfig> {
    match opt_from_json(env, json, "coordinator config")? {
        None => Ok(CoordinatorConfig::default()),
        Some(value) => Ok(CoordinatorConfig::from_json(&value)?),
    }
}

native! { fn Java_org_shardline_Coordinator_nNew(
    env, config_json: JString<'l>, strategy: jlong, self_address: JString<'l>,
) -> jlong {
    let config = config(env, &config_json)?;
    let a = Address::parse(&string(env, &self_address, "selfAddress")?)?;
    // Validate everything before taking the strategy, so a failure leaves it usable.
    config.validate()?;
    let s = unsafe { Handle::<Strategy>::get(strategy) }?.take()?;
    let c = Coordinator::new(config, s, a)?;
    Ok(Handle::into_raw("coordinator", c))
}}

free_native!(Java_org_shardline_Coordinator_nFree, Coordinator);

native! { fn Java_org_shardline_Coordinator_nStart(_, h: jlong, now: jlong) {
    let now = unsigned(now, "nowMs")?;
    unsafe {
        handle::with::<Coordinator, _>(h, |c| {
            c.start(now);
            Ok(())
        })
    }
}}

native! { fn Java_org_shardline_Coordinator_nOnTimeout(_, h: jlong, now: jlong) {
    let now = unsigned(now, "nowMs")?;
    unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.on_timeout(now)?)) }
}}

native! { fn Java_org_shardline_Coordinator_nDrain(env, h: jlong) -> jbyteArray {
    let outputs = unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.drain_outputs())) }?;
    rows(env, &outputs, Rows::coordinator)
}}

fn token(x: jlong) -> Result<FencingToken> {
    Ok(FencingToken(unsigned(x, "token")?))
}

native! {
/// Every input but `Member`; `kind` numbers are shared with `Coordinator.java`. `c` is UTF-8
/// JSON (a message, a stored state).
fn Java_org_shardline_Coordinator_nInput(
    env, h: jlong, now: jlong, kind: jint, a: JString<'l>, b: JString<'l>, c: JByteArray<'l>,
    x: jlong, y: jlong,
) {
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
        9 => CoordinatorInput::StateLoaded(from_utf8_json(env, &c, "stored state")?),
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
}}

native! { fn Java_org_shardline_Coordinator_nMember(
    env, h: jlong, now: jlong, fields: JObjectArray<'l>, up_number: jint,
) {
    let now = unsigned(now, "nowMs")?;
    let m = member(env, &fields, up_number)?;
    unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.handle(now, CoordinatorInput::Member(m))?)) }
}}

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

native! { fn Java_org_shardline_CoordinatorQueries_nPhase(
    env, h: jlong, driver: jboolean,
) -> jstring {
    // SAFETY: the Java side passes a live handle of the kind `driver` names.
    let phase = unsafe { query(h, driver, |c| Ok(c.phase())) }?;
    new_string(env, shardline_core::coordinator::phase_name(phase))
}}

native! { fn Java_org_shardline_CoordinatorQueries_nToken(_, h: jlong, driver: jboolean) -> jlong {
    unsafe {
        query(h, driver, |c| Ok(opt_long(c.token().map(|t| t.0))))
    }
}}

native! { fn Java_org_shardline_CoordinatorQueries_nNextDeadline(
    _, h: jlong, driver: jboolean,
) -> jlong {
    unsafe {
        query(h, driver, |c| Ok(opt_long(c.next_deadline())))
    }
}}

native! { fn Java_org_shardline_CoordinatorQueries_nHomeOf(
    env, h: jlong, driver: jboolean, shard: JString<'l>,
) -> jstring {
    let shard = string(env, &shard, "shard")?;
    let home = unsafe { query(h, driver, |c| Ok(c.state().home_of(&shard).cloned())) }?;
    opt_new_string(env, home.as_deref())
}}

native! {
/// What = 0: regions in map order; 1: shards of `arg` (oldest first); 2: hand-offs in
/// progress; 3: unallocated shards; 4: metrics as rows (`crate::convert::metric_rows`).
fn Java_org_shardline_CoordinatorQueries_nList(
    env, h: jlong, driver: jboolean, what: jint, arg: JString<'l>,
) -> jobjectArray {
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
                3 => c.state().unallocated().cloned().collect(),
                _ => crate::convert::metric_rows(&c.metrics()),
            })
        })
    }?;
    string_array(env, items.iter())
}}

native! { fn Java_org_shardline_CoordinatorQueries_nSnapshot(
    env, h: jlong, driver: jboolean,
) -> jstring {
    let json = unsafe {
        query(h, driver, |c| {
            Ok(crate::convert::to_json(&c.state().snapshot()))
        })
    }?;
    crate::convert::new_string(env, &json)
}}

native! { fn Java_org_shardline_CoordinatorQueries_nIsAlive(
    env, h: jlong, driver: jboolean, region: JString<'l>,
) -> jboolean {
    let r = string(env, &region, "region")?;
    let alive = unsafe { query(h, driver, |c| Ok(c.is_alive(&r))) }?;
    Ok(if alive { JNI_TRUE } else { JNI_FALSE })
}}
