//! The shard extractor a region (step or driver) routes by, as every language's
//! configuration writes it: `{"kind": "pekko", "numberOfShards": n}` (Pekko's
//! HashCodeMessageExtractor) or `{"kind": "actor-ts", "numShards": n}`. A binding reads its
//! own value into this with serde and builds it, so the forms, ranges and messages are the
//! same everywhere.

use serde::Deserialize;
use shardline_core::region::ShardExtractor;

use crate::Failure;

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum ExtractorDoc {
    #[serde(rename = "pekko", rename_all = "camelCase")]
    Pekko { number_of_shards: i32 },
    #[serde(rename = "actor-ts", rename_all = "camelCase")]
    ActorTs { num_shards: u32 },
}

impl ExtractorDoc {
    /// The extractor; `what` names the argument in errors ("extractor_json", "shards").
    pub fn build(self, what: &str) -> Result<ShardExtractor, Failure> {
        match self {
            ExtractorDoc::Pekko { number_of_shards } => ShardExtractor::pekko(number_of_shards),
            ExtractorDoc::ActorTs { num_shards } => ShardExtractor::actor_ts(num_shards),
        }
        .map_err(|e| Failure::from(e.context(what)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    fn doc(tree: crate::tree::Tree) -> Result<ExtractorDoc, String> {
        tree.deserialized().map_err(|e| e.to_string())
    }

    fn map(entries: &[(&str, crate::tree::Tree)]) -> crate::tree::Tree {
        crate::tree::Tree::Map(
            entries
                .iter()
                .map(|(k, v)| (crate::tree::Tree::Text((*k).into()), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn both_kinds_build_and_a_zero_count_is_named() {
        use crate::tree::Tree;
        let pekko = doc(map(&[
            ("kind", Tree::Text("pekko".into())),
            ("numberOfShards", Tree::Integer(10.into())),
        ]))
        .unwrap();
        assert_eq!(pekko.build("shards").unwrap().shard_of("a").unwrap(), "7");
        let zero = doc(map(&[
            ("kind", Tree::Text("actor-ts".into())),
            ("numShards", Tree::Integer(0.into())),
        ]))
        .unwrap()
        .build("shards")
        .unwrap_err();
        assert_eq!(zero.status, Status::InvalidArgument);
        assert!(zero.message.contains("shards"), "{}", zero.message);
        assert!(zero.message.contains("numShards"), "{}", zero.message);
        let unknown = doc(map(&[("kind", Tree::Text("modulo".into()))])).unwrap_err();
        assert!(unknown.contains("modulo"), "{unknown}");
    }
}
