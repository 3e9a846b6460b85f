//! Entity id -> shard id as Pekko and actor-ts compute it, Pekko's MurmurHash, and the
//! conformance runner every binding shares.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use shardline_core::decide;
use shardline_core::hashing::{actor_ts_shard_id, pekko_shard_id, string_hash};

use crate::conv;
use crate::error::{boundary, Fail};
use crate::state::unknown;

/// Pekko `HashCodeMessageExtractor`: `abs(entityId.hashCode % numberOfShards)`, as a string.
#[napi(
    js_name = "pekkoShardId",
    ts_args_type = "entityId: string, numberOfShards: number"
)]
pub fn pekko_shard_id_of(
    env: &Env,
    entity_id: Unknown,
    number_of_shards: Unknown,
) -> Result<String> {
    boundary(env, None, |js| {
        let id = conv::string(js, entity_id.raw(), "entityId")?;
        let n = conv::int(js, number_of_shards.raw(), "numberOfShards")?;
        let n = i32::try_from(n)
            .map_err(|_| Fail::invalid(format!("numberOfShards {n} is out of range")))?;
        Ok(pekko_shard_id(&id, n)?)
    })
}

/// actor-ts `hashShardId`: `Math.abs(fnv1a32(entityId)) % numShards`.
#[napi(
    js_name = "actorTsShardId",
    ts_args_type = "entityId: string, numShards: number"
)]
pub fn actor_ts_shard_id_of(env: &Env, entity_id: Unknown, num_shards: Unknown) -> Result<u32> {
    boundary(env, None, |js| {
        let id = conv::string(js, entity_id.raw(), "entityId")?;
        let n = conv::uint(js, num_shards.raw(), "numShards")?;
        let n = u32::try_from(n)
            .map_err(|_| Fail::invalid(format!("numShards {n} is out of range")))?;
        Ok(actor_ts_shard_id(&id, n)?)
    })
}

/// Pekko `MurmurHash.stringHash` (the consistent-hashing ring's hash), a signed 32-bit int.
#[napi(ts_args_type = "text: string")]
pub fn pekko_string_hash(env: &Env, text: Unknown) -> Result<i32> {
    boundary(env, None, |js| {
        Ok(string_hash(&conv::string(js, text.raw(), "text")?))
    })
}

/// Decides one conformance vector (or an array of them) exactly like `shardline decide`.
#[napi(
    ts_args_type = "vector: Vector | Vector[], options?: { explain?: boolean }",
    ts_return_type = "Decision | Decision[]"
)]
pub fn decide<'a>(env: &'a Env, vector: Unknown, options: Unknown) -> Result<Unknown<'a>> {
    boundary(env, None, |js| {
        let explain = match conv::field_opt(js, options.raw(), "explain")? {
            Some(v) => conv::boolean(js, v, "options.explain")?,
            None => false,
        };
        let input = conv::json(js, vector.raw(), "vector")?;
        let out = decide::decide(&input, explain)?;
        Ok(unknown(js, conv::ser(js, &out)?))
    })
}

/// [`decide`] on JSON text, returning JSON text (byte for byte what the CLI prints).
#[napi(ts_args_type = "json: string, explain?: boolean")]
pub fn decide_json(env: &Env, text: Unknown, explain: Unknown) -> Result<String> {
    boundary(env, None, |js| {
        let text = conv::string(js, text.raw(), "json")?;
        let explain = conv::opt_bool(js, explain.raw(), "explain", false)?;
        Ok(decide::decide_json(&text, explain)?)
    })
}
