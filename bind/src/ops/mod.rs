//! Operations called by name: the one place a binding object's queries and non-step methods
//! are decided.
//!
//! A binding exposes each of its native objects' operations through one native method
//! (`_op(name, *args)` in Python, `op(name, args)` in Node, `nOp(handle, name, argsJson)` on
//! the JVM) and gives them their idiomatic names and types in its own language. The Rust side
//! of an operation (reading arguments, calling the core, shaping the answer) is written here
//! once, so every language answers the same call with the same value and the same error.
//!
//! Values cross as a [`Tree`]: serde's data model with a bytes variant and 128-bit integers,
//! so Snowflake ids and payloads keep their types in every language's converter.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::tree::to_tree;
pub use crate::tree::Tree;
use crate::{Failure, Status};

pub mod backends;
pub mod constructors;
pub mod etcd;
pub mod functions;
pub mod ids;
pub mod machines;
pub mod state;
pub mod steps;
pub mod strategy;

/// The arguments of one call: the operation's name and its positional values.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    kind: &'static str,
    op: &'a str,
    values: &'a [Tree],
}

/// What an operation answers.
pub type Reply = Result<Tree, Failure>;

impl<'a> Args<'a> {
    /// `kind` is the object's class name as the host sees it, for errors.
    pub fn new(kind: &'static str, op: &'a str, values: &'a [Tree]) -> Args<'a> {
        Args { kind, op, values }
    }

    pub fn op(&self) -> &'a str {
        self.op
    }

    /// Argument `i`, which the host calls `name`; missing or null is NULL_POINTER naming it
    /// (the status a null required argument has at every boundary, the C ABI's included).
    pub fn get<T: DeserializeOwned>(&self, i: usize, name: &str) -> Result<T, Failure> {
        self.opt(i, name)?.ok_or_else(|| {
            Failure::new(
                Status::NullPointer,
                format!("{}.{}: {name} is required", self.kind, self.op),
            )
        })
    }

    /// Argument `i`, or `None` when it is missing or null.
    pub fn opt<T: DeserializeOwned>(&self, i: usize, name: &str) -> Result<Option<T>, Failure> {
        match self.values.get(i) {
            None | Some(Tree::Null) => Ok(None),
            Some(v) => v
                .deserialized()
                .map(Some)
                // serde's own message; the error's Display would wrap it in `Custom("...")`.
                .map_err(|ciborium::value::Error::Custom(e)| self.invalid(name, e)),
        }
    }

    /// An argument error naming the object, the operation and the argument.
    fn invalid(&self, name: &str, what: String) -> Failure {
        Failure::invalid_argument(format!("{}.{}: {name} {what}", self.kind, self.op))
    }

    /// The error for an operation `kind` does not have.
    pub fn unknown(&self) -> Failure {
        Failure::invalid_argument(format!("{} has no operation \"{}\"", self.kind, self.op))
    }
}

/// `value` as the reply every binding converts.
pub fn reply<T: Serialize + ?Sized>(value: &T) -> Reply {
    to_tree(value).map_err(Failure::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_typed_and_named_in_errors() {
        let values = [Tree::Text("7".into()), Tree::Null, Tree::Integer(3.into())];
        let a = Args::new("Coordinator", "home_of", &values);
        assert_eq!(a.get::<String>(0, "shard").unwrap(), "7");
        assert_eq!(a.opt::<String>(1, "region").unwrap(), None);
        assert_eq!(a.opt::<u64>(5, "limit").unwrap(), None);
        let e = a.get::<String>(2, "shard").unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert_eq!(
            e.message,
            "Coordinator.home_of: shard invalid type: integer `3`, expected str"
        );
        let e = a.get::<String>(1, "region").unwrap_err();
        assert_eq!(e.status, Status::NullPointer);
        assert_eq!(e.message, "Coordinator.home_of: region is required");
        assert_eq!(
            a.unknown().message,
            "Coordinator has no operation \"home_of\""
        );
    }

    #[test]
    fn replies_keep_bytes_and_wide_integers() {
        assert_eq!(reply(&u64::MAX).unwrap(), Tree::Integer(u64::MAX.into()));
        let stamp = shardline_core::protocol::Stamp {
            token: shardline_core::protocol::FencingToken(u64::MAX),
            version: shardline_core::protocol::ShardVersion(1),
        };
        let t = reply(&stamp).unwrap();
        let token = t
            .as_map()
            .unwrap()
            .iter()
            .find(|(k, _)| k.as_text() == Some("token"));
        assert_eq!(token.unwrap().1, Tree::Integer(u64::MAX.into()));
    }
}
