//! One test per region transition; entity ids are `shard:name` so the shard is obvious.

use super::*;

const NODE: &str = "pekko://sys@h1:2552";

fn extractor() -> ShardExtractor {
    ShardExtractor::custom(|e| e.split(':').next().unwrap_or("").into())
}

struct T {
    r: Region,
    now: u64,
}

impl T {
    fn new(config: RegionConfig) -> T {
        let mut r = Region::new(config, "a", NODE, extractor()).unwrap();
        r.start(0);
        T { r, now: 0 }
    }

    fn registered(config: RegionConfig) -> T {
        let mut t = T::new(config);
        t.dir(Directive::RegisterAck {
            token: FencingToken(5),
        });
        t.out();
        t
    }

    fn dir(&mut self, d: Directive) {
        self.r.handle(
            self.now,
            RegionInput::Receive(Envelope {
                from: Endpoint::Coordinator,
                to: Endpoint::Region("a".into()),
                message: Message::Directive(d),
            }),
        );
    }

    fn send(&mut self, entity: &str, payload: &str) {
        self.r
            .route(self.now, entity, payload.as_bytes().to_vec())
            .unwrap();
    }

    fn out(&mut self) -> Vec<RegionOutput> {
        self.r.drain_outputs()
    }

    fn advance(&mut self, ms: u64) {
        self.now += ms;
        self.r.on_timeout(self.now);
    }
}

fn st(v: u64) -> Stamp {
    Stamp::new(5, v)
}

fn home(shard: &str, region: &str, v: u64) -> Directive {
    Directive::ShardHome(ShardHome {
        shard: shard.into(),
        region: region.into(),
        stamp: st(v),
    })
}

fn host(shard: &str, v: u64) -> Directive {
    Directive::HostShard {
        shard: shard.into(),
        stamp: st(v),
        entities: vec![],
    }
}

