//! `org.shardline.AsyncCoordinatorDriver`'s native half: the core's `CoordinatorPipeline`. Each
//! host call is handed to Java as `[ticket, method, args]` (the call
//! `shardline_bind::pipeline_host` derives, in Java's shapes: an envelope in `Envelope.java`'s
//! native form, a record as JSON text), and the answer of the `CompletionStage` Java made of it
//! comes back whenever it completes, read by the rules every language shares.

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::sys::{jbyteArray, jint, jlong, jobject};

use shardline_bind::driver_host::Spelling;
use shardline_bind::pipeline_host;
use shardline_bind::tree::Tree;
use shardline_core::coordinator::{Coordinator, CoordinatorInput};
use shardline_core::host::{Completion, CoordinatorPipeline, Pending, Ticket};
use shardline_core::replay::CoordinatorStep;

use crate::boundary::Failure;
use crate::convert::{member, unsigned};
use crate::handle::{self, free_native, Handle};
use crate::host::java_args;
use crate::native::native;
use crate::ops;
use crate::outputs::rows;
use shardline_bind::rows::Rows;

native! { fn Java_org_shardline_AsyncCoordinatorDriver_nNew(_, coordinator: jlong) -> jlong {
    let c = unsafe { Handle::<Coordinator>::get(coordinator) }?.take()?;
    Ok(Handle::into_raw("async coordinator driver", CoordinatorPipeline::new(c)))
}}

free_native!(
    Java_org_shardline_AsyncCoordinatorDriver_nFree,
    CoordinatorPipeline
);

native! {
/// Kind -1: start; -2: a timer; any other: a step input numbered as in `Coordinator.nInput`.
fn Java_org_shardline_AsyncCoordinatorDriver_nStep(
    env, h: jlong, now: jlong, kind: jint, a: JString<'l>, c: JByteArray<'l>, x: jlong,
) {
    let now = unsigned(now, "nowMs")?;
    let step = match kind {
        -1 => CoordinatorStep::Start,
        -2 => CoordinatorStep::Timeout,
        k => CoordinatorStep::Input(crate::coordinator::input(env, k, &a, &c, 0, x, 0)?),
    };
    unsafe { handle::with::<CoordinatorPipeline, _>(h, |p| Ok(p.step(now, step)?)) }
}}

native! { fn Java_org_shardline_AsyncCoordinatorDriver_nMember(
    env, h: jlong, now: jlong, fields: JObjectArray<'l>, up_number: jint,
) {
    let now = unsigned(now, "nowMs")?;
    let step = CoordinatorStep::Input(CoordinatorInput::Member(Box::new(member(env, &fields, up_number)?)));
    unsafe { handle::with::<CoordinatorPipeline, _>(h, |p| Ok(p.step(now, step)?)) }
}}

native! {
/// The next host call, `[ticket, method, args]`, or null while there is none.
fn Java_org_shardline_AsyncCoordinatorDriver_nNextCall(env, h: jlong, now: jlong) -> jobject {
    let now = unsigned(now, "nowMs")?;
    let next = unsafe {
        handle::with::<CoordinatorPipeline, _>(h, |p| Ok(pipeline_host::next_call(p, now)?))
    }?;
    let row = match next {
        None => Tree::Null,
        Some((ticket, call)) => Tree::Array(vec![
            Tree::Integer(ticket.0.into()),
            Tree::Text(Spelling::Camel.spell(call.method)),
            Tree::Array(java_args(call.method, call.args)?),
        ]),
    };
    ops::to_java(env, &row)
}}

native! {
/// What call `ticket`'s stage completed with; a load's answer is the stored state's JSON text.
fn Java_org_shardline_AsyncCoordinatorDriver_nAnswer(
    env, h: jlong, now: jlong, ticket: jlong, value: JObject<'l>,
) {
    let now = unsigned(now, "nowMs")?;
    let ticket = Ticket(unsigned(ticket, "ticket")?);
    let value = ops::tree_of(env, &value, "the answer", 0)?;
    unsafe {
        handle::with::<CoordinatorPipeline, _>(h, |p| {
            let value = match (p.pending(ticket), value) {
                (Some(Pending::Load), Tree::Text(json)) => serde_json::from_str(&json)
                    .map_err(|e| Failure::invalid_argument(format!(
                        "Store.load's stage completed with invalid JSON: {e}"
                    )))?,
                (_, v) => v,
            };
            Ok(pipeline_host::answer(p, now, ticket, &value, Spelling::Camel)?)
        })
    }
}}

native! { fn Java_org_shardline_AsyncCoordinatorDriver_nFail(_, h: jlong, now: jlong, ticket: jlong) {
    let now = unsigned(now, "nowMs")?;
    let ticket = Ticket(unsigned(ticket, "ticket")?);
    unsafe {
        handle::with::<CoordinatorPipeline, _>(h, |p| Ok(p.complete(now, ticket, Completion::Failed)?))
    }
}}

native! { fn Java_org_shardline_AsyncCoordinatorDriver_nInFlight(_, h: jlong) -> jint {
    unsafe { handle::with::<CoordinatorPipeline, _>(h, |p| Ok(p.in_flight() as jint)) }
}}

native! { fn Java_org_shardline_AsyncCoordinatorDriver_nTakeNotices(
    env, h: jlong, at: jlong, cap: jint,
) -> jbyteArray {
    let notices = unsafe { handle::with::<CoordinatorPipeline, _>(h, |p| Ok(p.take_notices())) }?;
    rows(env, at, cap, &notices, Rows::notice)
}}
