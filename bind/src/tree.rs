//! The core's values as a tree that keeps bytes apart from text, for bindings that hand
//! outputs to their host as native objects.
//!
//! JSON text carries a payload as base64, so a `serde_json::Value` cannot tell a payload from
//! any other string. The tree is serde's data model as ciborium's `Value` (a well-kept,
//! complete implementation of it, with a bytes variant) filled by a serializer that is not
//! human-readable, so [`shardline_core::protocol::payload`] writes bytes and a binding turns
//! exactly those into `bytes`, a `Buffer` or a `byte[]`: by the value's type, never by the
//! name of its key.

pub use ciborium::Value as Tree;
use serde::Serialize;
use shardline_core::{Error, Result};

/// A core value as a tree.
pub fn to_tree<T: Serialize + ?Sized>(value: &T) -> Result<Tree> {
    Tree::serialized(value).map_err(|e| Error::invalid_state(format!("serializing: {e}")))
}

/// A map key as the text JSON would write for it (serde writes integer keys as strings).
pub fn key_text(key: &Tree) -> Result<String> {
    match key {
        Tree::Text(s) => Ok(s.clone()),
        Tree::Integer(i) => Ok(i128::from(*i).to_string()),
        Tree::Bool(b) => Ok(b.to_string()),
        other => Err(Error::invalid_state(format!(
            "serializing: a map key must be text, got {other:?}"
        ))),
    }
}

/// Whether a tree holds bytes anywhere (keys included): a tree without them has exactly the
/// JSON form a host could parse into the same value.
pub fn has_bytes(t: &Tree) -> bool {
    match t {
        Tree::Bytes(_) => true,
        Tree::Array(items) => items.iter().any(has_bytes),
        Tree::Map(entries) => entries.iter().any(|(k, v)| has_bytes(k) || has_bytes(v)),
        Tree::Tag(_, inner) => has_bytes(inner),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shardline_core::region::RegionOutput;

    #[test]
    fn payloads_are_bytes_and_text_stays_text() {
        let out = RegionOutput::Deliver {
            shard: "1".into(),
            entity: "aGk=".into(),
            payload: b"hi".to_vec(),
        };
        let tree = to_tree(&out).unwrap();
        let map = tree.as_map().unwrap();
        let get = |k: &str| {
            map.iter()
                .find(|(key, _)| key_text(key).unwrap() == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("payload"), Some(Tree::Bytes(b"hi".to_vec())));
        assert_eq!(get("entity"), Some(Tree::Text("aGk=".into())));
        assert_eq!(get("type"), Some(Tree::Text("deliver".into())));
    }

    #[test]
    fn integer_keys_read_as_json_writes_them() {
        assert_eq!(key_text(&Tree::Integer(7.into())).unwrap(), "7");
        assert!(key_text(&Tree::Bytes(vec![])).is_err());
    }

    #[test]
    fn bytes_are_found_at_any_depth() {
        let out = RegionOutput::Deliver {
            shard: "1".into(),
            entity: "e".into(),
            payload: b"hi".to_vec(),
        };
        assert!(has_bytes(&Tree::Array(vec![to_tree(&out).unwrap()])));
        let key = Tree::Map(vec![(Tree::Bytes(vec![1]), Tree::Null)]);
        assert!(has_bytes(&Tree::Tag(1, Box::new(key))));
        let text = to_tree(&vec![("a", 1)]).unwrap();
        assert!(!has_bytes(&text));
        assert!(!has_bytes(&Tree::Text("aGk=".into())));
    }
}
