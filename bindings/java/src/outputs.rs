//! State-machine outputs as Java objects (`CoordinatorOutput`, `RegionOutput`, `Notice`).
//!
//! Rust hands each output's fields to a static factory on the Java side, which builds the
//! record; the tag numbers are shared with those factories. Messages and stored records stay
//! JSON: the host ships and stores them without looking inside.

use jni::objects::{JObject, JValue};
use jni::signature::ReturnType;
use jni::sys::{jlong, jobjectArray, jvalue};
use jni::JNIEnv;

use shardline_core::coordinator::{CoordinatorNotice, CoordinatorOutput, LeaseRequest};
use shardline_core::region::{RegionNotice, RegionOutput};

use crate::boundary::{Failure, Result};
use crate::classes::{Class, StaticMethod};
use crate::convert::{endpoint_id, new_string, string_array, to_json};

/// Fields of one output; strings are optional, `token` is -1 when unused.
#[derive(Default)]
struct Fields {
    tag: i32,
    a: Option<String>,
    b: Option<String>,
    c: Option<String>,
    token: jlong,
    list: Option<Vec<String>>,
    payload: Option<Vec<u8>>,
}

fn notice_type(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_default()
}

fn coordinator_fields(o: CoordinatorOutput) -> Fields {
    let token = |t: shardline_core::protocol::FencingToken| t.0.min(i64::MAX as u64) as jlong;
    match o {
        CoordinatorOutput::Send(e) => Fields {
            tag: 0,
            a: endpoint_id(&e.from).map(str::to_owned),
            b: endpoint_id(&e.to).map(str::to_owned),
            c: Some(to_json(&e.message)),
            token: -1,
            ..Default::default()
        },
        CoordinatorOutput::Persist { token: t, record } => Fields {
            tag: 1,
            c: Some(to_json(&record)),
            token: token(t),
            ..Default::default()
        },
        CoordinatorOutput::SaveSnapshot { token: t, snapshot } => Fields {
            tag: 2,
            c: Some(to_json(&snapshot)),
            token: token(t),
            ..Default::default()
        },
        CoordinatorOutput::Lease(LeaseRequest::Acquire) => Fields {
            tag: 3,
            token: -1,
            ..Default::default()
        },
        CoordinatorOutput::Lease(LeaseRequest::Renew { token: t }) => Fields {
            tag: 4,
            token: token(t),
            ..Default::default()
        },
        CoordinatorOutput::Lease(LeaseRequest::Release { token: t }) => Fields {
            tag: 5,
            token: token(t),
            ..Default::default()
        },
        CoordinatorOutput::LoadState { token: t } => Fields {
            tag: 6,
            token: token(t),
            ..Default::default()
        },
        CoordinatorOutput::Notice(n) => notice_fields(to_json(&n)),
    }
}

fn notice_fields(json: String) -> Fields {
    Fields {
        tag: 7,
        a: Some(notice_type(&json)),
        c: Some(json),
        token: -1,
        ..Default::default()
    }
}

fn region_fields(o: RegionOutput) -> Fields {
    match o {
        RegionOutput::Send(e) => Fields {
            tag: 0,
            a: endpoint_id(&e.from).map(str::to_owned),
            b: endpoint_id(&e.to).map(str::to_owned),
            c: Some(to_json(&e.message)),
            ..Default::default()
        },
        RegionOutput::StartShard { shard, entities } => Fields {
            tag: 1,
            a: Some(shard),
            list: Some(entities),
            ..Default::default()
        },
        RegionOutput::StartEntities { shard, entities } => Fields {
            tag: 2,
            a: Some(shard),
            list: Some(entities),
            ..Default::default()
        },
        RegionOutput::Deliver {
            shard,
            entity,
            payload,
        } => Fields {
            tag: 3,
            a: Some(shard),
            b: Some(entity),
            payload: Some(payload),
            ..Default::default()
        },
        RegionOutput::StopShard { shard } => Fields {
            tag: 4,
            a: Some(shard),
            ..Default::default()
        },
        RegionOutput::Undeliverable {
            shard,
            entity,
            payload,
            reason,
        } => Fields {
            tag: 5,
            a: Some(shard),
            b: Some(entity),
            c: Some(reason),
            payload: Some(payload),
            ..Default::default()
        },
        RegionOutput::Stopped => Fields {
            tag: 6,
            ..Default::default()
        },
        RegionOutput::Notice(n) => notice_fields(to_json(&n)),
    }
}

fn opt<'a>(env: &mut JNIEnv<'a>, s: &Option<String>) -> Result<JObject<'a>> {
    Ok(match s {
        // SAFETY: a fresh local reference to a String.
        Some(s) => unsafe { JObject::from_raw(new_string(env, s)?) },
        None => JObject::null(),
    })
}

