//! `org.shardline.Shardline`: stateless functions (conformance decisions, entity -> shard).

use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jint, jstring, JNI_FALSE};
use jni::JNIEnv;

use shardline_core::decide::decide_json;
use shardline_core::hashing::{actor_ts_shard_id, pekko_shard_id, string_hash};

use crate::boundary::{entry, Failure};
use crate::convert::{new_string, string};

#[no_mangle]
pub extern "system" fn Java_org_shardline_NativeLibrary_nVersion<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        new_string(env, shardline_core::VERSION)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Shardline_nDecide<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    json: JString<'l>,
    explain: jboolean,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let text = string(env, &json, "json")?;
        let out = decide_json(&text, explain != JNI_FALSE)?;
        new_string(env, &out)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Shardline_nPekkoShardId<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    entity: JString<'l>,
    shards: jint,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let entity = string(env, &entity, "entityId")?;
        new_string(env, &pekko_shard_id(&entity, shards)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Shardline_nActorTsShardId<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    entity: JString<'l>,
    shards: jint,
) -> jint {
    entry(&mut env, 0, |env| {
        let entity = string(env, &entity, "entityId")?;
        let n = u32::try_from(shards).map_err(|_| {
            Failure::invalid_argument(format!("numShards must be >= 1, got {shards}"))
        })?;
        // The shard is below n <= i32::MAX.
        Ok(actor_ts_shard_id(&entity, n)? as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_shardline_Shardline_nMurmurStringHash<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    s: JString<'l>,
) -> jint {
    entry(&mut env, 0, |env| {
        let s = string(env, &s, "string")?;
        Ok(string_hash(&s))
    })
}

/// Test hook for the panic boundary: a panic must come out as ShardlineException(PANIC).
#[no_mangle]
pub extern "system" fn Java_org_shardline_Shardline_nPanicForTest<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
) {
    entry(&mut env, (), |_| panic!("deliberate panic (test hook)"))
}

/// {from region or null, to region or null, message JSON}.
#[no_mangle]
pub extern "system" fn Java_org_shardline_Shardline_nParseEnvelope<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    json: JString<'l>,
) -> jni::sys::jobjectArray {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let e: shardline_core::protocol::Envelope =
            crate::convert::from_json(env, &json, "envelope")?;
        let parts = [
            crate::convert::endpoint_id(&e.from).map(str::to_owned),
            crate::convert::endpoint_id(&e.to).map(str::to_owned),
            Some(crate::convert::to_json(&e.message)),
        ];
        crate::convert::opt_string_array(env, &parts)
    })
}
