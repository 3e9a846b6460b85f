//! The wire protocol between shard regions and the coordinator, plus the fencing stamps that
//! make every coordinator directive orderable.
//!
//! Everything here is plain data with serde derives: the bindings carry it as JSON. The host's
//! transport authenticates [`Envelope::from`]; the state machines trust it.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::Amount;

pub mod json;

/// Region identifiers name one incarnation of a region (a restarted process should pick a new
/// id, e.g. with a uid suffix, just as a Pekko `ActorRef` carries a uid).
pub type RegionId = String;
/// A shard id as messages carry it: held inline up to 23 bytes (shard ids are usually short
/// numbers), shared beyond, so most messages about a shard allocate nothing for its id.
pub type ShardId = smol_str::SmolStr;
/// A region id as envelopes carry it: held inline up to 23 bytes, shared beyond, so a
/// message names its sender and addressee without an allocation or a reference count.
pub type RegionName = smol_str::SmolStr;
/// An entity id as messages carry it: inline up to 23 bytes, shared beyond, so routing a
/// message to an entity with a short id copies the id without an allocation.
pub type EntityId = smol_str::SmolStr;
/// An entity message, opaque to shardline. In JSON text it is a base64 string (see
/// [`payload`]); a binding hands it to its host as the language's bytes type.
pub type Payload = Vec<u8>;

/// The [`RegionName`] of a region id the state machines keep shared: a short one copied
/// inline (no reference count touched), a long one sharing the same bytes.
#[inline]
pub fn region_name(id: &Arc<str>) -> RegionName {
    if id.len() <= RegionName::INLINE_CAP {
        RegionName::new_inline(id)
    } else {
        RegionName::from(Arc::clone(id))
    }
}

/// The lease's fencing token: strictly grows across holders of the coordinator lease.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct FencingToken(pub u64);

impl fmt::Display for FencingToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// Per-shard version: bumped by the coordinator on every change of a shard's placement
/// (allocation, hand-off start, hand-off end or abort, deallocation).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct ShardVersion(pub u64);

/// What a directive about a shard is worth: newer coordinators win outright, and within one
/// coordinator the shard version decides. Regions refuse anything below what they have seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stamp {
    pub token: FencingToken,
    pub version: ShardVersion,
}

impl Stamp {
    pub fn new(token: u64, version: u64) -> Stamp {
        Stamp {
            token: FencingToken(token),
            version: ShardVersion(version),
        }
    }
}

impl Ord for Stamp {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.token, self.version).cmp(&(other.token, other.version))
    }
}

impl PartialOrd for Stamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Stamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/v{}", self.token, self.version.0)
    }
}

/// Who a message is from or for. There is one logical coordinator per entity type; the host
/// routes `Coordinator` to whichever node currently runs it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Endpoint {
    Coordinator,
    Region(RegionName),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Coordinator => f.write_str("coordinator"),
            Endpoint::Region(r) => write!(f, "region {r}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub from: Endpoint,
    pub to: Endpoint,
    pub message: Message,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum Message {
    Command(Command),
    Directive(Directive),
    Forward(Forward),
}

/// Region or proxy -> coordinator. The sender is [`Envelope::from`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Command {
    /// `node` is the region's cluster address; only Up members (or the coordinator's own
    /// node) are accepted. The offer (capacity, tags, shard cap) is absent when default.
    Register {
        node: String,
        // Boxed here and in `UpdateOffer`: an offer is larger than any other command, and
        // inline it would size every envelope, which the hot paths move by value.
        #[serde(flatten)]
        offer: Box<RegionOffer>,
    },
    RegisterProxy {
        node: String,
    },
    GetShardHome {
        shard: ShardId,
    },
    ShardStarted {
        shard: ShardId,
        stamp: Stamp,
    },
    BeginHandOffAck {
        shard: ShardId,
        stamp: Stamp,
    },
    ShardStopped {
        shard: ShardId,
        stamp: Stamp,
    },
    GracefulShutdownReq,
    RegionStopped,
    /// Remember-entities: an entity started in a shard the sender hosts.
    EntityStarted {
        shard: ShardId,
        entity: EntityId,
    },
    /// Remember-entities: the entity was passivated on purpose and must not be restarted.
    EntityPassivated {
        shard: ShardId,
        entity: EntityId,
    },
    /// The host's latest measurement of the sender's shards (see [`check_loads`]); the
    /// coordinator smooths it and keeps it for shards the sender hosts.
    ReportLoads {
        loads: BTreeMap<ShardId, Amount>,
    },
    /// The sender's offer changed; it replaces the whole offer (absent fields: defaults).
    UpdateOffer {
        #[serde(flatten)]
        offer: Box<RegionOffer>,
    },
}

impl Command {
    /// A region's registration with the default offer (a Pekko region's).
    pub fn register(node: impl Into<String>) -> Command {
        Command::Register {
            node: node.into(),
            offer: Box::default(),
        }
    }
}

