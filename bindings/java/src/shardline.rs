//! `org.shardline.Shardline`: stateless functions (conformance decisions, entity -> shard).

use jni::objects::JString;
use jni::sys::{jboolean, jint, jobjectArray, jstring, JNI_FALSE};

use shardline_core::decide::decide_json;
use shardline_core::hashing::{actor_ts_shard_id, pekko_shard_id, string_hash};

use crate::boundary::Failure;
use crate::convert::{new_string, string};
use crate::native::native;

native! { fn Java_org_shardline_NativeLibrary_nVersion(env) -> jstring {
    new_string(env, shardline_core::VERSION)
}}

native! { fn Java_org_shardline_Shardline_nDecide(
    env, json: JString<'l>, explain: jboolean,
) -> jstring {
    let text = string(env, &json, "json")?;
    let out = decide_json(&text, explain != JNI_FALSE)?;
    new_string(env, &out)
}}

native! { fn Java_org_shardline_Shardline_nPekkoShardId(
    env, entity: JString<'l>, shards: jint,
) -> jstring {
    let entity = string(env, &entity, "entityId")?;
    new_string(env, &pekko_shard_id(&entity, shards)?)
}}

native! { fn Java_org_shardline_Shardline_nActorTsShardId(
    env, entity: JString<'l>, shards: jint,
) -> jint {
    let entity = string(env, &entity, "entityId")?;
    let n = u32::try_from(shards).map_err(|_| {
        Failure::invalid_argument(format!("numShards must be >= 1, got {shards}"))
    })?;
    // The shard is below n <= i32::MAX.
    Ok(actor_ts_shard_id(&entity, n)? as jint)
}}

native! { fn Java_org_shardline_Shardline_nMurmurStringHash(env, s: JString<'l>) -> jint {
    let s = string(env, &s, "string")?;
    Ok(string_hash(&s))
}}

native! {
/// Test hook for the panic boundary: a panic must come out as ShardlineException(PANIC).
fn Java_org_shardline_Shardline_nPanicForTest(_) {
    panic!("deliberate panic (test hook)")
}}

native! {
/// {from region or null, to region or null, message JSON}.
fn Java_org_shardline_Shardline_nParseEnvelope(env, json: JString<'l>) -> jobjectArray {
    let e: shardline_core::protocol::Envelope =
        crate::convert::from_json(env, &json, "envelope")?;
    let parts = [
        crate::convert::endpoint_id(&e.from).map(str::to_owned),
        crate::convert::endpoint_id(&e.to).map(str::to_owned),
        Some(crate::convert::to_json(&e.message)),
    ];
    crate::convert::opt_string_array(env, &parts)
}}
