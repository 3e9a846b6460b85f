//! The library's functions (entity -> shard, the hashes placement must agree on bit for bit,
//! conformance decisions, trace replay, envelopes on the wire) and Pekko's consistent-hash
//! ring, answered the same in every language.

use shardline_core::hashing::{self, Ring};
use shardline_core::jvm;
use shardline_core::protocol::Envelope;

use super::{reply, Args, Reply, Tree};
use crate::objects::{LayoutSpec, SnowflakeParts};
use crate::Failure;

/// `pekko_shard_id(entity_id, number_of_shards)`, `actor_ts_shard_id(entity_id, num_shards)`,
/// `murmur_string_hash(text)`, `murmur_vnode_hash(node_hash, replica)`,
/// `java_string_hash(text)`, `decide(vector, explain?)` (a vector, a list of them, or JSON
/// text), `decide_json(text, explain?)` (JSON text, byte for byte what the CLI prints),
/// `replay(text)`, `replay_json(text)`, `encode_envelope(envelope)` (JSON text, payload as
/// base64), `decode_envelope(text or bytes)`, `decompose_snowflake(id, layout?)`
/// (`{unixMs, worker, sequence}` under the layout, the default one when left out).
pub fn call(a: Args<'_>) -> Reply {
    match a.op() {
        "pekko_shard_id" => reply(&hashing::pekko_shard_id(
            &a.get::<String>(0, "entity_id")?,
            a.get(1, "number_of_shards")?,
        )?),
        "actor_ts_shard_id" => reply(&hashing::actor_ts_shard_id(
            &a.get::<String>(0, "entity_id")?,
            a.get(1, "num_shards")?,
        )?),
        "murmur_string_hash" => reply(&hashing::string_hash(&a.get::<String>(0, "text")?)),
        "murmur_vnode_hash" => reply(&hashing::vnode_hash(
            a.get(0, "node_hash")?,
            a.get(1, "replica")?,
        )),
        "java_string_hash" => reply(&jvm::string_hash_code(&a.get::<String>(0, "text")?)),
        "decide" => {
            let vector = match a.get::<serde_json::Value>(0, "vector")? {
                serde_json::Value::String(text) => serde_json::from_str(&text).map_err(|e| {
                    Failure::invalid_argument(format!("vector: not valid JSON: {e}"))
                })?,
                v => v,
            };
            let explain = a.opt(1, "explain")?.unwrap_or(false);
            reply(&shardline_core::decide::decide(&vector, explain)?)
        }
        "decide_json" => {
            let explain = a.opt(1, "explain")?.unwrap_or(false);
            reply(&shardline_core::decide::decide_json(
                &a.get::<String>(0, "text")?,
                explain,
            )?)
        }
        "replay" => reply(&shardline_core::replay::replay(
            &a.get::<String>(0, "text")?,
        )?),
        "replay_json" => reply(&shardline_core::replay::replay_json(
            &a.get::<String>(0, "text")?,
        )?),
        "encode_envelope" => {
            let e = a.get::<Envelope>(0, "envelope")?;
            reply(&serde_json::to_string(&e).map_err(|e| Failure::internal(e.to_string()))?)
        }
        "decode_envelope" => {
            let text = match a.get::<Tree>(0, "data")? {
                Tree::Bytes(b) => String::from_utf8(b).map_err(|e| {
                    Failure::invalid_argument(format!("envelope is not UTF-8: {e}"))
                })?,
                _ => a.get::<String>(0, "data")?,
            };
            reply(&json::<Envelope>(&text, "envelope")?)
        }
        "decompose_snowflake" => {
            let layout = a.opt::<LayoutSpec>(1, "layout")?.unwrap_or_default();
            let id = a.get(0, "id")?;
            reply(&SnowflakeParts::from(layout.build()?.decompose(id)))
        }
        _ => Err(a.unknown()),
    }
}

fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, Failure> {
    serde_json::from_str(text).map_err(|e| Failure::invalid_argument(format!("{what}: {e}")))
}

/// Pekko's `ConsistentHash` ring over the nodes it was made with. Node order matters where
/// virtual nodes collide (the later node keeps the position); the consistent-hashing strategy
/// passes nodes sorted by address.
pub struct HashRing {
    nodes: Vec<String>,
    ring: Ring,
}

impl HashRing {
    /// `virtual_nodes_factor` defaults to Pekko's 10.
    pub fn new(nodes: Vec<String>, virtual_nodes_factor: Option<u32>) -> HashRing {
        let ring = Ring::new(&nodes, virtual_nodes_factor.unwrap_or(10));
        HashRing { nodes, ring }
    }