static COORDINATOR_OUTPUT: Class = Class::new("org/shardline/CoordinatorOutput");
static REGION_OUTPUT: Class = Class::new("org/shardline/RegionOutput");
static NOTICE: Class = Class::new("org/shardline/Notice");
static COORDINATOR_OUTPUT_OF: StaticMethod = StaticMethod::new(
    &COORDINATOR_OUTPUT,
    "of",
    "(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;J)Lorg/shardline/CoordinatorOutput;",
);
static REGION_OUTPUT_OF: StaticMethod = StaticMethod::new(
    &REGION_OUTPUT,
    "of",
    "(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;[B)Lorg/shardline/RegionOutput;",
);
static NOTICE_OF: StaticMethod = StaticMethod::new(
    &NOTICE,
    "of",
    "(Ljava/lang/String;Ljava/lang/String;)Lorg/shardline/Notice;",
);

/// Calls a cached static factory returning an object.
fn factory<'a>(
    env: &mut JNIEnv<'a>,
    method: &'static StaticMethod,
    args: &[JValue],
) -> Result<JObject<'a>> {
    let (class, id) = method.get(env)?;
    let args: Vec<jvalue> = args.iter().map(|a| a.as_jni()).collect();
    // SAFETY: `id` is `method`'s own id on `class`, and `args` match its signature.
    Ok(unsafe { env.call_static_method_unchecked(class, id, ReturnType::Object, &args) }?.l()?)
}

fn build<'a>(env: &mut JNIEnv<'a>, class: &str, f: &Fields) -> Result<JObject<'a>> {
    let a = opt(env, &f.a)?;
    let b = opt(env, &f.b)?;
    let c = opt(env, &f.c)?;
    match class {
        "coordinator" => factory(
            env,
            &COORDINATOR_OUTPUT_OF,
            &[
                JValue::Int(f.tag),
                JValue::Object(&a),
                JValue::Object(&b),
                JValue::Object(&c),
                JValue::Long(f.token),
            ],
        ),
        "region" => {
            let list: JObject = match &f.list {
                // SAFETY: a fresh local reference to a String[].
                Some(items) => unsafe { JObject::from_raw(string_array(env, items.iter())?) },
                None => JObject::null(),
            };
            let payload: JObject = match &f.payload {
                Some(p) => env.byte_array_from_slice(p)?.into(),
                None => JObject::null(),
            };
            factory(
                env,
                &REGION_OUTPUT_OF,
                &[
                    JValue::Int(f.tag),
                    JValue::Object(&a),
                    JValue::Object(&b),
                    JValue::Object(&c),
                    JValue::Object(&list),
                    JValue::Object(&payload),
                ],
            )
        }
        _ => factory(env, &NOTICE_OF, &[JValue::Object(&a), JValue::Object(&c)]),
    }
}

fn array(
    env: &mut JNIEnv,
    class: &str,
    element: &'static Class,
    items: Vec<Fields>,
) -> Result<jobjectArray> {
    let len = i32::try_from(items.len()).map_err(|_| Failure::invalid_state("too many outputs"))?;
    let element = element.get(env)?;
    let out = env.new_object_array(len, element, JObject::null())?;
    for (i, f) in (0..len).zip(items.iter()) {
        // One frame per element: an output may hold many strings and a payload.
        env.with_local_frame(8, |env| -> Result<()> {
            let o = build(env, class, f)?;
            Ok(env.set_object_array_element(&out, i, o)?)
        })?;
    }
    Ok(out.into_raw())
}

pub fn coordinator_outputs(
    env: &mut JNIEnv,
    outputs: Vec<CoordinatorOutput>,
) -> Result<jobjectArray> {
    let fields = outputs.into_iter().map(coordinator_fields).collect();
    array(env, "coordinator", &COORDINATOR_OUTPUT, fields)
}

pub fn region_outputs(env: &mut JNIEnv, outputs: Vec<RegionOutput>) -> Result<jobjectArray> {
    let fields = outputs.into_iter().map(region_fields).collect();
    array(env, "region", &REGION_OUTPUT, fields)
}

pub fn coordinator_notices(
    env: &mut JNIEnv,
    notices: Vec<CoordinatorNotice>,
) -> Result<jobjectArray> {
    let fields = notices.iter().map(|n| notice_fields(to_json(n))).collect();
    array(env, "notice", &NOTICE, fields)
}

pub fn region_notices(env: &mut JNIEnv, notices: Vec<RegionNotice>) -> Result<jobjectArray> {
    let fields = notices.iter().map(|n| notice_fields(to_json(n))).collect();
    array(env, "notice", &NOTICE, fields)
}