fn cmds(outs: &[RegionOutput]) -> Vec<Command> {
    outs.iter()
        .filter_map(|o| match o {
            RegionOutput::Send(Envelope {
                to: Endpoint::Coordinator,
                message: Message::Command(c),
                ..
            }) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

fn forwards(outs: &[RegionOutput]) -> Vec<(String, String)> {
    outs.iter()
        .filter_map(|o| match o {
            RegionOutput::Send(Envelope {
                to: Endpoint::Region(to),
                message: Message::Forward(f),
                ..
            }) => Some((
                to.to_string(),
                String::from_utf8(f.payload.clone()).unwrap(),
            )),
            _ => None,
        })
        .collect()
}

fn delivered(outs: &[RegionOutput]) -> Vec<String> {
    outs.iter()
        .filter_map(|o| match o {
            RegionOutput::Deliver { payload, .. } => {
                Some(String::from_utf8(payload.clone()).unwrap())
            }
            _ => None,
        })
        .collect()
}

fn refused(outs: &[RegionOutput]) -> usize {
    outs.iter()
        .filter(|o| {
            matches!(
                o,
                RegionOutput::Notice(RegionNotice::DirectiveRefused { .. })
            )
        })
        .count()
}

#[test]
fn registration_backs_off_until_acked() {
    let mut t = T::new(RegionConfig::default());
    assert_eq!(cmds(&t.out()), vec![Command::register(NODE)]);
    let mut sends = Vec::new();
    for _ in 0..40 {
        t.advance(50);
        if !cmds(&t.out()).is_empty() {
            sends.push(t.now);
        }
    }
    // 250 ms, then doubling (500, 1000) up to the 2 s retry interval; the retry tick at
    // 2000 re-registers too.
    assert_eq!(sends, vec![250, 750, 1750, 2000]);
    t.dir(Directive::RegisterAck {
        token: FencingToken(1),
    });
    assert!(t.r.is_registered());
    t.out();
    t.advance(10_000);
    assert!(cmds(&t.out()).is_empty(), "registered: no more Register");
    let mut p = Region::new(
        RegionConfig {
            proxy: true,
            ..Default::default()
        },
        "p",
        NODE,
        extractor(),
    )
    .unwrap();
    p.start(0);
    assert_eq!(
        cmds(&p.drain_outputs()),
        vec![Command::RegisterProxy { node: NODE.into() }]
    );
}

#[test]
fn unknown_homes_buffer_ask_once_then_forward_in_order() {
    let mut t = T::registered(RegionConfig::default());
    t.send("s1:x", "1");
    t.send("s1:y", "2");
    assert_eq!(
        cmds(&t.out()),
        vec![Command::GetShardHome { shard: "s1".into() }]
    );
    assert_eq!(t.r.buffered_for("s1"), 2);
    t.dir(home("s1", "b", 1));
    t.send("s1:x", "3");
    assert_eq!(
        forwards(&t.out()),
        vec![
            ("b".into(), "1".into()),
            ("b".into(), "2".into()),
            ("b".into(), "3".into())
        ]
    );
    assert_eq!(t.r.buffered(), 0);
}

#[test]
fn the_retry_tick_asks_again_for_buffered_shards() {
    let mut t = T::registered(RegionConfig::default());
    t.send("s1:x", "1");
    t.out(); // the first GetShardHome is lost
    t.advance(2_000);
    assert_eq!(
        cmds(&t.out()),
        vec![Command::GetShardHome { shard: "s1".into() }]
    );
}

#[test]
fn a_shard_paused_by_a_hand_off_that_never_ends_asks_for_its_home() {
    // Regression (found by the simulator): the coordinator dropped the announcement of a
    // forced move with a failed write and reloaded; the leaving owner stayed paused forever.
    let mut t = T::registered(RegionConfig::default());
    t.dir(host("s1", 1));
    t.r.handle(t.now, RegionInput::GracefulShutdown);
    t.dir(Directive::BeginHandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.out();
    t.advance(2_000);
    assert!(
        cmds(&t.out()).contains(&Command::GetShardHome { shard: "s1".into() }),
        "the retry tick asks about the paused shard"
    );
    t.dir(home("s1", "b", 4));
    assert!(t
        .out()
        .contains(&RegionOutput::StopShard { shard: "s1".into() }));
    t.r.handle(t.now, RegionInput::ShardStopped { shard: "s1".into() });
    assert!(
        t.out().contains(&RegionOutput::Stopped),
        "the shutdown ends"
    );

    // Told to keep it instead, the region resumes the shard.
    let mut t = T::registered(RegionConfig::default());
    t.dir(host("s1", 1));
    t.dir(Directive::BeginHandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.out();
    t.advance(2_000);
    t.out();
    t.dir(home("s1", "a", 3));
    assert_eq!(t.r.running_shards(), vec!["s1".to_string()]);
    t.advance(2_000);
    let asked = cmds(&t.out());
    assert!(
        asked.is_empty(),
        "nothing left to ask once the shard runs: {asked:?}"
    );
}

#[test]
fn host_shard_starts_acks_and_delivers_buffered_first() {
    let mut t = T::registered(RegionConfig::default());
    t.send("s1:x", "1");
    t.out();
    t.dir(host("s1", 1));
    t.send("s1:y", "2");
    let outs = t.out();
    assert_eq!(
        outs[0],
        RegionOutput::StartShard {
            shard: "s1".into(),
            entities: vec![]
        }
    );
    assert_eq!(
        cmds(&outs),
        vec![Command::ShardStarted {
            shard: "s1".into(),
            stamp: st(1)
        }]
    );
    assert_eq!(delivered(&outs), vec!["1", "2"]);
    // A duplicate is acked again but starts nothing.
    t.dir(host("s1", 1));
    let outs = t.out();
    assert_eq!(cmds(&outs).len(), 1);
    assert!(!outs
        .iter()
        .any(|o| matches!(o, RegionOutput::StartShard { .. })));
    assert_eq!(t.r.home_of("s1"), Some("a"));
}

#[test]
fn older_directives_and_deposed_coordinators_are_refused() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(home("s1", "b", 3));
    t.out();
    t.dir(home("s1", "c", 2));
    t.dir(host("s1", 2));
    assert_eq!(refused(&t.out()), 2);
    assert_eq!(t.r.home_of("s1"), Some("b"));
    assert!(
        t.r.local_shards().is_empty(),
        "no resurrection from an old HostShard"
    );
    // A coordinator with a smaller token is ignored entirely.
    t.dir(Directive::RegisterAck {
        token: FencingToken(4),
    });
    t.dir(Directive::HostShard {
        shard: "s9".into(),
        stamp: Stamp::new(4, 100),
        entities: vec![],
    });
    assert_eq!(refused(&t.out()), 2);
    assert!(t.r.local_shards().is_empty());
}

#[test]
fn a_newer_coordinator_gets_a_registration() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(Directive::HostShard {
        shard: "s1".into(),
        stamp: Stamp::new(6, 1),
        entities: vec![],
    });
    let c = cmds(&t.out());
    assert!(c.contains(&Command::register(NODE)), "{c:?}");
    assert!(c.contains(&Command::ShardStarted {
        shard: "s1".into(),
        stamp: Stamp::new(6, 1)
    }));
    assert!(!t.r.is_registered());
    t.r.handle(0, RegionInput::CoordinatorChanged);
    assert_eq!(cmds(&t.out()), vec![Command::register(NODE)]);
}

#[test]
fn hand_off_stops_the_shard_and_keeps_buffered_messages_in_order() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(host("s1", 1));
    t.send("s1:x", "1");
    t.out();
    t.dir(Directive::BeginHandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.send("s1:x", "2");
    t.send("s1:y", "3");
    let outs = t.out();
    assert!(
        delivered(&outs).is_empty(),
        "nothing reaches a shard in hand-off"
    );
    assert_eq!(
        cmds(&outs),
        vec![
            Command::BeginHandOffAck {
                shard: "s1".into(),
                stamp: st(2)
            },
            Command::GetShardHome { shard: "s1".into() }
        ]
    );
    t.dir(Directive::HandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.dir(Directive::HandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    let outs = t.out();
    assert_eq!(
        outs,
        vec![RegionOutput::StopShard { shard: "s1".into() }],
        "stopped once, nothing dropped"
    );
    t.send("s1:z", "4");
    t.r.handle(t.now, RegionInput::ShardStopped { shard: "s1".into() });
    let outs = t.out();
    assert_eq!(
        cmds(&outs),
        vec![Command::ShardStopped {
            shard: "s1".into(),
            stamp: st(2)
        }]
    );
    assert_eq!(t.r.buffered_for("s1"), 3);
    t.dir(home("s1", "b", 4));
    t.send("s1:x", "5");
    assert_eq!(
        forwards(&t.out()),
        vec![
            ("b".into(), "2".into()),
            ("b".into(), "3".into()),
            ("b".into(), "4".into()),
            ("b".into(), "5".into())
        ]
    );
}

#[test]
fn hand_off_of_a_shard_not_hosted_answers_at_once_and_repeats() {
    let mut t = T::registered(RegionConfig::default());
    for _ in 0..2 {
        t.dir(Directive::HandOff {
            shard: "s1".into(),
            stamp: st(2),
        });
        assert_eq!(
            cmds(&t.out()),
            vec![Command::ShardStopped {
                shard: "s1".into(),
                stamp: st(2)
            }]
        );
    }
}

#[test]
fn a_full_buffer_hands_the_message_back() {
    let mut t = T::registered(RegionConfig {
        buffer_capacity: 2,
        ..Default::default()
    });
    t.send("s1:x", "1");
    t.send("s2:x", "2");
    let err = t.r.route(t.now, "s1:y", b"3".to_vec()).unwrap_err();
    assert_eq!(err.payload, b"3");
    assert_eq!(err.entity, "s1:y");
    assert_eq!(err.reason, RejectReason::BufferFull { capacity: 2 });
    let value = |name: &str, reason: Option<&str>| {
        t.r.metrics()
            .into_iter()
            .find(|m| {
                m.name == name
                    && m.attributes.get("shardline.region").map(String::as_str) == Some("a")
                    && m.attributes.get("shardline.reason").map(String::as_str) == reason
            })
            .unwrap_or_else(|| panic!("no metric {name}"))
            .value
    };
    assert_eq!(value("shardline.region.buffered", None), 2);
    assert_eq!(value("shardline.region.rejected", Some("buffer_full")), 1);
    assert_eq!(value("shardline.region.rejected", Some("shut_down")), 0);
    assert_eq!(value("shardline.region.registered", None), 1);
    let e: Error = err.into();
    assert!(e.message().contains("buffer is full"), "{e}");
    // A forwarded message cannot be handed back to its sender: the host gets it.
    t.r.handle(
        t.now,
        RegionInput::Receive(Envelope {
            from: Endpoint::Region("b".into()),
            to: Endpoint::Region("a".into()),
            message: Message::Forward(Forward {
                shard: "s3".into(),
                entity: "s3:q".into(),
                payload: b"4".to_vec(),
            }),
        }),
    );
    assert!(t
        .out()
        .iter()
        .any(|o| matches!(o, RegionOutput::Undeliverable { payload, .. } if payload == b"4")));
    t.dir(home("s1", "b", 1));
    t.out();
    t.send("s3:x", "5");
    assert_eq!(t.r.buffered(), 2, "room again after the flush");
}

#[test]
fn a_newer_home_elsewhere_stops_the_local_copy_for_good() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(host("s1", 1));
    t.out();
    // Forced move: we never got HandOff, but hear the new home.
    t.dir(home("s1", "b", 4));
    t.send("s1:x", "1");
    let outs = t.out();
    assert!(outs.contains(&RegionOutput::StopShard { shard: "s1".into() }));
    assert_eq!(forwards(&outs), vec![("b".into(), "1".into())]);
    t.r.handle(t.now, RegionInput::ShardStopped { shard: "s1".into() });
    assert!(
        cmds(&t.out()).is_empty(),
        "no ack for a stop nobody asked for"
    );
    // Late, reordered directives from before the move cannot bring it back.
    t.dir(host("s1", 1));
    t.dir(home("s1", "a", 3));
    t.dir(Directive::BeginHandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    assert_eq!(refused(&t.out()), 3);
    assert!(t.r.local_shards().is_empty());
    assert_eq!(t.r.home_of("s1"), Some("b"));
}

#[test]
fn host_shard_while_stopping_restarts_after_the_stop() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(host("s1", 1));
    t.dir(Directive::HandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.out();
    t.dir(host("s1", 3));
    t.send("s1:x", "1");
    let outs = t.out();
    assert!(cmds(&outs)
        .iter()
        .all(|c| matches!(c, Command::GetShardHome { .. })));
    assert!(delivered(&outs).is_empty());
    t.r.handle(t.now, RegionInput::ShardStopped { shard: "s1".into() });
    let outs = t.out();
    assert_eq!(
        cmds(&outs),
        vec![
            Command::ShardStopped {
                shard: "s1".into(),
                stamp: st(2)
            },
            Command::ShardStarted {
                shard: "s1".into(),
                stamp: st(3)
            }
        ]
    );
    assert!(outs.contains(&RegionOutput::StartShard {
        shard: "s1".into(),
        entities: vec![]
    }));
    assert_eq!(delivered(&outs), vec!["1"]);
}

#[test]
fn graceful_shutdown_hands_everything_off_then_stops() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(host("s1", 1));
    t.out();
    t.r.handle(t.now, RegionInput::GracefulShutdown);
    assert_eq!(cmds(&t.out()), vec![Command::GracefulShutdownReq]);
    t.dir(host("s2", 1));
    assert_eq!(
        cmds(&t.out()),
        vec![Command::GracefulShutdownReq],
        "no new shards while leaving"
    );
    t.advance(2_000);
    assert!(cmds(&t.out()).contains(&Command::GracefulShutdownReq));
    t.dir(Directive::BeginHandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.send("s1:x", "1");
    t.dir(Directive::HandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.r.handle(t.now, RegionInput::ShardStopped { shard: "s1".into() });
    assert!(
        !t.out().contains(&RegionOutput::Stopped),
        "a message still waits"
    );
    t.dir(home("s1", "b", 4));
    let outs = t.out();
    assert_eq!(forwards(&outs), vec![("b".into(), "1".into())]);
    assert!(cmds(&outs).contains(&Command::RegionStopped));
    assert_eq!(outs.last(), Some(&RegionOutput::Stopped));
    let err = t.r.route(t.now, "s1:x", b"2".to_vec()).unwrap_err();
    assert_eq!(err.reason, RejectReason::ShutDown);
}

#[test]
fn remembered_entities_are_reported_and_restarted() {
    let mut t = T::registered(RegionConfig {
        remember_entities: true,
        ..Default::default()
    });
    t.dir(Directive::HostShard {
        shard: "s1".into(),
        stamp: st(1),
        entities: vec!["s1:old".into()],
    });
    let outs = t.out();
    assert!(outs.contains(&RegionOutput::StartShard {
        shard: "s1".into(),
        entities: vec!["s1:old".into()]
    }));
    t.send("s1:old", "1");
    t.send("s1:new", "2");
    t.send("s1:new", "3");
    assert_eq!(
        cmds(&t.out()),
        vec![Command::EntityStarted {
            shard: "s1".into(),
            entity: "s1:new".into()
        }]
    );
    t.r.handle(
        t.now,
        RegionInput::EntityPassivated {
            shard: "s1".into(),
            entity: "s1:new".into(),
        },
    );
    assert_eq!(
        cmds(&t.out()),
        vec![Command::EntityPassivated {
            shard: "s1".into(),
            entity: "s1:new".into()
        }]
    );
    t.dir(Directive::HostShard {
        shard: "s1".into(),
        stamp: st(1),
        entities: vec!["s1:old".into(), "s1:more".into()],
    });
    assert!(t.out().contains(&RegionOutput::StartEntities {
        shard: "s1".into(),
        entities: vec!["s1:more".into()]
    }));
}

#[test]
fn a_terminated_region_is_dropped_from_the_routing_cache() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(home("s1", "b", 1));
    t.r.handle(t.now, RegionInput::RegionTerminated { region: "b".into() });
    t.send("s1:x", "1");
    let outs = t.out();
    assert!(forwards(&outs).is_empty());
    assert_eq!(
        cmds(&outs),
        vec![Command::GetShardHome { shard: "s1".into() }]
    );
}

#[test]
fn a_late_home_naming_a_terminated_region_is_not_used() {
    // Regression (found by the simulator): a duplicate ShardHome arriving after the death
    // watch reinstalled the dead region as the home, so messages went there and bounced.
    let mut t = T::registered(RegionConfig::default());
    t.dir(home("s1", "b", 3));
    t.r.handle(t.now, RegionInput::RegionTerminated { region: "b".into() });
    t.dir(home("s1", "b", 3));
    t.out();
    t.send("s1:x", "1");
    let outs = t.out();
    assert!(
        forwards(&outs).is_empty(),
        "nothing goes to the dead region"
    );
    assert_eq!(
        cmds(&outs),
        vec![Command::GetShardHome { shard: "s1".into() }]
    );
    assert_eq!(t.r.buffered_for("s1"), 1);
    // Another answer naming it asks again; the real new home delivers.
    t.dir(home("s1", "b", 4));
    assert_eq!(
        cmds(&t.out()),
        vec![Command::GetShardHome { shard: "s1".into() }]
    );
    t.dir(home("s1", "c", 5));
    assert_eq!(forwards(&t.out()), vec![("c".into(), "1".to_string())]);
}

#[test]
fn shard_homes_batches_update_the_cache_and_can_assign_our_own_shards() {
    let mut t = T::registered(RegionConfig::default());
    t.dir(Directive::ShardHomes {
        token: FencingToken(5),
        homes: vec![
            ShardHome {
                shard: "s1".into(),
                region: "b".into(),
                stamp: st(1),
            },
            ShardHome {
                shard: "s2".into(),
                region: "a".into(),
                stamp: st(1),
            },
        ],
    });
    t.send("s1:x", "1");
    t.send("s2:x", "2");
    let outs = t.out();
    assert_eq!(forwards(&outs), vec![("b".into(), "1".into())]);
    assert_eq!(delivered(&outs), vec!["2"]);
    assert!(
        cmds(&outs).is_empty(),
        "ShardHome is not acked like HostShard"
    );
}

#[test]
fn forwarded_messages_join_the_same_order_as_local_ones() {
    let mut t = T::registered(RegionConfig::default());
    t.send("s1:x", "1");
    t.r.handle(
        t.now,
        RegionInput::Receive(Envelope {
            from: Endpoint::Region("c".into()),
            to: Endpoint::Region("a".into()),
            message: Message::Forward(Forward {
                shard: "s1".into(),
                entity: "s1:x".into(),
                payload: b"2".to_vec(),
            }),
        }),
    );
    t.send("s1:x", "3");
    t.dir(host("s1", 1));
    assert_eq!(delivered(&t.out()), vec!["1", "2", "3"]);
}

#[test]
fn config_from_json() {
    let c =
        RegionConfig::from_json(&serde_json::json!({"bufferCapacity": 5, "proxy": true})).unwrap();
    assert_eq!(c.buffer_capacity, 5);
    assert!(c.proxy);
    assert!(RegionConfig::from_json(&serde_json::json!({"bufferCapacity": 0})).is_err());
    assert!(Region::new(RegionConfig::default(), "", NODE, extractor()).is_err());
}

#[test]
fn cached_homes_share_region_ids_and_forget_unused_ones() {
    let mut t = T::registered(RegionConfig::default());
    // One shard moving through many regions that are never reported dead: the interned ids
    // of the regions it left are dropped, so they cannot pile up.
    for v in 1..=1000 {
        t.dir(home("s", &format!("r{v}"), v));
    }
    assert_eq!(t.r.home_of("s"), Some("r1000"));
    assert!(
        t.r.names.len() <= 2 * MIN_NAMES_LIMIT,
        "{}",
        t.r.names.len()
    );
    // Many shards on one region share one copy of its id, when it is too long to be inline.
    let b = "pekko://sys@10.0.0.2:2552/system/sharding/counter#1";
    for k in 0..100 {
        t.dir(home(&format!("k{k}"), b, 1));
    }
    let interned = t.r.names.get(b).expect("interned").as_ptr();
    assert!(t.r.names.get(b).unwrap().is_heap_allocated());
    assert!((0..100).all(|k| t.r.homes.get(format!("k{k}").as_str()).unwrap().as_ptr() == interned));
    t.send("k7:e", "m");
    assert_eq!(forwards(&t.out()), vec![(b.to_string(), "m".to_string())]);
    // A reported death forgets its homes and its id.
    t.r.handle(t.now, RegionInput::RegionTerminated { region: b.into() });
    assert_eq!(t.r.home_of("k7"), None);
    assert!(!t.r.names.contains(b));
}

#[test]
fn loads_go_to_the_coordinator_and_offers_with_every_registration() {
    let offer = RegionOffer {
        capacity: Some(Amount::Uniform(4.0)),
        tags: vec!["ssd".into()],
        max_shards: None,
    };
    let config = RegionConfig {
        offer: offer.clone(),
        ..RegionConfig::default()
    };
    let mut t = T::new(config);
    assert_eq!(
        cmds(&t.out()),
        vec![Command::Register {
            node: NODE.into(),
            offer: Box::new(offer.clone())
        }]
    );
    // Before the ack a new offer waits for the next registration.
    let bigger = RegionOffer {
        capacity: Some(Amount::Uniform(8.0)),
        ..offer
    };
    t.r.handle(
        t.now,
        RegionInput::UpdateOffer {
            offer: bigger.clone(),
        },
    );
    assert!(cmds(&t.out()).is_empty());
    t.advance(250);
    assert_eq!(
        cmds(&t.out()),
        vec![Command::Register {
            node: NODE.into(),
            offer: Box::new(bigger)
        }]
    );
    t.dir(Directive::RegisterAck {
        token: FencingToken(5),
    });
    t.out();
    t.r.handle(
        t.now,
        RegionInput::UpdateOffer {
            offer: RegionOffer::default(),
        },
    );
    assert_eq!(
        cmds(&t.out()),
        vec![Command::UpdateOffer {
            offer: Box::default()
        }]
    );
    let loads: BTreeMap<ShardId, Amount> = [("1".into(), Amount::Uniform(3.0))].into();
    t.r.handle(
        t.now,
        RegionInput::ReportLoads {
            loads: loads.clone(),
        },
    );
    assert_eq!(cmds(&t.out()), vec![Command::ReportLoads { loads }]);
}

#[test]
fn malformed_loads_and_offers_are_refused_with_a_notice() {
    let mut t = T::registered(RegionConfig::default());
    let bad: BTreeMap<ShardId, Amount> = [("1".into(), Amount::Uniform(f64::INFINITY))].into();
    t.r.handle(t.now, RegionInput::ReportLoads { loads: bad });
    t.r.handle(
        t.now,
        RegionInput::UpdateOffer {
            offer: RegionOffer {
                tags: vec![String::new()],
                ..RegionOffer::default()
            },
        },
    );
    let outs = t.out();
    assert!(cmds(&outs).is_empty(), "{outs:?}");
    assert_eq!(
        outs,
        vec![
            RegionOutput::Notice(RegionNotice::InputRefused {
                input: "reportLoads".into(),
                reason: "loads.1: expected a finite number >= 0, got inf".into(),
            }),
            RegionOutput::Notice(RegionNotice::InputRefused {
                input: "updateOffer".into(),
                reason: "tags: a tag is empty".into(),
            }),
        ]
    );
    let e = RegionConfig::from_json(&serde_json::json!({"offer": {"capacity": {"cpu": 0}}}))
        .unwrap_err();
    assert_eq!(
        e.message(),
        "region config: offer: capacity.cpu: expected a finite number > 0, got 0"
    );
}

#[test]
fn a_restart_after_an_acknowledged_begin_hand_off_delivers_nothing() {
    // A keep-owner timeout (or a forced move back to us) restarts the shard after its slow
    // stop; a newer hand-off begins meanwhile. Our ack tells the coordinator we no longer
    // deliver, which a force-reallocate timeout relies on to give the shard away while our
    // copy may still run: the restarted copy must buffer, not deliver.
    let mut t = T::registered(RegionConfig::default());
    t.dir(host("s1", 1));
    t.dir(Directive::HandOff {
        shard: "s1".into(),
        stamp: st(2),
    });
    t.dir(host("s1", 3));
    t.dir(Directive::BeginHandOff {
        shard: "s1".into(),
        stamp: st(4),
    });
    t.out();
    t.r.handle(t.now, RegionInput::ShardStopped { shard: "s1".into() });
    t.send("s1:x", "1");
    let outs = t.out();
    assert!(outs.contains(&RegionOutput::StartShard {
        shard: "s1".into(),
        entities: vec![]
    }));
    assert!(
        delivered(&outs).is_empty(),
        "delivered after acking BeginHandOff"
    );
    assert_eq!(t.r.buffered(), 1);
    // The hand-off goes on as if the copy had been running and handing off.
    t.dir(Directive::HandOff {
        shard: "s1".into(),
        stamp: st(4),
    });
    let outs = t.out();
    assert!(outs.contains(&RegionOutput::StopShard { shard: "s1".into() }));
    t.r.handle(t.now, RegionInput::ShardStopped { shard: "s1".into() });
    t.dir(home("s1", "b", 5));
    assert_eq!(forwards(&t.out()), vec![("b".into(), "1".into())]);
}