    /// `node_for(key)` (null for an empty ring), `positions` (`[position, node]` pairs in
    /// ascending position order), `nodes`, `len` (the number of positions).
    pub fn call(&self, a: Args<'_>) -> Reply {
        match a.op() {
            "node_for" => {
                let key = a.get::<String>(0, "key")?;
                reply(&self.ring.node_for(&key).map(|i| &self.nodes[i]))
            }
            "positions" => reply(
                &self
                    .ring
                    .positions()
                    .map(|(p, i)| (p, &self.nodes[i]))
                    .collect::<Vec<_>>(),
            ),
            "nodes" => reply(&self.nodes),
            "len" => reply(&self.ring.positions().count()),
            _ => Err(a.unknown()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    fn text(s: &str) -> Tree {
        Tree::Text(s.into())
    }

    fn f(op: &str, values: &[Tree]) -> Reply {
        call(Args::new("shardline", op, values))
    }

    #[test]
    fn snowflakes_decompose_under_a_layout() {
        use shardline_core::workerid::snowflake::Layout;
        let id = (5u64 << 12) | 1;
        let parts = f("decompose_snowflake", &[Tree::Integer(id.into())]).unwrap();
        let expected = SnowflakeParts::from(Layout::default().decompose(id));
        assert_eq!(parts, reply(&expected).unwrap());
        let narrow = Tree::Map(vec![(text("sequenceBits"), Tree::Integer(10.into()))]);
        let parts = f("decompose_snowflake", &[Tree::Integer(id.into()), narrow]).unwrap();
        assert_ne!(parts, reply(&expected).unwrap());
        let e = f("decompose_snowflake", &[text("x")]).unwrap_err();
        assert!(e.message.contains("id"), "{}", e.message);
    }

    #[test]
    fn hashes_agree_with_the_core() {
        let n = Tree::Integer(100.into());
        let got = f("pekko_shard_id", &[text("entity-1"), n.clone()]).unwrap();
        let want = hashing::pekko_shard_id("entity-1", 100).unwrap();
        assert_eq!(got, text(&want));
        let got = f("actor_ts_shard_id", &[text("entity-1"), n]).unwrap();
        let want = hashing::actor_ts_shard_id("entity-1", 100).unwrap();
        assert_eq!(got, Tree::Integer(want.into()));
        let got = f("java_string_hash", &[text("hello")]).unwrap();
        assert_eq!(got, Tree::Integer(99162322.into()));
        let e = f(
            "pekko_shard_id",
            &[text("e"), Tree::Integer((1i64 << 40).into())],
        );
        let e = e.unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
        assert!(
            e.message
                .starts_with("shardline.pekko_shard_id: number_of_shards "),
            "{}",
            e.message
        );
        let e = f("pekko_shard_id", &[text("e"), Tree::Integer(0.into())]).unwrap_err();
        assert_eq!(e.status, Status::InvalidArgument);
    }

    #[test]
    fn envelopes_round_trip_with_bytes_payloads() {
        let wire = r#"{"from":{"region":"a"},"to":{"region":"b"},"message":{"forward":{"shard":"5","entity":"e0","payload":"aGk="}}}"#;
        let decoded = f("decode_envelope", &[Tree::Bytes(wire.as_bytes().to_vec())]);
        let decoded = decoded.unwrap();
        let message = decoded
            .as_map()
            .unwrap()
            .iter()
            .find(|(k, _)| k.as_text() == Some("message"));
        let forward = &message.unwrap().1.as_map().unwrap()[0].1;
        let payload = forward
            .as_map()
            .unwrap()
            .iter()
            .find(|(k, _)| k.as_text() == Some("payload"));
        assert_eq!(payload.unwrap().1, Tree::Bytes(b"hi".to_vec()));
        let encoded = f("encode_envelope", std::slice::from_ref(&decoded)).unwrap();
        let again = f("decode_envelope", &[encoded]).unwrap();
        assert_eq!(again, decoded);
        let e = f("decode_envelope", &[text("{")]).unwrap_err();
        assert!(e.message.starts_with("envelope: "), "{}", e.message);
        let e = f("decode_envelope", &[Tree::Bytes(vec![0xff])]).unwrap_err();
        assert!(e.message.contains("not UTF-8"), "{}", e.message);
    }

    #[test]
    fn a_ring_answers_nodes_and_positions() {
        let ring = HashRing::new(vec!["a".into(), "b".into()], Some(3));
        let r = |op, values: &[Tree]| ring.call(Args::new("ConsistentHashRing", op, values));
        assert_eq!(r("len", &[]).unwrap(), Tree::Integer(6.into()));
        let owner = r("node_for", &[text("k")]).unwrap();
        assert!(owner == text("a") || owner == text("b"));
        let empty = HashRing::new(vec![], None);
        let none = empty.call(Args::new("ConsistentHashRing", "node_for", &[text("k")]));
        assert_eq!(none.unwrap(), Tree::Null);
        assert_eq!(
            r("nodes", &[]).unwrap(),
            Tree::Array(vec![text("a"), text("b")])
        );
    }

    #[test]
    fn decide_reads_a_vector_or_its_text() {
        let e = f("decide", &[text("not json")]).unwrap_err();
        assert!(
            e.message.starts_with("vector: not valid JSON"),
            "{}",
            e.message
        );
        assert_eq!(
            f("unknown_fn", &[]).unwrap_err().message,
            "shardline has no operation \"unknown_fn\""
        );
    }
}
