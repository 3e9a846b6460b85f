//! State-machine outputs as Java objects (`CoordinatorOutput`, `RegionOutput`, `Notice`).
//!
//! Rust hands each output's fields to a static factory on the Java side, which builds the
//! record; the tag numbers are shared with those factories. Messages and stored records stay
//! JSON: the host ships and stores them without looking inside.

use jni::objects::{JObject, JValue};
use jni::sys::{jlong, jobjectArray};
use jni::JNIEnv;

use shardline_core::coordinator::{LeaseRequest, Notice, Output};
use shardline_core::region::{RegionNotice, RegionOutput};

use crate::boundary::{Failure, Result};
use crate::convert::{endpoint_id, to_json};

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

fn coordinator_fields(o: Output) -> Fields {
    let token = |t: shardline_core::protocol::FencingToken| t.0.min(i64::MAX as u64) as jlong;
    match o {
        Output::Send(e) => Fields {
            tag: 0,
            a: endpoint_id(&e.from).map(str::to_owned),
            b: endpoint_id(&e.to).map(str::to_owned),
            c: Some(to_json(&e.message)),
            token: -1,
            ..Default::default()
        },
        Output::Persist { token: t, record } => Fields {
            tag: 1,
            c: Some(to_json(&record)),
            token: token(t),
            ..Default::default()
        },
        Output::SaveSnapshot { token: t, snapshot } => Fields {
            tag: 2,
            c: Some(to_json(&snapshot)),
            token: token(t),
            ..Default::default()
        },
        Output::Lease(LeaseRequest::Acquire) => Fields {
            tag: 3,
            token: -1,
            ..Default::default()
        },
        Output::Lease(LeaseRequest::Renew { token: t }) => Fields {
            tag: 4,
            token: token(t),
            ..Default::default()
        },
        Output::Lease(LeaseRequest::Release { token: t }) => Fields {
            tag: 5,
            token: token(t),
            ..Default::default()
        },
        Output::LoadState { token: t } => Fields {
            tag: 6,
            token: token(t),
            ..Default::default()
        },
        Output::Notice(n) => notice_fields(to_json(&n)),
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

fn opt<'a>(env: &mut JNIEnv<'a>, s: &Option<String>) -> jni::errors::Result<JObject<'a>> {
    Ok(match s {
        Some(s) => env.new_string(s)?.into(),
        None => JObject::null(),
    })
}

fn build<'a>(env: &mut JNIEnv<'a>, class: &str, f: &Fields) -> jni::errors::Result<JObject<'a>> {
    let a = opt(env, &f.a)?;
    let b = opt(env, &f.b)?;
    let c = opt(env, &f.c)?;
    match class {
        "coordinator" => env
            .call_static_method(
                "org/shardline/CoordinatorOutput",
                "of",
                "(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;J)Lorg/shardline/CoordinatorOutput;",
                &[
                    JValue::Int(f.tag),
                    JValue::Object(&a),
                    JValue::Object(&b),
                    JValue::Object(&c),
                    JValue::Long(f.token),
                ],
            )?
            .l(),
        "region" => {
            let list: JObject = match &f.list {
                Some(items) => {
                    let array = env.new_object_array(items.len() as i32, "java/lang/String", JObject::null())?;
                    for (i, s) in (0..).zip(items) {
                        let js = env.new_string(s)?;
                        env.set_object_array_element(&array, i, &js)?;
                        env.delete_local_ref(js)?;
                    }
                    array.into()
                }
                None => JObject::null(),
            };
            let payload: JObject = match &f.payload {
                Some(p) => env.byte_array_from_slice(p)?.into(),
                None => JObject::null(),
            };
            env.call_static_method(
                "org/shardline/RegionOutput",
                "of",
                "(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;[B)Lorg/shardline/RegionOutput;",
                &[
                    JValue::Int(f.tag),
                    JValue::Object(&a),
                    JValue::Object(&b),
                    JValue::Object(&c),
                    JValue::Object(&list),
                    JValue::Object(&payload),
                ],
            )?
            .l()
        }
        _ => env
            .call_static_method(
                "org/shardline/Notice",
                "of",
                "(Ljava/lang/String;Ljava/lang/String;)Lorg/shardline/Notice;",
                &[JValue::Object(&a), JValue::Object(&c)],
            )?
            .l(),
    }
}

fn array(env: &mut JNIEnv, class: &str, element: &str, items: Vec<Fields>) -> Result<jobjectArray> {
    let len = i32::try_from(items.len()).map_err(|_| Failure::invalid_state("too many outputs"))?;
    let out = env.new_object_array(len, element, JObject::null())?;
    for (i, f) in (0..len).zip(items.iter()) {
        // One frame per element: an output may hold many strings and a payload.
        env.with_local_frame(8, |env| -> jni::errors::Result<()> {
            let o = build(env, class, f)?;
            env.set_object_array_element(&out, i, o)
        })?;
    }
    Ok(out.into_raw())
}

pub fn coordinator_outputs(env: &mut JNIEnv, outputs: Vec<Output>) -> Result<jobjectArray> {
    let fields = outputs.into_iter().map(coordinator_fields).collect();
    array(
        env,
        "coordinator",
        "org/shardline/CoordinatorOutput",
        fields,
    )
}

pub fn region_outputs(env: &mut JNIEnv, outputs: Vec<RegionOutput>) -> Result<jobjectArray> {
    let fields = outputs.into_iter().map(region_fields).collect();
    array(env, "region", "org/shardline/RegionOutput", fields)
}

pub fn coordinator_notices(env: &mut JNIEnv, notices: Vec<Notice>) -> Result<jobjectArray> {
    let fields = notices.iter().map(|n| notice_fields(to_json(n))).collect();
    array(env, "notice", "org/shardline/Notice", fields)
}

pub fn region_notices(env: &mut JNIEnv, notices: Vec<RegionNotice>) -> Result<jobjectArray> {
    let fields = notices.iter().map(|n| notice_fields(to_json(n))).collect();
    array(env, "notice", "org/shardline/Notice", fields)
}
