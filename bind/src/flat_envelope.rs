//! An envelope as flat fields: sender, addressee, the message's kind, and the fields any kind
//! has. It is the C ABI's typed envelope (`struct shardline_envelope`) without the C types, for
//! hosts where building or walking a nested object costs more than the call itself (a Node
//! step passes the fields as arguments and builds the object in JavaScript).

use shardline_core::protocol::{
    Command, Directive, Endpoint, Envelope, FencingToken, Forward, Message, ShardHome, Stamp,
};
use shardline_core::{Error, Result};

/// The message kinds by their JSON `type` names (a forward has none in JSON; it is
/// `"forward"` here), in the C ABI's `shardline_message_kind` order (value = index + 1).
pub const KINDS: [&str; 17] = [
    "register",
    "registerProxy",
    "getShardHome",
    "shardStarted",
    "beginHandOffAck",
    "shardStopped",
    "gracefulShutdownReq",
    "regionStopped",
    "entityStarted",
    "entityPassivated",
    "registerAck",
    "shardHome",
    "shardHomes",
    "hostShard",
    "beginHandOff",
    "handOff",
    "forward",
];

/// Each kind uses the fields `shardline_message_kind` lists in the C header; the others are empty
/// (`""`, 0, no items). `from` and `to` are region ids, `""` for the coordinator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlatEnvelope<'a> {
    pub from: &'a str,
    pub to: &'a str,
    /// An index into [`KINDS`].
    pub kind: usize,
    pub shard: &'a str,
    pub entity: &'a str,
    /// ShardHome: the region the shard lives in.
    pub region: &'a str,
    /// Register, RegisterProxy: the sender's cluster address.
    pub node: &'a str,
    /// The coordinator's fencing token (RegisterAck, ShardHomes) or the stamp's token.
    pub token: u64,
    /// The stamp's shard version.
    pub version: u64,
    pub payload: &'a [u8],
    /// HostShard: the remembered entities.
    pub entities: &'a [shardline_core::protocol::EntityId],
    /// ShardHomes.
    pub homes: &'a [ShardHome],
}

/// A region id as the flat forms write it, "" for the coordinator.
pub(crate) fn endpoint_of(e: &Endpoint) -> &str {
    match e {
        Endpoint::Coordinator => "",
        Endpoint::Region(r) => r,
    }
}

/// The endpoint a flat form's id names: "" is the coordinator.
pub(crate) fn endpoint(id: &str) -> Endpoint {
    if id.is_empty() {
        Endpoint::Coordinator
    } else {
        Endpoint::Region(id.into())
    }
}

impl<'a> FlatEnvelope<'a> {
    /// A view of `e`, or `None` for the messages that have no flat form: load reports and
    /// region offers (a registration with an offer included), which are rare and carry maps,
    /// so a host passes them as the whole envelope.
    pub fn of(e: &'a Envelope) -> Option<FlatEnvelope<'a>> {
        let mut f = FlatEnvelope {
            from: endpoint_of(&e.from),
            to: endpoint_of(&e.to),
            ..FlatEnvelope::default()
        };
        let mut stamp = |shard: &'a str, s: &Stamp| {
            f.shard = shard;
            f.token = s.token.0;
            f.version = s.version.0;
        };
        let kind = match &e.message {
            Message::Command(c) => match c {
                Command::Register { node, offer } => {
                    if !offer.is_default() {
                        return None;
                    }
                    f.node = node;
                    0
                }
                Command::RegisterProxy { node } => {
                    f.node = node;
                    1
                }
                Command::ReportLoads { .. } | Command::UpdateOffer { .. } => return None,
                Command::GetShardHome { shard } => {
                    f.shard = shard;
                    2
                }
                Command::ShardStarted { shard, stamp: s } => {
                    stamp(shard, s);
                    3
                }
                Command::BeginHandOffAck { shard, stamp: s } => {
                    stamp(shard, s);
                    4
                }
                Command::ShardStopped { shard, stamp: s } => {
                    stamp(shard, s);
                    5
                }
                Command::GracefulShutdownReq => 6,
                Command::RegionStopped => 7,
                Command::EntityStarted { shard, entity }
                | Command::EntityPassivated { shard, entity } => {
                    f.shard = shard;
                    f.entity = entity;
                    if matches!(c, Command::EntityStarted { .. }) {
                        8
                    } else {
                        9
                    }
                }
            },
            Message::Directive(d) => match d {
                Directive::RegisterAck { token } => {
                    f.token = token.0;
                    10
                }
                Directive::ShardHome(h) => {
                    stamp(&h.shard, &h.stamp);
                    f.region = &h.region;
                    11
                }
                Directive::ShardHomes { token, homes } => {
                    f.token = token.0;
                    f.homes = homes;
                    12
                }
                Directive::HostShard {
                    shard,
                    stamp: s,
                    entities,
                } => {
                    stamp(shard, s);
                    f.entities = entities;
                    13
                }
                Directive::BeginHandOff { shard, stamp: s } => {
                    stamp(shard, s);
                    14
                }
                Directive::HandOff { shard, stamp: s } => {
                    stamp(shard, s);
                    15
                }
            },
            Message::Forward(fw) => {
                f.shard = &fw.shard;
                f.entity = &fw.entity;
                f.payload = &fw.payload;
                16
            }
        };
        Some(FlatEnvelope { kind, ..f })
    }

