//! Entity id -> shard id, chosen by the host.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::hashing::{actor_ts_shard_id, pekko_shard_number};
use crate::protocol::ShardId;
use crate::{Error, Result};

/// A built-in extractor as every configuration writes it: `{"kind": "pekko", "numberOfShards":
/// n}` (Pekko's HashCodeMessageExtractor) or `{"kind": "actor-ts", "numShards": n}`. The C ABI,
/// every binding and recorded traces read this one form, so ranges and messages are the same
/// everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum ExtractorDoc {
    #[serde(rename = "pekko", rename_all = "camelCase")]
    Pekko { number_of_shards: i32 },
    #[serde(rename = "actor-ts", rename_all = "camelCase")]
    ActorTs { num_shards: u32 },
}

impl ExtractorDoc {
    pub fn build(self) -> Result<ShardExtractor> {
        match self {
            ExtractorDoc::Pekko { number_of_shards } => ShardExtractor::pekko(number_of_shards),
            ExtractorDoc::ActorTs { num_shards } => ShardExtractor::actor_ts(num_shards),
        }
    }
}

pub enum ShardExtractor {
    /// Pekko `HashCodeMessageExtractor`: `abs(entityId.hashCode % n)`.
    Pekko {
        number_of_shards: i32,
    },
    /// actor-ts `hashShardId`: `abs(fnv1a32(entityId)) % n`.
    ActorTs {
        num_shards: u32,
    },
    Custom(Box<dyn Fn(&str) -> ShardId + Send>),
}

impl ShardExtractor {
    pub fn pekko(number_of_shards: i32) -> Result<ShardExtractor> {
        if number_of_shards < 1 {
            return Err(Error::invalid_argument(format!(
                "numberOfShards must be >= 1, got {number_of_shards}"
            )));
        }
        Ok(ShardExtractor::Pekko { number_of_shards })
    }

    pub fn actor_ts(num_shards: u32) -> Result<ShardExtractor> {
        if num_shards == 0 {
            return Err(Error::invalid_argument("numShards must be >= 1, got 0"));
        }
        Ok(ShardExtractor::ActorTs { num_shards })
    }

    pub fn custom(f: impl Fn(&str) -> ShardId + Send + 'static) -> ShardExtractor {
        ShardExtractor::Custom(Box::new(f))
    }

    pub fn shard_of(&self, entity: &str) -> Result<ShardId> {
        self.shard_name(entity).map(|n| ShardId::from(n.as_str()))
    }

    /// [`Self::shard_of`] without an allocation for the built-in extractors, whose shard ids
    /// are numbers: routing names a shard for every message.
    pub fn shard_name(&self, entity: &str) -> Result<ShardName> {
        match self {
            ShardExtractor::Pekko { number_of_shards } => {
                pekko_shard_number(entity, *number_of_shards).map(ShardName::number)
            }
            ShardExtractor::ActorTs { num_shards } => {
                actor_ts_shard_id(entity, *num_shards).map(ShardName::number)
            }
            ShardExtractor::Custom(f) => Ok(ShardName::Owned(f(entity))),
        }
    }
}

/// A shard id from an extractor: a number's decimal digits held inline, or a custom
/// extractor's string.
pub enum ShardName {
    /// `digits[start..]`
    Number {
        digits: [u8; 10],
        start: u8,
    },
    Owned(ShardId),
}

impl ShardName {
    fn number(mut n: u32) -> ShardName {
        let mut digits = [0u8; 10];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        ShardName::Number {
            digits,
            start: start as u8,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // SAFETY: `number` writes ASCII digits from `start` on, and nothing changes them;
            // checking them again would cost more than naming the shard did.
            ShardName::Number { digits, start } => unsafe {
                std::str::from_utf8_unchecked(&digits[*start as usize..])
            },
            ShardName::Owned(s) => s,
        }
    }
}

impl fmt::Debug for ShardExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShardExtractor::Pekko { number_of_shards } => {
                write!(f, "Pekko({number_of_shards})")
            }
            ShardExtractor::ActorTs { num_shards } => write!(f, "ActorTs({num_shards})"),
            ShardExtractor::Custom(_) => f.write_str("Custom"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashing::pekko_shard_id;

    #[test]
    fn families_agree_with_hashing_module() {
        let p = ShardExtractor::pekko(10).unwrap();
        assert_eq!(
            p.shard_of("abc").unwrap(),
            pekko_shard_id("abc", 10).unwrap()
        );
        let a = ShardExtractor::actor_ts(7).unwrap();
        assert_eq!(
            a.shard_of("abc").unwrap(),
            actor_ts_shard_id("abc", 7).unwrap().to_string()
        );
        assert!(ShardExtractor::pekko(0).is_err());
        assert!(ShardExtractor::actor_ts(0).is_err());
        let c = ShardExtractor::custom(|e| e[..1].into());
        assert_eq!(c.shard_of("xyz").unwrap(), "x");
    }

    #[test]
    fn shard_names_are_the_numbers_digits() {
        for n in [0, 7, 10, 99, 1000, 4_294_967_295] {
            assert_eq!(ShardName::number(n).as_str(), n.to_string());
        }
        let p = ShardExtractor::pekko(i32::MAX).unwrap();
        for e in ["", "abc", "entity-42", "\u{10000}x"] {
            assert_eq!(
                p.shard_name(e).unwrap().as_str(),
                pekko_shard_id(e, i32::MAX).unwrap()
            );
        }
    }
}
