//! Entity id -> shard id, as the two families' default extractors compute it.

use crate::jvm::string_hash_code;
use crate::{Error, Result};

/// FNV-1a 32-bit offset basis and prime.
const FNV_BASIS: u32 = 0x811C_9DC5;
const FNV_PRIME: u32 = 0x0100_0193;

/// Pekko `HashCodeMessageExtractor`: `abs(entityId.hashCode % n)` as a decimal string.
///
/// The remainder is taken before `abs`, so `hashCode == Int.MinValue` still lands in `0..n`.
pub fn pekko_shard_id(entity_id: &str, number_of_shards: i32) -> Result<String> {
    pekko_shard_number(entity_id, number_of_shards).map(|n| n.to_string())
}

/// [`pekko_shard_id`] as the number whose decimal digits it is.
pub fn pekko_shard_number(entity_id: &str, number_of_shards: i32) -> Result<u32> {
    if number_of_shards < 1 {
        return Err(Error::invalid_argument(format!(
            "numberOfShards must be >= 1, got {number_of_shards}"
        )));
    }
    // `abs` of a remainder of a positive divisor: at least 0, below the divisor
    Ok((string_hash_code(entity_id) % number_of_shards).unsigned_abs())
}

/// actor-ts `hashShardId`: `Math.abs(fnv1a32(entityId)) % numShards`.
///
/// The JavaScript original XORs UTF-16 units (not UTF-8 bytes), reads the product as a signed
/// int32 before `abs`, and for `""` never coerces the basis, leaving the double 2166136261.
pub fn actor_ts_shard_id(entity_id: &str, num_shards: u32) -> Result<u32> {
    if num_shards == 0 {
        return Err(Error::invalid_argument("numShards must be >= 1, got 0"));
    }
    let hash: i64 = if entity_id.is_empty() {
        i64::from(FNV_BASIS)
    } else {
        let h = entity_id
            .encode_utf16()
            .fold(FNV_BASIS, |h, u| (h ^ u32::from(u)).wrapping_mul(FNV_PRIME));
        i64::from(h as i32)
    };
    // The remainder is below `num_shards`, so it fits back into u32.
    Ok((hash.abs() % i64::from(num_shards)) as u32)
}
