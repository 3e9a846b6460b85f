//! `org.shardline.Coordinator` (the sans-IO step API) and the queries it shares with
//! `CoordinatorDriver` (`org.shardline.CoordinatorQueries`).

use jni::objects::{JByteArray, JObjectArray, JString};
use jni::sys::{jbyteArray, jint, jlong, jobject};
use jni::JNIEnv;

use serde_json::Value;
use shardline_bind::machine_init;
use shardline_bind::ops::machines;
use shardline_core::coordinator::LeaseGrant;
use shardline_core::coordinator::{Coordinator, CoordinatorInput};
use shardline_core::host::{CoordinatorDriver, CoordinatorPipeline};
use shardline_core::model::Address;
use shardline_core::protocol::FencingToken;

use crate::boundary::{Failure, Result};
use crate::convert::{member, opt_from_json, opt_long, string, unsigned, utf8_json, with_bytes};
use crate::envelope;
use crate::handle::{self, free_native, Handle};
use crate::native::native;
use crate::ops;
use crate::outputs::rows;
use crate::strategy::StrategyHandle;
use shardline_bind::rows::Rows;

native! { fn Java_org_shardline_Coordinator_nNew(
    env, config_json: JString<'l>, strategy: jlong, self_address: JString<'l>,
) -> jlong {
    let config: Option<Value> = opt_from_json(env, &config_json, "coordinator config")?;
    let a = string(env, &self_address, "selfAddress")?;
    let take = || unsafe { handle::with::<StrategyHandle, _>(strategy, StrategyHandle::take) };
    let c = machine_init::coordinator_then((&a, "selfAddress"), config.as_ref(), take)?;
    Ok(Handle::into_raw("coordinator", c))
}}

free_native!(Java_org_shardline_Coordinator_nFree, Coordinator);

native! { fn Java_org_shardline_Coordinator_nStart(_, h: jlong, now: jlong) {
    let now = unsigned(now, "nowMs")?;
    unsafe { handle::run::<Coordinator>(h, |c| c.start(now)) }
}}

native! { fn Java_org_shardline_Coordinator_nOnTimeout(_, h: jlong, now: jlong) {
    let now = unsigned(now, "nowMs")?;
    unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.on_timeout(now)?)) }
}}

native! { fn Java_org_shardline_Coordinator_nDrain(env, h: jlong, at: jlong, cap: jint) -> jbyteArray {
    let outputs = unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.drain_outputs())) }?;
    rows(env, at, cap, &outputs, Rows::coordinator)
}}

fn token(x: jlong) -> Result<FencingToken> {
    Ok(FencingToken(unsigned(x, "token")?))
}

/// Every input but `Member`; `kind` numbers are shared with `Coordinator.java` and
/// `CoordinatorDriver.java`. `c` is an envelope (`Envelope.flat()`) or a stored state (UTF-8
/// JSON), in the scratch memory at `at` when that is not 0 (see `convert::with_bytes`).
#[allow(clippy::too_many_arguments)]
pub fn input(
    env: &mut JNIEnv,
    kind: jint,
    a: &JString,
    c: &JByteArray,
    at: jlong,
    x: jlong,
    y: jlong,
) -> Result<CoordinatorInput> {
    Ok(match kind {
        0 => CoordinatorInput::Receive(with_bytes(env, c, at, "envelope", envelope::read)?),
        1 => CoordinatorInput::MemberRemoved {
            address: Address::parse(&string(env, a, "address")?)?.to_string(),
        },
        2 => CoordinatorInput::Reachability {
            address: Address::parse(&string(env, a, "address")?)?.to_string(),
            reachable: x != 0,
        },
        3 => CoordinatorInput::RegionTerminated {
            region: string(env, a, "region")?,
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
        // Stored state crosses as UTF-8, the form hosts store, so no `String` is decoded.
        9 => CoordinatorInput::StateLoaded(Box::new(utf8_json(env, c, at, "stored state")?)),
        10 => CoordinatorInput::StateLoadFailed { fenced: x != 0 },
        11 => CoordinatorInput::StoreFailed { fenced: x != 0 },
        12 => CoordinatorInput::PreparingForShutdown,
        13 => CoordinatorInput::Stop,
        14 => CoordinatorInput::Drain {
            region: string(env, a, "region")?,
        },
        15 => CoordinatorInput::Undrain {
            region: string(env, a, "region")?,
        },
        other => {
            return Err(Failure::invalid_argument(format!(
                "unknown input kind {other}"
            )))
        }
    })
}

native! { fn Java_org_shardline_Coordinator_nInput(
    env, h: jlong, now: jlong, kind: jint, a: JString<'l>, c: JByteArray<'l>, at: jlong, x: jlong,
    y: jlong,
) {
    let now = unsigned(now, "nowMs")?;
    if kind == 0 {
        // The step's hot input is made where it is used: an input is large, and each move of
        // one through a Result is a copy.
        let e = with_bytes(env, &c, at, "envelope", envelope::read)?;
        let step = |co: &mut Coordinator| Ok(co.handle(now, CoordinatorInput::Receive(e))?);
        return unsafe { handle::with::<Coordinator, _>(h, step) };
    }
    let input = input(env, kind, &a, &c, at, x, y)?;
    unsafe { handle::with::<Coordinator, _>(h, |co| Ok(co.handle(now, input)?)) }
}}

native! { fn Java_org_shardline_Coordinator_nMember(
    env, h: jlong, now: jlong, fields: JObjectArray<'l>, up_number: jint,
) {
    let now = unsigned(now, "nowMs")?;
    let m = member(env, &fields, up_number)?;
    unsafe { handle::with::<Coordinator, _>(h, |c| Ok(c.handle(now, CoordinatorInput::Member(Box::new(m)))?)) }
}}

// ---- queries shared by Coordinator and CoordinatorDriver -----------------------------------

/// What holds the coordinator behind a handle, as `AbstractCoordinator.java` numbers it.
const KINDS: [&str; 3] = ["Coordinator", "CoordinatorDriver", "AsyncCoordinatorDriver"];

/// Runs `f` on the coordinator behind a handle of kind `kind` (see [`KINDS`]).
unsafe fn query<R>(h: jlong, kind: jint, f: impl FnOnce(&Coordinator) -> Result<R>) -> Result<R> {
    // SAFETY: Java passes a live handle of the kind it says.
    unsafe {
        match kind {
            0 => handle::with::<Coordinator, _>(h, |c| f(c)),
            1 => handle::with::<CoordinatorDriver, _>(h, |d| f(d.coordinator())),
            _ => handle::with::<CoordinatorPipeline, _>(h, |p| f(p.coordinator())),
        }
    }
}

native! {
/// The queries (`shardline_bind::ops::machines::coordinator`), named in
/// `AbstractCoordinator.java`.
fn Java_org_shardline_CoordinatorQueries_nOp(
    env, h: jlong, kind: jint, op: JString<'l>, args: JObjectArray<'l>,
) -> jobject {
    let name = KINDS.get(kind as usize).copied().unwrap_or("Coordinator");
    ops::call(env, name, &op, &args, |a| {
        // SAFETY: the Java side passes a live handle of the kind it names.
        unsafe { query(h, kind, |c| Ok(machines::coordinator(c, a)?)) }
    })
}}

native! { fn Java_org_shardline_CoordinatorQueries_nNextDeadline(
    _, h: jlong, kind: jint,
) -> jlong {
    unsafe {
        query(h, kind, |c| Ok(opt_long(c.next_deadline())))
    }
}}