    /// The envelope these fields describe.
    pub fn envelope(&self) -> Result<Envelope> {
        let shard = || shardline_core::protocol::ShardId::from(self.shard);
        let stamp = Stamp::new(self.token, self.version);
        let command = |c| Ok(Message::Command(c));
        let directive = |d| Ok(Message::Directive(d));
        let message: Result<Message> = match self.kind {
            0 => command(Command::register(self.node)),
            1 => command(Command::RegisterProxy {
                node: self.node.to_owned(),
            }),
            2 => command(Command::GetShardHome { shard: shard() }),
            3 => command(Command::ShardStarted {
                shard: shard(),
                stamp,
            }),
            4 => command(Command::BeginHandOffAck {
                shard: shard(),
                stamp,
            }),
            5 => command(Command::ShardStopped {
                shard: shard(),
                stamp,
            }),
            6 => command(Command::GracefulShutdownReq),
            7 => command(Command::RegionStopped),
            8 => command(Command::EntityStarted {
                shard: shard(),
                entity: self.entity.into(),
            }),
            9 => command(Command::EntityPassivated {
                shard: shard(),
                entity: self.entity.into(),
            }),
            10 => directive(Directive::RegisterAck {
                token: FencingToken(self.token),
            }),
            11 => directive(Directive::ShardHome(ShardHome {
                shard: shard(),
                region: self.region.into(),
                stamp,
            })),
            12 => directive(Directive::ShardHomes {
                token: FencingToken(self.token),
                homes: self.homes.to_vec(),
            }),
            13 => directive(Directive::HostShard {
                shard: shard(),
                stamp,
                entities: self.entities.to_vec(),
            }),
            14 => directive(Directive::BeginHandOff {
                shard: shard(),
                stamp,
            }),
            15 => directive(Directive::HandOff {
                shard: shard(),
                stamp,
            }),
            16 => Ok(Message::Forward(Forward {
                shard: shard(),
                entity: self.entity.into(),
                payload: self.payload.to_vec(),
            })),
            k => Err(Error::invalid_argument(format!(
                "message kind {k} is not one of the {} kinds",
                KINDS.len()
            ))),
        };
        Ok(Envelope {
            from: endpoint(self.from),
            to: endpoint(self.to),
            message: message?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(json: &str) -> Envelope {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn every_kind_round_trips_and_is_named_as_in_json() {
        let cases = [
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"register","node":"pekko://s@h:1"}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"registerProxy","node":"pekko://s@h:1"}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"getShardHome","shard":"7"}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"shardStarted","shard":"7","stamp":{"token":1,"version":2}}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"beginHandOffAck","shard":"7","stamp":{"token":1,"version":2}}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"shardStopped","shard":"7","stamp":{"token":1,"version":2}}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"gracefulShutdownReq"}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"regionStopped"}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"entityStarted","shard":"7","entity":"e"}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"entityPassivated","shard":"7","entity":"e"}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"registerAck","token":3}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"shardHome","shard":"7","region":"r2","stamp":{"token":1,"version":2}}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"shardHomes","token":3,"homes":[{"shard":"7","region":"r2","stamp":{"token":1,"version":2}}]}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"hostShard","shard":"7","stamp":{"token":1,"version":2},"entities":["a","b"]}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"beginHandOff","shard":"7","stamp":{"token":1,"version":2}}}}"#,
            r#"{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"handOff","shard":"7","stamp":{"token":1,"version":2}}}}"#,
            r#"{"from":{"region":"r1"},"to":{"region":"r2"},"message":{"forward":{"shard":"7","entity":"e","payload":"AGhp/w=="}}}"#,
        ];
        for (i, json) in cases.iter().enumerate() {
            let e = envelope(json);
            let flat = FlatEnvelope::of(&e).unwrap();
            assert_eq!(flat.kind, i, "{json}");
            assert!(json.contains(KINDS[i]), "{json} is not {}", KINDS[i]);
            assert_eq!(flat.envelope().unwrap(), e, "{json}");
        }
    }

    #[test]
    fn loads_and_offers_have_no_flat_form() {
        for json in [
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"register","node":"pekko://s@h:1","capacity":2.0}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"reportLoads","loads":{"7":1.5}}}}"#,
            r#"{"from":{"region":"r1"},"to":"coordinator","message":{"command":{"type":"updateOffer","tags":["ssd"]}}}"#,
        ] {
            assert_eq!(FlatEnvelope::of(&envelope(json)), None, "{json}");
        }
    }

    #[test]
    fn an_unknown_kind_is_refused() {
        let flat = FlatEnvelope {
            kind: KINDS.len(),
            ..FlatEnvelope::default()
        };
        assert!(flat.envelope().unwrap_err().message().contains("17"));
    }
}
