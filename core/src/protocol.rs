//! The wire protocol between shard regions and the coordinator, plus the fencing stamps that
//! make every coordinator directive orderable.
//!
//! Everything here is plain data with serde derives: the bindings carry it as JSON. The host's
//! transport authenticates [`Envelope::from`]; the state machines trust it.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Region identifiers name one incarnation of a region (a restarted process should pick a new
/// id, e.g. with a uid suffix, just as a Pekko `ActorRef` carries a uid).
pub type RegionId = String;
pub type ShardId = String;
pub type EntityId = String;
/// An entity message, opaque to shardline.
pub type Payload = Vec<u8>;

/// The lease's fencing token: strictly grows across holders of the coordinator lease.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
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
#[serde(transparent)]
pub struct ShardVersion(pub u64);

/// What a directive about a shard is worth: newer coordinators win outright, and within one
/// coordinator the shard version decides. Regions refuse anything below what they have seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
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
#[serde(rename_all = "camelCase")]
pub enum Endpoint {
    Coordinator,
    Region(RegionId),
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
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub from: Endpoint,
    pub to: Endpoint,
    pub message: Message,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Message {
    Command(Command),
    Directive(Directive),
    Forward(Forward),
}

/// Region or proxy -> coordinator. The sender is [`Envelope::from`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Command {
    /// `node` is the region's cluster address; only Up members (or the coordinator's own
    /// node) are accepted.
    Register {
        node: String,
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
}

/// Coordinator -> region or proxy. Each carries the coordinator's fencing token, and each
/// shard directive the shard's stamp.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
#[serde(rename_all = "camelCase")]
pub struct ShardHome {
    pub shard: ShardId,
    pub region: RegionId,
    pub stamp: Stamp,
}

/// Region -> region: an entity message on its way to the shard's home.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Forward {
    pub shard: ShardId,
    pub entity: EntityId,
    pub payload: Payload,
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

/// Serde adapters for a tagged enum carried by a newtype variant of another tagged enum:
/// both use the key `type`, so the inner value is nested under its own key instead of being
/// flattened into the outer object (which would write `type` twice).
pub(crate) mod nested {
    macro_rules! field {
        ($module:ident, $key:literal, $ty:ty) => {
            pub(crate) mod $module {
                use serde::{Deserialize, Deserializer, Serialize, Serializer};

                #[derive(Serialize)]
                struct Out<'a> {
                    #[serde(rename = $key)]
                    value: &'a $ty,
                }

                #[derive(Deserialize)]
                struct In {
                    #[serde(rename = $key)]
                    value: $ty,
                }

                pub(crate) fn serialize<S: Serializer>(
                    value: &$ty,
                    s: S,
                ) -> Result<S::Ok, S::Error> {
                    Out { value }.serialize(s)
                }

                pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
                    d: D,
                ) -> Result<$ty, D::Error> {
                    Ok(In::deserialize(d)?.value)
                }
            }
        };
    }
    field!(envelope, "envelope", crate::protocol::Envelope);
    field!(lease_request, "request", crate::coordinator::LeaseRequest);
    field!(coordinator_notice, "notice", crate::coordinator::Notice);
    field!(region_notice, "notice", crate::region::RegionNotice);
}
