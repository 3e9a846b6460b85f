//! Entity id -> shard id, as each family's default message extractor computes it.

use std::ffi::c_char;

use shardline_core::hashing::{actor_ts_shard_id, pekko_shard_id};

use crate::args::{self, Out};
use crate::boundary::guard;
use crate::status::shardline_status;
use crate::string::to_c;

/// Pekko/Akka `HashCodeMessageExtractor`: `abs(entity.hashCode % n)` as a decimal string,
/// with Java's String.hashCode over the UTF-16 form of `entity`.
///
/// @param entity the entity id (UTF-8).
/// @param number_of_shards the extractor's maxNumberOfShards, at least 1.
/// @param out receives the shard id.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `number_of_shards` < 1 or `entity` is not
///         UTF-8.
///
/// Ownership: the caller frees `*out` with shardline_string_free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `entity` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_pekko_shard_id(
    entity: *const c_char,
    number_of_shards: i32,
    out: *mut *mut c_char,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let entity = unsafe { args::str(entity, "entity") }?;
        let out = Out::new(out, "out")?;
        let shard = to_c(&pekko_shard_id(entity, number_of_shards)?)?;
        // SAFETY: caller's contract.
        unsafe { out.write(shard.into_raw()) };
        Ok(())
    })
}

/// actor-ts `hashShardId`: `|int32(fnv1a32(entity))| % n`, FNV-1a over UTF-16 code units.
///
/// @param entity the entity id (UTF-8).
/// @param num_shards number of shards, at least 1.
/// @param out receives the shard number, below `num_shards`.
/// @return SHARDLINE_STATUS_INVALID_ARGUMENT when `num_shards` is 0 or `entity` is not UTF-8.
///
/// Ownership: nothing to free.
/// Thread safety: callable from any thread.
///
/// # Safety
/// `entity` is a NUL-terminated string; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn shardline_actor_ts_shard_id(
    entity: *const c_char,
    num_shards: u32,
    out: *mut u32,
) -> shardline_status {
    guard(|| {
        // SAFETY: caller's contract.
        let entity = unsafe { args::str(entity, "entity") }?;
        let out = Out::new(out, "out")?;
        let shard = actor_ts_shard_id(entity, num_shards)?;
        // SAFETY: caller's contract.
        unsafe { out.write(shard) };
        Ok(())
    })
}