/// What a region offers beyond its shard count, for `least-load`: its capacity (a number, or
/// a number per load dimension; 1 when absent), its tags, and at most how many shards it
/// takes. The default offer is what every Pekko region has, and is left out of messages.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegionOffer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Amount>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_shards: Option<u64>,
}

impl RegionOffer {
    pub fn is_default(&self) -> bool {
        *self == RegionOffer::default()
    }

    /// Capacity finite and > 0 in every dimension, tags not empty.
    pub fn check(&self) -> crate::Result<()> {
        if let Some(c) = &self.capacity {
            c.check_capacity("capacity")?;
        }
        if self.tags.iter().any(String::is_empty) {
            return Err(crate::Error::invalid_argument("tags: a tag is empty"));
        }
        Ok(())
    }
}

/// Checks a load report: shard ids not empty, every load finite and >= 0 in every dimension,
/// and either every load one number or every load a dimension map (a report that mixes them
/// is ambiguous about what the plain numbers measure). The error names the shard.
pub fn check_loads(loads: &BTreeMap<ShardId, Amount>) -> crate::Result<()> {
    let mut first: Option<(&str, bool)> = None;
    for (shard, load) in loads {
        if shard.is_empty() {
            return Err(crate::Error::invalid_argument("loads: a shard id is empty"));
        }
        load.check_load(&format!("loads.{shard}"))?;
        let plain = matches!(load, Amount::Uniform(_));
        match first {
            None => first = Some((shard, plain)),
            Some((other, was)) if was != plain => {
                let (n, m) = if plain {
                    (shard.as_str(), other)
                } else {
                    (other, shard.as_str())
                };
                return Err(crate::Error::invalid_argument(format!(
                    "loads: shard {n:?} has a plain number and shard {m:?} a dimension map; \
                     report every load the same way"
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Coordinator -> region or proxy. Each carries the coordinator's fencing token, and each
/// shard directive the shard's stamp.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Directive {
    RegisterAck {
        token: FencingToken,
    },
    ShardHome(ShardHome),
    ShardHomes {
        token: FencingToken,
        homes: Vec<ShardHome>,
    },
    /// Start hosting `shard`, with the remembered `entities` (empty unless remember-entities).
    HostShard {
        shard: ShardId,
        stamp: Stamp,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        entities: Vec<EntityId>,
    },
    BeginHandOff {
        shard: ShardId,
        stamp: Stamp,
    },
    HandOff {
        shard: ShardId,
        stamp: Stamp,
    },
}

impl Directive {
    pub fn token(&self) -> FencingToken {
        match self {
            Directive::RegisterAck { token } | Directive::ShardHomes { token, .. } => *token,
            Directive::ShardHome(h) => h.stamp.token,
            Directive::HostShard { stamp, .. }
            | Directive::BeginHandOff { stamp, .. }
            | Directive::HandOff { stamp, .. } => stamp.token,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct ShardHome {
    pub shard: ShardId,
    // inline or shared (see `region_name`): answering `GetShardHome` allocates nothing
    pub region: RegionName,
    pub stamp: Stamp,
}

/// Region -> region: an entity message on its way to the shard's home.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct Forward {
    pub shard: ShardId,
    pub entity: EntityId,
    #[serde(with = "payload")]
    #[cfg_attr(feature = "schema", schemars(with = "payload::Schema"))]
    pub payload: Payload,
}

/// The serde form of a [`Payload`]: standard base64 (RFC 4648, padded) in human-readable
/// formats such as JSON, so a message is one short string rather than an array of numbers and
/// can never be mistaken for a list; plain bytes in formats that have them, which is how the
/// bindings recognise a payload by its type rather than by the name of its key.
pub mod payload {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    use serde::de::{Error, Visitor};
    use serde::{Deserializer, Serializer};
    use std::fmt;

    /// The schema of a payload: an entity message's bytes. JSON text carries them as standard
    /// padded base64; a binding hands them to its host as the language's bytes type (Buffer,
    /// bytes, byte[]), recognised by this definition rather than by the name of a key.
    #[cfg(feature = "schema")]
    pub struct Schema;

    #[cfg(feature = "schema")]
    impl schemars::JsonSchema for Schema {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Payload".into()
        }

        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "type": "string",
                "contentEncoding": "base64",
                "description": "Message bytes: standard padded base64 in JSON text, the language's bytes type in a binding."
            })
        }
    }

    /// A payload as the text JSON carries (what a host's bytes become in a JSON document).
    pub fn to_text(bytes: &[u8]) -> String {
        STANDARD.encode(bytes)
    }

    pub fn serialize<S: Serializer>(bytes: &impl AsRef<[u8]>, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&to_text(bytes.as_ref()))
        } else {
            s.serialize_bytes(bytes.as_ref())
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct Bytes;
        impl Visitor<'_> for Bytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a payload as a base64 string")
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Vec<u8>, E> {
                STANDARD
                    .decode(v)
                    .map_err(|e| E::custom(format!("payload is not valid base64: {e}")))
            }
            fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(Bytes)
        } else {
            d.deserialize_byte_buf(Bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_copy_short_ids_and_share_long_ones() {
        let short: Arc<str> = "r42".into();
        let name = region_name(&short);
        assert!(!name.is_heap_allocated());
        assert_eq!(Arc::strong_count(&short), 1);
        let long: Arc<str> = "pekko://sys@10.0.0.2:2552/system/sharding/counter#1".into();
        let name = region_name(&long);
        assert_eq!((name.as_str(), name.as_ptr()), (&*long, long.as_ptr()));
        assert_eq!(Arc::strong_count(&long), 2);
    }

    #[test]
    fn stamps_order_by_token_then_version() {
        assert!(Stamp::new(2, 0) > Stamp::new(1, 99));
        assert!(Stamp::new(1, 3) > Stamp::new(1, 2));
        assert_eq!(Stamp::new(1, 3), Stamp::new(1, 3));
    }

    #[test]
    fn envelopes_round_trip_as_json() {
        let e = Envelope {
            from: Endpoint::Coordinator,
            to: Endpoint::Region("r1".into()),
            message: Message::Directive(Directive::HostShard {
                shard: "7".into(),
                stamp: Stamp::new(3, 4),
                entities: vec!["a".into()],
            }),
        };
        let json = serde_json::to_string(&e).unwrap();
        assert!(json.contains("\"type\":\"hostShard\""), "{json}");
        let back: Envelope = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
        assert_eq!(
            Message::Directive(Directive::RegisterAck {
                token: FencingToken(9)
            }),
            serde_json::from_str(r#"{"directive":{"type":"registerAck","token":9}}"#).unwrap()
        );
    }

    #[test]
    fn payloads_are_base64_text_in_json() {
        let m = Message::Forward(Forward {
            shard: "1".into(),
            entity: "e".into(),
            payload: vec![0, 104, 105, 255],
        });
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(
            json,
            r#"{"forward":{"shard":"1","entity":"e","payload":"AGhp/w=="}}"#
        );
        assert_eq!(serde_json::from_str::<Message>(&json).unwrap(), m);
        let bad = r#"{"forward":{"shard":"1","entity":"e","payload":"**"}}"#;
        let err = serde_json::from_str::<Message>(bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("payload is not valid base64"), "{err}");
        // The array form is gone: one way to write a payload.
        let old = r#"{"forward":{"shard":"1","entity":"e","payload":[104]}}"#;
        let err = serde_json::from_str::<Message>(old)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a payload as a base64 string"), "{err}");
    }

    #[test]
    fn payloads_are_bytes_in_binary_forms() {
        let m = Forward {
            shard: "1".into(),
            entity: "e".into(),
            payload: b"hi".to_vec(),
        };
        let mut cbor = Vec::new();
        ciborium::into_writer(&m, &mut cbor).unwrap();
        let tree: ciborium::Value = ciborium::from_reader(&cbor[..]).unwrap();
        let payload = tree
            .as_map()
            .unwrap()
            .iter()
            .find(|(k, _)| k.as_text() == Some("payload"))
            .map(|(_, v)| v.clone());
        assert_eq!(payload, Some(ciborium::Value::Bytes(b"hi".to_vec())));
        assert_eq!(ciborium::from_reader::<Forward, _>(&cbor[..]).unwrap(), m);
    }
}

/// Serde adapters for a tagged enum carried by a newtype variant of another tagged enum:
/// both use the key `type`, so the inner value is nested under its own key instead of being
/// flattened into the outer object (which would write `type` twice).
macro_rules! nested_field {
    ($module:ident, $key:literal, $ty:ty) => {
        pub(crate) mod $module {
            use serde::{Deserialize, Deserializer, Serialize, Serializer};

            #[derive(Serialize)]
            struct Out<'a> {
                #[serde(rename = $key)]
                value: &'a $ty,
            }

            // The schema of the nested form, inlined into the variant that carries it.
            #[derive(Deserialize)]
            #[cfg_attr(feature = "schema", derive(schemars::JsonSchema), schemars(inline))]
            pub(crate) struct In {
                #[serde(rename = $key)]
                value: $ty,
            }

            pub(crate) fn serialize<S: Serializer>(value: &$ty, s: S) -> Result<S::Ok, S::Error> {
                Out { value }.serialize(s)
            }

            pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                Ok(In::deserialize(d)?.value)
            }
        }
    };
}
pub(crate) use nested_field;

pub(crate) mod nested {
    super::nested_field!(envelope, "envelope", crate::protocol::Envelope);
}
