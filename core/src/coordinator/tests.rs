//! One test per transition, each driving the machine the way a host would: the harness
//! writes `Persist` outputs to an in-memory store and answers `LoadState` from it, and keeps
//! everything else for the test to inspect.

use super::*;
use crate::host::{InMemoryStore, Store, WriteOutcome};
use crate::metrics::MetricKind;
use crate::model::Member;
use crate::protocol::ShardVersion;
use crate::strategy::StrategyConfig;

fn node(i: u32) -> String {
    format!("pekko://sys@h{i}:2552")
}

fn strategy(json: serde_json::Value) -> Box<dyn AllocationStrategy> {
    StrategyConfig::from_json(&json).unwrap().build().unwrap()
}

fn least_shard() -> Box<dyn AllocationStrategy> {
    strategy(serde_json::json!({"kind": "least-shard"}))
}

const FAR: u64 = u64::MAX / 4;

struct H {
    c: Coordinator,
    store: InMemoryStore,
    now: u64,
    outs: Vec<CoordinatorOutput>,
}

impl H {
    fn new(config: CoordinatorConfig, store: InMemoryStore) -> H {
        H::new_with(config, store, least_shard())
    }

    fn new_with(
        config: CoordinatorConfig,
        store: InMemoryStore,
        strategy: Box<dyn AllocationStrategy>,
    ) -> H {
        let mut c = Coordinator::new(config, strategy, Address::parse(&node(0)).unwrap()).unwrap();
        for i in 0..=6 {
            c.handle(
                0,
                CoordinatorInput::Member(Box::new(Member::new(Address::parse(&node(i)).unwrap()))),
            )
            .unwrap();
        }
        H {
            c,
            store,
            now: 1_000,
            outs: Vec::new(),
        }
    }

    /// Started, granted `token` (valid for a very long time) and restored from the store.
    fn active_with(config: CoordinatorConfig, store: InMemoryStore, token: u64) -> H {
        let mut h = H::new(config, store);
        h.c.start(h.now);
        h.grant(token, FAR);
        assert!(h.c.is_active(), "{:?}", h.outs);
        h.outs.clear();
        h
    }

    fn active(config: CoordinatorConfig) -> H {
        H::active_with(config, InMemoryStore::new(), 7)
    }

    fn grant(&mut self, token: u64, valid_until_ms: u64) {
        self.input(CoordinatorInput::LeaseGranted(LeaseGrant {
            token: FencingToken(token),
            valid_until_ms,
        }));
    }

    /// Plays the host for storage; returns everything else.
    fn pump(&mut self) {
        while let Some(o) = self.c.poll_output() {
            match &o {
                CoordinatorOutput::Persist { token, record } => {
                    if let WriteOutcome::Fenced { .. } = self.store.append(*token, record).unwrap()
                    {
                        // The host drops the rest of the queue and reports the failure.
                        while self.c.poll_output().is_some() {}
                        self.c
                            .handle(self.now, CoordinatorInput::StoreFailed { fenced: true })
                            .unwrap();
                    }
                }
                CoordinatorOutput::SaveSnapshot { token, snapshot } => {
                    self.store.save_snapshot(*token, snapshot).unwrap();
                }
                CoordinatorOutput::LoadState { token } => {
                    let input = match self.store.load(*token).unwrap() {
                        Some(s) => CoordinatorInput::StateLoaded(Box::new(s)),
                        None => CoordinatorInput::StateLoadFailed { fenced: true },
                    };
                    self.outs.push(o.clone());
                    self.c.handle(self.now, input).unwrap();
                    continue;
                }
                _ => {}
            }
            self.outs.push(o);
        }
    }

    fn input(&mut self, i: CoordinatorInput) {
        self.c.handle(self.now, i).unwrap();
        self.pump();
    }

    fn from(&mut self, region: &str, cmd: Command) {
        self.input(CoordinatorInput::Receive(Envelope {
            from: Endpoint::Region(region.into()),
            to: Endpoint::Coordinator,
            message: Message::Command(cmd),
        }));
    }

    fn register(&mut self, region: &str, n: u32) {
        self.from(region, Command::register(node(n)));
    }

    fn ask(&mut self, region: &str, shard: &str) {
        self.from(
            region,
            Command::GetShardHome {
                shard: shard.into(),
            },
        );
    }

    fn advance_to(&mut self, t: u64) {
        self.now = t;
        self.c.on_timeout(t).unwrap();
        self.pump();
    }

    fn advance(&mut self, ms: u64) {
        let t = self.now + ms;
        self.advance_to(t);
    }

    fn take(&mut self) -> Vec<CoordinatorOutput> {
        std::mem::take(&mut self.outs)
    }

    fn sent(&mut self) -> Vec<(String, Directive)> {
        self.take()
            .into_iter()
            .filter_map(|o| match o {
                CoordinatorOutput::Send(Envelope {
                    to: Endpoint::Region(r),
                    message: Message::Directive(d),
                    ..
                }) => Some((r.to_string(), d)),
                _ => None,
            })
            .collect()
    }

    fn events(&self) -> Vec<Event> {
        self.store
            .contents()
            .events
            .into_iter()
            .map(|r| r.event)
            .collect()
    }

    fn home(&self, shard: &str) -> Option<String> {
        self.c.state().home_of(shard).map(str::to_owned)
    }

    /// Registers regions a (node 1) and b (node 2) and allocates shards 0..n, all to `a`
    /// (b registers afterwards), with every HostShard acked.
    fn two_regions_with_shards_on_a(&mut self, n: usize) {
        self.register("a", 1);
        for s in 0..n {
            self.ask("a", &s.to_string());
            let st = self.stamp_of(&s.to_string());
            self.from(
                "a",
                Command::ShardStarted {
                    shard: s.to_string().into(),
                    stamp: st,
                },
            );
        }
        self.register("b", 2);
        self.take();
    }

    fn stamp_of(&self, shard: &str) -> Stamp {
        Stamp {
            token: self.c.token().unwrap(),
            version: ShardVersion(self.c.state().version(shard)),
        }
    }

    fn ack_all(&mut self, shard: &str, stamp: Stamp, regions: &[&str]) {
        for r in regions {
            self.from(
                r,
                Command::BeginHandOffAck {
                    shard: shard.into(),
                    stamp,
                },
            );
        }
    }
}

fn begin_stamp(sent: &[(String, Directive)], shard: &str) -> Stamp {
    sent.iter()
        .find_map(|(_, d)| match d {
            Directive::BeginHandOff { shard: s, stamp } if s == shard => Some(*stamp),
            _ => None,
        })
        .expect("a BeginHandOff")
}

/// The one notice among `outs` is the step-down of the grant `token`.
fn assert_only_stepped_down(outs: &[CoordinatorOutput], token: u64) {
    assert!(
        matches!(
            &notices(outs)[..],
            [CoordinatorNotice::SteppedDown { token: t, .. }] if *t == FencingToken(token)
        ),
        "{outs:?}"
    );
}

fn notices(outs: &[CoordinatorOutput]) -> Vec<CoordinatorNotice> {
    outs.iter()
        .filter_map(|o| match o {
            CoordinatorOutput::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

// ---- lease gating -------------------------------------------------------------------------

#[test]
fn nothing_happens_before_the_lease_is_granted_and_denials_retry() {
    let mut h = H::new(CoordinatorConfig::default(), InMemoryStore::new());
    h.register("a", 1);
    assert!(h.take().is_empty(), "not started: messages are dropped");
    h.c.start(h.now);
    h.pump();
    assert_eq!(
        h.take(),
        vec![CoordinatorOutput::Lease(LeaseRequest::Acquire)]
    );
    h.register("a", 1);
    assert!(h.take().is_empty(), "acquiring: messages are dropped");
    h.input(CoordinatorInput::LeaseDenied);
    h.advance(4_999);
    assert!(h.take().is_empty());
    h.advance(1);
    assert_eq!(
        h.take(),
        vec![CoordinatorOutput::Lease(LeaseRequest::Acquire)]
    );
    h.grant(3, FAR);
    let outs = h.take();
    assert_eq!(
        outs[0],
        CoordinatorOutput::LoadState {
            token: FencingToken(3)
        }
    );
    assert!(notices(&outs).contains(&CoordinatorNotice::Active {
        token: FencingToken(3)
    }));
    h.register("a", 1);
    assert!(h.sent().contains(&(
        "a".into(),
        Directive::RegisterAck {
            token: FencingToken(3)
        }
    )));
    assert!(h.store.highest_token() == FencingToken(3));
}

#[test]
fn a_lease_token_that_does_not_grow_is_an_error() {
    let mut h = H::active(CoordinatorConfig::default());
    h.input(CoordinatorInput::LeaseLost {
        token: FencingToken(7),
    });
    h.advance(5_000);
    let err =
        h.c.handle(
            h.now,
            CoordinatorInput::LeaseGranted(LeaseGrant {
                token: FencingToken(7),
                valid_until_ms: FAR,
            }),
        )
        .unwrap_err();
    assert!(err.message().contains("does not exceed"), "{err}");
}

#[test]
fn the_local_deadline_stops_the_coordinator_without_any_event() {
    let mut h = H::new(CoordinatorConfig::default(), InMemoryStore::new());
    h.c.start(h.now);
    h.grant(1, 31_000);
    h.register("a", 1);
    h.take();
    // Renewals at a third of the remaining validity: 1000 + 30000/3.
    assert_eq!(h.c.next_deadline(), Some(11_000));
    h.advance_to(11_000);
    assert_eq!(
        h.take(),
        vec![CoordinatorOutput::Lease(LeaseRequest::Renew {
            token: FencingToken(1)
        })]
    );
    // The host never answers. Without on_timeout at 31000, a message at 31000 must already
    // find the coordinator stepped down.
    h.now = 31_000;
    h.ask("a", "s1");
    let outs = h.take();
    assert_only_stepped_down(&outs, 1);
    assert!(!outs.iter().any(|o| matches!(o, CoordinatorOutput::Send(_))));
    assert!(!h.c.is_active());
    // Lost once per grant: a late LeaseLost for the same token does nothing.
    h.input(CoordinatorInput::LeaseLost {
        token: FencingToken(1),
    });
    assert!(notices(&h.take()).is_empty());
}

/// Found by the model checker (`model/`): a host that calls `on_timeout` late, after the
/// lease's local deadline, saw the timers due before that deadline fire first, and a
/// rebalance round sent `BeginHandOff` under the expired lease, while a successor may already
/// hold the next token. Trace: the lease runs out; the coordinator's timers fire.
#[test]
fn a_late_timeout_past_the_lease_deadline_steps_down_before_any_timer_acts() {
    let config = CoordinatorConfig {
        rebalance_interval_ms: 1_000,
        ..CoordinatorConfig::default()
    };
    let mut h = H::new(config, InMemoryStore::new());
    h.c.start(h.now);
    h.grant(1, 4_000);
    h.two_regions_with_shards_on_a(2);
    // Due: the renewal at 2000 and the rebalance round at 2000; the deadline is 4000.
    h.advance_to(4_000);
    let outs = h.take();
    assert!(
        !outs.iter().any(|o| matches!(
            o,
            CoordinatorOutput::Send(_)
                | CoordinatorOutput::Persist { .. }
                | CoordinatorOutput::Lease(LeaseRequest::Renew { .. })
        )),
        "acted under an expired lease: {outs:?}"
    );
    assert_only_stepped_down(&outs, 1);
    assert!(!h.c.is_active());
}

#[test]
fn renewals_extend_and_failures_retry_until_the_deadline() {
    let mut h = H::new(CoordinatorConfig::default(), InMemoryStore::new());
    h.c.start(h.now);
    h.grant(1, 31_000);
    h.take();
    h.advance_to(11_000);
    h.take();
    h.input(CoordinatorInput::LeaseRenewed {
        token: FencingToken(1),
        valid_until_ms: 41_000,
    });
    h.advance_to(31_000);
    assert!(h.c.is_active(), "renewed past the first deadline");
    h.take();
    h.input(CoordinatorInput::LeaseRenewFailed {
        token: FencingToken(1),
    });
    // (41000 - 31000) / 3 later it asks again.
    h.advance_to(34_333);
    assert_eq!(
        h.take(),
        vec![CoordinatorOutput::Lease(LeaseRequest::Renew {
            token: FencingToken(1)
        })]
    );
    h.input(CoordinatorInput::LeaseRenewed {
        token: FencingToken(99),
        valid_until_ms: FAR,
    });
    h.advance_to(41_000);
    assert!(
        !h.c.is_active(),
        "a renewal of another grant does not extend this one"
    );
}

// ---- registration -------------------------------------------------------------------------

#[test]
fn only_up_members_and_the_own_node_may_register() {
    let mut h = H::active(CoordinatorConfig::default());
    let mut joining = Member::new(Address::parse(&node(9)).unwrap());
    joining.status = MemberStatus::Joining;
    h.input(CoordinatorInput::Member(Box::new(joining)));
    h.register("j", 9);
    h.from("x", Command::register("pekko://sys@nowhere:1"));
    h.from("bad", Command::register("not an address"));
    let outs = h.take();
    assert_eq!(notices(&outs).len(), 3, "{outs:?}");
    assert!(h.events().is_empty());
    // The coordinator's own node needs no membership entry.
    let mut h = H::new(CoordinatorConfig::default(), InMemoryStore::new());
    h.input(CoordinatorInput::MemberRemoved { address: node(0) });
    h.c.start(h.now);
    h.grant(1, FAR);
    h.register("local", 0);
    assert_eq!(h.events().len(), 1);
    assert!(h.c.allocation().region("local").unwrap().is_local());
}

#[test]
fn registration_sends_homes_first_persists_then_acks_and_is_idempotent() {
    let mut h = H::active(CoordinatorConfig::default());
    h.register("a", 1);
    h.ask("a", "s1");
    h.take();
    h.register("b", 2);
    let outs = h.take();
    let kinds: Vec<&str> = outs
        .iter()
        .map(|o| match o {
            CoordinatorOutput::Send(Envelope {
                message: Message::Directive(Directive::ShardHomes { .. }),
                ..
            }) => "homes",
            CoordinatorOutput::Send(Envelope {
                message: Message::Directive(Directive::RegisterAck { .. }),
                ..
            }) => "ack",
            CoordinatorOutput::Persist { .. } => "persist",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, vec!["homes", "persist", "ack"]);
    h.register("b", 2);
    let again = h.sent();
    assert!(again
        .iter()
        .any(|(_, d)| matches!(d, Directive::RegisterAck { .. })));
    assert_eq!(h.events().len(), 3, "no second ShardRegionRegistered");
}

#[test]
fn a_registration_never_takes_over_a_registered_identity() {
    let mut h = H::active(CoordinatorConfig::default());
    h.register("a", 1);
    h.ask("a", "s1");
    h.take();
    h.register("a", 2);
    let outs = h.take();
    assert!(matches!(
        &notices(&outs)[..],
        [CoordinatorNotice::RegisterRefused { region, .. }] if region == "a"
    ));
    assert_eq!(h.home("s1").as_deref(), Some("a"));
    assert_eq!(h.c.state().region_node("a"), Some(node(1).as_str()));
    h.from("a", Command::RegisterProxy { node: node(1) });
    assert_eq!(
        notices(&h.take()).len(),
        1,
        "a region cannot also be a proxy"
    );
}

#[test]
fn re_registration_re_sends_host_shard_for_the_regions_own_shards() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(2);
    h.register("a", 1);
    let hosts: Vec<ShardId> = h
        .sent()
        .into_iter()
        .filter_map(|(to, d)| match d {
            Directive::HostShard { shard, .. } if to == "a" => Some(shard),
            _ => None,
        })
        .collect();
    assert_eq!(hosts, vec!["0".to_string(), "1".into()]);
}

#[test]
fn shard_homes_are_batched_and_skip_shards_in_hand_off() {
    let mut h = H::active(CoordinatorConfig {
        shard_homes_batch: 2,
        shard_homes_max_batches: 2,
        ..Default::default()
    });
    h.two_regions_with_shards_on_a(6);
    h.advance(10_000); // rebalance: 1 shard ("0") moves
    assert_eq!(h.c.handoffs_in_progress(), vec!["0".to_string()]);
    h.take();
    h.register("c", 3);
    let batches: Vec<Vec<ShardId>> = h
        .sent()
        .into_iter()
        .filter_map(|(_, d)| match d {
            Directive::ShardHomes { homes, .. } => {
                Some(homes.into_iter().map(|x| x.shard).collect())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        batches,
        vec![
            vec!["1".to_string(), "2".into()],
            vec!["3".into(), "4".into()]
        ]
    );
}

// ---- allocation ---------------------------------------------------------------------------

#[test]
fn get_shard_home_waits_for_min_members_then_allocates_write_ahead() {
    let mut h = H::active(CoordinatorConfig {
        min_members: 2,
        ..Default::default()
    });
    h.register("a", 1);
    h.take();
    h.ask("a", "s1");
    assert!(h.take().is_empty(), "latch not reached");
    h.register("b", 2);
    h.take();
    h.ask("b", "s1");
    let outs = h.take();
    let persist = outs
        .iter()
        .position(|o| matches!(o, CoordinatorOutput::Persist { .. }))
        .unwrap();
    let host = outs
        .iter()
        .position(|o| {
            matches!(
                o,
                CoordinatorOutput::Send(Envelope {
                    message: Message::Directive(Directive::HostShard { .. }),
                    ..
                })
            )
        })
        .unwrap();
    let home = outs
        .iter()
        .position(|o| {
            matches!(
                o,
                CoordinatorOutput::Send(Envelope {
                    message: Message::Directive(Directive::ShardHome(_)),
                    ..
                })
            )
        })
        .unwrap();
    assert!(persist < host && host < home, "{outs:?}");
    assert_eq!(
        h.home("s1").as_deref(),
        Some("a"),
        "least shards, map order"
    );
    // The latch stays open even if a region goes away.
    h.input(CoordinatorInput::RegionTerminated { region: "b".into() });
    h.take();
    h.ask("a", "s2");
    assert_eq!(h.home("s2").as_deref(), Some("a"));
}

#[test]
fn known_homes_are_answered_with_the_current_stamp() {
    let mut h = H::active(CoordinatorConfig::default());
    h.register("a", 1);
    h.register("b", 2);
    h.ask("a", "s1");
    h.take();
    h.ask("b", "s1");
    assert_eq!(
        h.sent(),
        vec![(
            "b".to_string(),
            Directive::ShardHome(ShardHome {
                shard: "s1".into(),
                region: "a".into(),
                stamp: Stamp::new(7, 1)
            })
        )]
    );
}

#[test]
fn host_shard_is_resent_until_started_with_a_matching_stamp() {
    let mut h = H::active(CoordinatorConfig::default());
    h.register("a", 1);
    h.ask("a", "s1");
    h.take();
    h.advance(10_000);
    let resent = h.sent();
    assert!(
        matches!(&resent[..], [(to, Directive::HostShard { shard, .. })] if to == "a" && shard == "s1")
    );
    h.from(
        "b",
        Command::ShardStarted {
            shard: "s1".into(),
            stamp: Stamp::new(7, 1),
        },
    );
    h.from(
        "a",
        Command::ShardStarted {
            shard: "s1".into(),
            stamp: Stamp::new(6, 1),
        },
    );
    h.advance(10_000);
    assert_eq!(h.sent().len(), 1, "wrong sender and old token do not ack");
    h.from(
        "a",
        Command::ShardStarted {
            shard: "s1".into(),
            stamp: Stamp::new(7, 1),
        },
    );
    h.advance(10_000);
    assert!(h.sent().is_empty());
}

#[test]
fn allocations_never_target_regions_shutting_down() {
    let mut h = H::active(CoordinatorConfig::default());
    h.register("a", 1);
    h.register("b", 2);
    h.from("a", Command::GracefulShutdownReq);
    for s in 0..4 {
        h.ask("b", &format!("s{s}"));
    }
    for s in 0..4 {
        assert_eq!(h.home(&format!("s{s}")).as_deref(), Some("b"));
    }
    h.from("b", Command::GracefulShutdownReq);
    h.take();
    h.ask("b", "z");
    assert_eq!(
        h.home("z"),
        None,
        "no active region: the request is dropped"
    );
    assert!(h.sent().is_empty());
}

#[test]
fn a_strategy_answer_outside_the_active_regions_is_dropped() {
    // External falls back to the requester; a proxy is not a region.
    let mut h = H::active(CoordinatorConfig::default());
    h.c.strategy = strategy(serde_json::json!({"kind": "external"}));
    h.register("a", 1);
    h.from("p", Command::RegisterProxy { node: node(3) });
    h.take();
    h.ask("p", "s1");
    let outs = h.take();
    assert!(
        matches!(
            &notices(&outs)[..],
            [CoordinatorNotice::AllocationFailed { .. }]
        ),
        "{outs:?}"
    );
    assert_eq!(h.home("s1"), None);
    h.ask("a", "s1");
    assert_eq!(h.home("s1").as_deref(), Some("a"));
}

// ---- rebalance and hand-off ---------------------------------------------------------------

#[test]
fn rebalance_hands_off_after_every_ack_then_reallocates_eagerly() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(4);
    h.from("p", Command::RegisterProxy { node: node(3) });
    h.take();
    h.advance(9_999);
    assert!(h.c.handoffs_in_progress().is_empty());
    h.advance(1);
    let sent = h.sent();
    let begins: Vec<&str> = sent
        .iter()
        .filter(|(_, d)| matches!(d, Directive::BeginHandOff { .. }))
        .map(|(to, _)| to.as_str())
        .collect();
    assert_eq!(
        begins,
        vec!["a", "b", "p"],
        "every region and proxy, map order"
    );
    let stamp = begin_stamp(&sent, "0");
    assert!(stamp > Stamp::new(7, 1));
    // While in hand-off, requests are deferred.
    h.ask("b", "0");
    assert!(h.sent().is_empty());
    h.ack_all("0", stamp, &["a", "b"]);
    assert!(h.sent().is_empty(), "the proxy has not acked");
    h.ack_all("0", stamp, &["p"]);
    assert_eq!(
        h.sent(),
        vec![(
            "a".to_string(),
            Directive::HandOff {
                shard: "0".into(),
                stamp
            }
        )]
    );
    h.from(
        "a",
        Command::ShardStopped {
            shard: "0".into(),
            stamp,
        },
    );
    let sent = h.sent();
    assert_eq!(h.home("0").as_deref(), Some("b"));
    let host = sent
        .iter()
        .find_map(|(to, d)| match d {
            Directive::HostShard { stamp, .. } if to == "b" => Some(*stamp),
            _ => None,
        })
        .unwrap();
    assert!(host > stamp, "the new allocation outranks the hand-off");
    assert!(sent.contains(&(
        "b".to_string(),
        Directive::ShardHome(ShardHome {
            shard: "0".into(),
            region: "b".into(),
            stamp: host
        })
    )));
    let ev = h.events();
    assert!(matches!(
        &ev[ev.len() - 2..],
        [Event::ShardHomeDeallocated { .. }, Event::ShardHomeAllocated { region, .. }] if region == "b"
    ));
    assert!(h.c.handoffs_in_progress().is_empty());
}

#[test]
fn late_duplicated_and_foreign_hand_off_answers_are_ignored() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(4);
    h.advance(10_000);
    let stamp = begin_stamp(&h.sent(), "0");
    let old = Stamp {
        version: ShardVersion(stamp.version.0 - 1),
        ..stamp
    };
    h.from(
        "a",
        Command::ShardStopped {
            shard: "0".into(),
            stamp: old,
        },
    );
    h.from(
        "b",
        Command::ShardStopped {
            shard: "0".into(),
            stamp,
        },
    );
    h.ack_all("0", old, &["a", "b"]);
    assert!(h.sent().is_empty());
    assert_eq!(h.c.handoffs_in_progress(), vec!["0".to_string()]);
    h.ack_all("0", stamp, &["a", "b", "b"]);
    h.from(
        "a",
        Command::ShardStopped {
            shard: "0".into(),
            stamp,
        },
    );
    assert_eq!(h.home("0").as_deref(), Some("b"));
    let n = h.events().len();
    // A duplicate ShardStopped after completion must not deallocate the new home (akka.net#8146).
    h.from(
        "a",
        Command::ShardStopped {
            shard: "0".into(),
            stamp,
        },
    );
    h.from(
        "b",
        Command::ShardStopped {
            shard: "0".into(),
            stamp,
        },
    );
    assert_eq!(h.events().len(), n);
    assert_eq!(h.home("0").as_deref(), Some("b"));
}

#[test]
fn lost_hand_off_messages_are_resent_within_the_deadline() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(4);
    h.advance(10_000);
    let stamp = begin_stamp(&h.sent(), "0");
    h.ack_all("0", stamp, &["a"]);
    h.take();
    h.advance(2_000);
    assert_eq!(
        h.sent(),
        vec![(
            "b".to_string(),
            Directive::BeginHandOff {
                shard: "0".into(),
                stamp
            }
        )]
    );
    h.ack_all("0", stamp, &["b"]);
    h.take(); // the HandOff is "lost"
    h.advance(2_000);
    assert_eq!(
        h.sent(),
        vec![(
            "a".to_string(),
            Directive::HandOff {
                shard: "0".into(),
                stamp
            }
        )]
    );
}

#[test]
fn a_terminated_region_counts_as_acked_and_a_dead_owner_completes_the_hand_off() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(4);
    h.register("c", 3);
    h.advance(10_000);
    let stamp = begin_stamp(&h.sent(), "0");
    h.ack_all("0", stamp, &["a", "b"]);
    h.input(CoordinatorInput::RegionTerminated { region: "c".into() });
    assert!(h.sent().contains(&(
        "a".to_string(),
        Directive::HandOff {
            shard: "0".into(),
            stamp
        }
    )));
    // The owner crashes before ShardStopped: all its shards move, none back to it.
    h.input(CoordinatorInput::MemberRemoved { address: node(1) });
    assert!(h.c.handoffs_in_progress().is_empty());
    for s in 0..4 {
        assert_eq!(
            h.home(&s.to_string()).as_deref(),
            Some("b"),
            "eager re-allocation"
        );
    }
    assert!(!h.c.state().has_region("a"));
}

#[test]
fn hand_off_timeout_keeps_the_owner_by_default() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(4);
    h.from("a", Command::GracefulShutdownReq);
    let stamp = begin_stamp(&h.sent(), "0");
    assert!(!h.c.allocation().region("a").unwrap().is_eligible());
    h.ask("b", "0");
    h.advance(59_999);
    h.take();
    assert_eq!(h.c.handoffs_in_progress().len(), 4);
    h.advance(1);
    let outs = h.take();
    assert_eq!(
        notices(&outs)
            .iter()
            .filter(|n| matches!(
                n,
                CoordinatorNotice::HandOffTimedOut {
                    policy: HandOffTimeoutPolicy::KeepOwner,
                    ..
                }
            ))
            .count(),
        4
    );
    assert_eq!(h.home("0").as_deref(), Some("a"));
    assert!(
        h.c.allocation().region("a").unwrap().is_eligible(),
        "graceful flag cleared"
    );
    let sends: Vec<(String, Directive)> = outs
        .into_iter()
        .filter_map(|o| match o {
            CoordinatorOutput::Send(Envelope {
                to: Endpoint::Region(r),
                message: Message::Directive(d),
                ..
            }) => Some((r.to_string(), d)),
            _ => None,
        })
        .collect();
    // The owner is told to host again, and the waiting region gets the old home, both with
    // stamps that outrank the BeginHandOff they saw.
    let host = sends
        .iter()
        .find_map(|(to, d)| match d {
            Directive::HostShard { shard, stamp, .. } if to == "a" && shard == "0" => Some(*stamp),
            _ => None,
        })
        .unwrap();
    assert!(host > stamp);
    assert!(sends.contains(&(
        "b".to_string(),
        Directive::ShardHome(ShardHome {
            shard: "0".into(),
            region: "a".into(),
            stamp: host
        })
    )));
}

#[test]
fn hand_off_timeout_can_force_a_fenced_reallocation() {
    let mut h = H::active(CoordinatorConfig {
        handoff_timeout_policy: HandOffTimeoutPolicy::ForceReallocate,
        ..Default::default()
    });
    h.two_regions_with_shards_on_a(4);
    h.register("c", 3);
    h.from("a", Command::GracefulShutdownReq);
    let begun = h.sent();
    let stamp = begin_stamp(&begun, "0");
    // The owner has quiesced (it buffers), but c never answers, so HandOff is never sent.
    for s in 0..4 {
        let s = s.to_string();
        h.ack_all(&s, begin_stamp(&begun, &s), &["a", "b"]);
    }
    h.advance(60_000);
    let sent = h.sent();
    let new_home = h.home("0").unwrap();
    assert_ne!(new_home, "a");
    let host = sent
        .iter()
        .find_map(|(to, d)| match d {
            Directive::HostShard { shard, stamp, .. } if *to == new_home && shard == "0" => {
                Some(*stamp)
            }
            _ => None,
        })
        .unwrap();
    assert!(host > stamp);
    assert!(sent.contains(&(
        "a".to_string(),
        Directive::HandOff {
            shard: "0".into(),
            stamp: host
        }
    )));
    for r in ["a", "b", "c"] {
        if r != new_home {
            assert!(
                sent.contains(&(
                    r.to_string(),
                    Directive::ShardHome(ShardHome {
                        shard: "0".into(),
                        region: new_home.as_str().into(),
                        stamp: host
                    })
                )),
                "{r} hears the new home"
            );
        }
    }
    // The bookkeeping bug of actor-ts#1429 would list the shard under both regions.
    assert!(!h.c.state().shards_of("a").any(|s| &**s == "0"));
    assert_eq!(h.c.allocation().region("a").unwrap().shard_count(), 0);
}

#[test]
fn a_forced_move_never_overrules_an_owner_that_may_still_be_running() {
    // Regression (found by the simulator): the owner never heard BeginHandOff, so it still
    // delivered to its entities; forcing the move made a second region run the shard until
    // the announcement reached the owner.
    let mut h = H::active(CoordinatorConfig {
        handoff_timeout_policy: HandOffTimeoutPolicy::ForceReallocate,
        ..Default::default()
    });
    h.two_regions_with_shards_on_a(2);
    h.from("a", Command::GracefulShutdownReq);
    let stamp = begin_stamp(&h.sent(), "0");
    h.ack_all("0", stamp, &["b"]);
    h.ask("b", "0");
    h.advance(60_000);
    let outs = h.take();
    assert_eq!(
        h.home("0").as_deref(),
        Some("a"),
        "kept by the silent owner"
    );
    assert!(
        !h.events().iter().any(|e| matches!(
            e,
            Event::ShardHomeDeallocated { shard, .. } if shard == "0"
        )),
        "no forced deallocation"
    );
    let sends: Vec<(String, Directive)> = outs
        .into_iter()
        .filter_map(|o| match o {
            CoordinatorOutput::Send(Envelope {
                to: Endpoint::Region(r),
                message: Message::Directive(d),
                ..
            }) => Some((r.to_string(), d)),
            _ => None,
        })
        .collect();
    assert!(
        sends.iter().any(|(to, d)| to == "a"
            && matches!(d, Directive::HostShard { shard, stamp: s, .. } if shard == "0" && *s > stamp)),
        "the owner is re-established with a newer stamp: {sends:?}"
    );
    assert!(
        !sends
            .iter()
            .any(|(to, d)| to == "a" && matches!(d, Directive::HandOff { .. })),
        "nothing tells the owner to stop"
    );
    assert!(
        sends
            .iter()
            .any(|(to, d)| to == "b"
                && matches!(d, Directive::ShardHome(home) if &*home.region == "a")),
        "the waiting region is answered with the kept owner"
    );
}

#[test]
fn a_graceful_shutdown_moves_every_shard_then_the_region_is_removed() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(3);
    h.from("a", Command::GracefulShutdownReq);
    let sent = h.sent();
    for s in ["0", "1", "2"] {
        let st = begin_stamp(&sent, s);
        h.ack_all(s, st, &["a", "b"]);
        h.from(
            "a",
            Command::ShardStopped {
                shard: s.into(),
                stamp: st,
            },
        );
    }
    for s in ["0", "1", "2"] {
        assert_eq!(h.home(s).as_deref(), Some("b"));
    }
    h.from("a", Command::GracefulShutdownReq);
    assert!(h.c.handoffs_in_progress().is_empty(), "repeats are ignored");
    h.from("a", Command::RegionStopped);
    assert!(
        matches!(h.events().last(), Some(Event::ShardRegionTerminated { region }) if region == "a")
    );
}

#[test]
fn preparing_for_shutdown_stops_rebalancing() {
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(4);
    h.input(CoordinatorInput::PreparingForShutdown);
    h.advance(100_000);
    assert!(h.c.handoffs_in_progress().is_empty());
    let mut h = H::active(CoordinatorConfig {
        rebalance_enabled: false,
        ..Default::default()
    });
    h.two_regions_with_shards_on_a(4);
    h.advance(100_000);
    assert!(h.c.handoffs_in_progress().is_empty());
}

// ---- termination --------------------------------------------------------------------------

#[test]
fn a_removal_margin_fences_a_failed_region_before_reallocating() {
    let mut h = H::active(CoordinatorConfig {
        removal_margin_ms: 20_000,
        ..Default::default()
    });
    h.two_regions_with_shards_on_a(2);
    h.input(CoordinatorInput::MemberRemoved { address: node(1) });
    assert_eq!(h.home("0").as_deref(), Some("a"));
    h.ask("b", "0");
    h.ask("b", "new");
    let sent = h.sent();
    assert!(
        !sent
            .iter()
            .any(|(_, d)| matches!(d, Directive::ShardHome(x) if x.shard == "0")),
        "no home on a terminating region"
    );
    assert_eq!(
        h.home("new").as_deref(),
        Some("b"),
        "never allocated to a terminating region"
    );
    h.advance(19_999);
    assert_eq!(h.home("0").as_deref(), Some("a"));
    h.advance(1);
    assert_eq!(h.home("0").as_deref(), Some("b"));
    assert!(!h.c.state().has_region("a"));
}

#[test]
fn a_clean_stop_skips_the_removal_margin() {
    let mut h = H::active(CoordinatorConfig {
        removal_margin_ms: 20_000,
        ..Default::default()
    });
    h.two_regions_with_shards_on_a(2);
    h.input(CoordinatorInput::RegionTerminated { region: "a".into() });
    assert_eq!(h.home("0").as_deref(), Some("b"));
}

// ---- lease loss, persistence and restore --------------------------------------------------

#[test]
fn lease_loss_mid_hand_off_drops_it_and_a_successor_reestablishes_the_owner() {
    let store = InMemoryStore::new();
    let mut h = H::active_with(CoordinatorConfig::default(), store.clone(), 7);
    h.two_regions_with_shards_on_a(4);
    h.advance(10_000);
    let stamp = begin_stamp(&h.sent(), "0");
    h.ack_all("0", stamp, &["a", "b"]);
    h.take();
    h.input(CoordinatorInput::LeaseLost {
        token: FencingToken(7),
    });
    assert!(matches!(
        &notices(&h.take())[..],
        [CoordinatorNotice::SteppedDown { .. }]
    ));
    h.from(
        "a",
        Command::ShardStopped {
            shard: "0".into(),
            stamp,
        },
    );
    assert!(h.take().is_empty(), "not coordinating");
    assert_eq!(h.events().len(), 6, "nothing written after the loss");

    let mut next = H::active_with(CoordinatorConfig::default(), store, 8);
    assert_eq!(next.home("0").as_deref(), Some("a"));
    assert_eq!(next.c.allocation().region("a").unwrap().shard_count(), 4);
    assert!(next.c.handoffs_in_progress().is_empty());
    next.advance(10_000);
    let resent = next.sent();
    let host0 = resent
        .iter()
        .find_map(|(to, d)| match d {
            Directive::HostShard { shard, stamp, .. } if to == "a" && shard == "0" => Some(*stamp),
            _ => None,
        })
        .expect("HostShard re-sent to the owner");
    assert!(host0 > stamp && host0.token == FencingToken(8));
    // The deposed coordinator's writes are refused by the store.
    h.c.lease = LeaseHolder::default();
    h.c.lease
        .granted(LeaseGrant {
            token: FencingToken(7),
            valid_until_ms: FAR,
        })
        .unwrap();
    h.c.phase = Phase::Active;
    h.register("z", 4);
    assert!(notices(&h.take())
        .iter()
        .any(|n| matches!(n, CoordinatorNotice::SteppedDown { .. })));
    assert!(!h
        .events()
        .iter()
        .any(|e| matches!(e, Event::ShardRegionRegistered { region, .. } if region == "z")));
}

#[test]
fn restore_terminates_regions_on_departed_nodes_and_rehosts_the_rest() {
    let store = InMemoryStore::new();
    let mut h = H::active_with(CoordinatorConfig::default(), store.clone(), 7);
    h.two_regions_with_shards_on_a(2);
    h.ask("b", "x");
    h.from("p", Command::RegisterProxy { node: node(3) });
    let mut next = H::new(CoordinatorConfig::default(), store);
    next.input(CoordinatorInput::MemberRemoved { address: node(1) });
    next.input(CoordinatorInput::MemberRemoved { address: node(3) });
    next.c.start(next.now);
    next.grant(8, FAR);
    let outs = next.take();
    assert!(!next.c.state().has_region("a"));
    assert!(!next.c.state().has_proxy("p"));
    let hosts: Vec<(String, String)> = outs
        .iter()
        .filter_map(|o| match o {
            CoordinatorOutput::Send(Envelope {
                to: Endpoint::Region(r),
                message: Message::Directive(Directive::HostShard { shard, .. }),
                ..
            }) => Some((r.to_string(), shard.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(hosts, vec![("b".to_string(), "x".to_string())]);
    // a's shards are unallocated now and get a home on demand once b registers.
    next.register("b", 2);
    next.ask("b", "0");
    assert_eq!(next.home("0").as_deref(), Some("b"));
}

/// Runs the same inputs through two coordinators and returns the decisions each made.
fn decisions(h: &mut H, script: &[(&str, &str)]) -> Vec<(String, Option<String>)> {
    script
        .iter()
        .map(|(r, s)| {
            h.ask(r, s);
            h.take();
            (s.to_string(), h.home(s))
        })
        .collect()
}

#[test]
fn a_restored_coordinator_makes_the_same_decisions() {
    for snapshot_after in [0, 3] {
        let config = CoordinatorConfig {
            snapshot_after,
            ..Default::default()
        };
        let mut old = H::active_with(config.clone(), InMemoryStore::new(), 7);
        old.register("a", 1);
        old.register("b", 2);
        old.register("c", 3);
        for (i, s) in ["k", "e", "y", "s", "q", "w", "r"].iter().enumerate() {
            old.ask(["a", "b", "c"][i % 3], s);
        }
        old.input(CoordinatorInput::RegionTerminated { region: "b".into() });
        old.register("d", 4);
        old.take();
        if snapshot_after > 0 {
            assert!(
                old.store.contents().snapshot.is_some(),
                "snapshots were written"
            );
        }
        // The successor restores from a copy, so the old one keeps a store of its own and
        // both can be asked the same questions.
        let copy = InMemoryStore::from_state(old.store.contents());
        let mut new = H::active_with(config, copy, 8);
        for (r, n) in [("a", 1), ("c", 3), ("d", 4)] {
            new.register(r, n);
            old.register(r, n);
        }
        new.take();
        old.take();
        assert_eq!(new.c.state().snapshot(), old.c.state().snapshot());
        let script = [
            ("a", "n1"),
            ("c", "n2"),
            ("d", "n3"),
            ("a", "n4"),
            ("d", "k"),
            ("c", "n5"),
            ("a", "n6"),
        ];
        assert_eq!(
            decisions(&mut old, &script),
            decisions(&mut new, &script),
            "snapshot_after={snapshot_after}"
        );
        // A new, empty region makes the strategy want to move something.
        old.register("e", 5);
        new.register("e", 5);
        assert_eq!(rebalance_choice(&mut old), rebalance_choice(&mut new));
        assert!(
            !rebalance_choice(&mut new).is_empty(),
            "the comparison is not vacuous"
        );
    }
}

fn rebalance_choice(h: &mut H) -> Vec<ShardId> {
    let in_progress = InProgress::new();
    h.c.strategy
        .rebalance(h.c.state.allocation(), &in_progress, None)
        .unwrap()
        .into_iter()
        .map(|s| s.into())
        .collect()
}

#[test]
fn a_fenced_write_steps_down_and_releases_and_an_unavailable_store_reloads() {
    let store = InMemoryStore::new();
    let mut h = H::active_with(CoordinatorConfig::default(), store.clone(), 7);
    h.register("a", 1);
    h.take();
    store.clone().load(FencingToken(9)).unwrap();
    h.ask("a", "s1");
    let outs = h.take();
    assert!(
        outs.contains(&CoordinatorOutput::Lease(LeaseRequest::Release {
            token: FencingToken(7)
        })),
        "{outs:?}"
    );
    assert!(
        !outs.iter().any(|o| matches!(o, CoordinatorOutput::Send(_))),
        "nothing sent after a fenced write"
    );
    assert!(!h.c.is_active());

    let mut h = H::active(CoordinatorConfig::default());
    h.register("a", 1);
    h.take();
    h.input(CoordinatorInput::StoreFailed { fenced: false });
    let outs = h.take();
    assert!(outs.contains(&CoordinatorOutput::LoadState {
        token: FencingToken(7)
    }));
    assert!(h.c.is_active(), "reloaded and carried on");
    assert!(!h.c.is_alive("a"), "volatile state was reset");
}

#[test]
fn a_reload_under_the_same_token_never_undercuts_stamps_already_sent() {
    // Regression (found by the simulator): a hand-off start bumps the shard's version without
    // an event; after a store failure the coordinator reloads under the same token, and used
    // to re-host the shard with the stored, lower version, which the owner refuses forever.
    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(2);
    h.from("a", Command::GracefulShutdownReq);
    let begun = begin_stamp(&h.sent(), "0");
    let token = h.c.token();
    h.input(CoordinatorInput::StoreFailed { fenced: false });
    assert!(h.c.is_active(), "reloaded");
    assert_eq!(h.c.token(), token, "under the same lease grant");
    let rehost = h
        .sent()
        .into_iter()
        .find_map(|(to, d)| match d {
            Directive::HostShard { shard, stamp, .. } if to == "a" && shard == "0" => Some(stamp),
            _ => None,
        })
        .expect("standing allocations are re-announced after a reload");
    assert!(
        rehost > begun,
        "{rehost} must outrank the BeginHandOff {begun} the owner already saw"
    );
}

#[test]
fn corrupt_stored_state_is_an_error_and_steps_down() {
    let mut h = H::new(CoordinatorConfig::default(), InMemoryStore::new());
    h.c.start(h.now);
    h.c.handle(
        h.now,
        CoordinatorInput::LeaseGranted(LeaseGrant {
            token: FencingToken(1),
            valid_until_ms: FAR,
        }),
    )
    .unwrap();
    let bad = StoredState {
        snapshot: None,
        events: vec![Record {
            seq: 1,
            event: Event::ShardHomeAllocated {
                shard: "s".into(),
                region: "nobody".into(),
                version: 1,
            },
        }],
    };
    let err =
        h.c.handle(h.now, CoordinatorInput::StateLoaded(Box::new(bad)))
            .unwrap_err();
    assert!(err.message().contains("event 1"), "{err}");
    assert!(!h.c.is_active());
}

// ---- remember entities --------------------------------------------------------------------

#[test]
fn remembered_entities_travel_with_the_shard() {
    let mut h = H::active(CoordinatorConfig {
        remember_entities: true,
        ..Default::default()
    });
    h.register("a", 1);
    h.register("b", 2);
    h.ask("a", "s1");
    assert_eq!(h.home("s1").as_deref(), Some("a"));
    for e in ["e2", "e1", "e2"] {
        h.from(
            "a",
            Command::EntityStarted {
                shard: "s1".into(),
                entity: e.into(),
            },
        );
    }
    h.from(
        "b",
        Command::EntityStarted {
            shard: "s1".into(),
            entity: "e9".into(),
        },
    );
    h.from(
        "a",
        Command::EntityStarted {
            shard: "s1".into(),
            entity: "e3".into(),
        },
    );
    h.from(
        "a",
        Command::EntityPassivated {
            shard: "s1".into(),
            entity: "e3".into(),
        },
    );
    assert_eq!(
        h.c.state().remembered("s1"),
        vec!["e1".to_string(), "e2".into()]
    );
    h.take();
    // Crash: the shard is re-allocated eagerly, with its entities.
    h.input(CoordinatorInput::RegionTerminated { region: "a".into() });
    let sent = h.sent();
    assert!(
        sent.contains(&(
            "b".to_string(),
            Directive::HostShard {
                shard: "s1".into(),
                stamp: h.stamp_of("s1"),
                entities: vec!["e1".into(), "e2".into()]
            }
        )),
        "{sent:?}"
    );
}

#[test]
fn snapshots_are_emitted_every_n_events() {
    let mut h = H::active(CoordinatorConfig {
        snapshot_after: 2,
        ..Default::default()
    });
    h.register("a", 1);
    h.ask("a", "s1");
    h.ask("a", "s2");
    let snap = h.store.contents().snapshot.unwrap();
    assert_eq!(snap.seq, 2);
    assert_eq!(h.store.contents().events.len(), 1);
}

// ---- decision events and metrics ------------------------------------------------------------

fn metric(c: &Coordinator, name: &str, region: Option<&str>) -> u64 {
    c.metrics()
        .into_iter()
        .find(|m| {
            m.name == name && m.attributes.get("shardline.region").map(String::as_str) == region
        })
        .unwrap_or_else(|| panic!("no metric {name} {region:?}"))
        .value
}

#[test]
fn decision_events_explain_each_allocation_and_rebalance_round_only_when_asked() {
    let quiet = {
        let mut h = H::active(CoordinatorConfig::default());
        h.two_regions_with_shards_on_a(4);
        h.advance(10_000);
        notices(&h.take())
    };
    assert!(
        !quiet.iter().any(|n| matches!(
            n,
            CoordinatorNotice::Allocated { .. } | CoordinatorNotice::RebalanceRound { .. }
        )),
        "{quiet:?}"
    );

    let mut h = H::active(CoordinatorConfig {
        decision_events: true,
        ..CoordinatorConfig::default()
    });
    h.register("a", 1);
    h.ask("a", "0");
    let allocated: Vec<CoordinatorNotice> = notices(&h.take())
        .into_iter()
        .filter(|n| matches!(n, CoordinatorNotice::Allocated { .. }))
        .collect();
    match allocated.as_slice() {
        [CoordinatorNotice::Allocated {
            shard,
            region,
            requester,
            explanation,
        }] => {
            assert_eq!((shard.as_str(), region.as_str()), ("0", "a"));
            assert_eq!(requester.as_deref(), Some("a"));
            assert_eq!(explanation.op, "allocate");
            assert_eq!(explanation.candidates[0].region, "a", "{explanation:?}");
        }
        other => panic!("one Allocated notice expected, got {other:?}"),
    }

    let mut h = H::active(CoordinatorConfig {
        decision_events: true,
        ..CoordinatorConfig::default()
    });
    h.two_regions_with_shards_on_a(4);
    h.advance(10_000);
    let rounds: Vec<CoordinatorNotice> = notices(&h.take())
        .into_iter()
        .filter(|n| matches!(n, CoordinatorNotice::RebalanceRound { .. }))
        .collect();
    match rounds.as_slice() {
        [CoordinatorNotice::RebalanceRound {
            shards,
            explanation,
        }] => {
            assert_eq!(shards.len(), 1, "4 shards on a, 0 on b: one moves");
            assert_eq!(explanation.op, "rebalance");
            assert!(!explanation.summary.is_empty());
        }
        other => panic!("one RebalanceRound notice expected, got {other:?}"),
    }
    // The notice round-trips through its JSON form (hosts and traces carry it as JSON).
    let json = serde_json::to_value(&rounds[0]).unwrap();
    assert_eq!(
        serde_json::from_value::<CoordinatorNotice>(json).unwrap(),
        rounds[0]
    );
}

#[test]
fn metrics_count_what_the_coordinator_did_and_show_shards_per_region() {
    let mut h = H::active(CoordinatorConfig::default());
    assert_eq!(metric(&h.c, "shardline.coordinator.active", None), 1);
    assert_eq!(metric(&h.c, "shardline.coordinator.fencing_token", None), 7);
    h.two_regions_with_shards_on_a(4);
    assert_eq!(metric(&h.c, "shardline.coordinator.allocations", None), 4);
    assert_eq!(metric(&h.c, "shardline.coordinator.shards", Some("a")), 4);
    assert_eq!(metric(&h.c, "shardline.coordinator.shards", Some("b")), 0);
    assert_eq!(metric(&h.c, "shardline.coordinator.regions", None), 2);
    h.advance(10_000);
    assert_eq!(
        metric(&h.c, "shardline.coordinator.rebalance.rounds", None),
        1
    );
    assert_eq!(
        metric(&h.c, "shardline.coordinator.rebalance.moves", None),
        1
    );
    assert_eq!(
        metric(&h.c, "shardline.coordinator.handoffs.started", None),
        1
    );
    assert_eq!(
        metric(&h.c, "shardline.coordinator.handoffs.in_progress", None),
        1
    );
    assert_eq!(
        metric(&h.c, "shardline.coordinator.handoffs.completed", None),
        0
    );
    let kinds: Vec<MetricKind> = h.c.metrics().iter().map(|m| m.kind).collect();
    assert!(kinds.contains(&MetricKind::Counter) && kinds.contains(&MetricKind::Gauge));
}

/// The waits operators see: a shard asked for before enough regions registered gets its home
/// 300 ms later; a shard allocated at once waited 0 ms; a hand-off ends 50 ms after it began,
/// and the requester that waited on it is answered then.
#[test]
fn latency_metrics_measure_waits_for_a_home_and_hand_off_durations_in_host_time() {
    let latency = |h: &H, name: &str| {
        ["sum", "count", "max"].map(|k| metric(&h.c, &format!("{name}.{k}"), None))
    };
    let alloc = "shardline.coordinator.allocation.latency_ms";
    let handoff = "shardline.coordinator.handoffs.duration_ms";
    let mut h = H::active(CoordinatorConfig {
        min_members: 2,
        ..CoordinatorConfig::default()
    });
    h.register("a", 1);
    h.ask("a", "0");
    h.advance(100);
    h.ask("a", "0");
    assert_eq!(h.home("0"), None, "one region of the two needed");
    h.advance(200);
    h.register("b", 2);
    h.ask("a", "0");
    assert_eq!(h.home("0").as_deref(), Some("a"));
    assert_eq!(
        latency(&h, alloc),
        [300, 1, 300],
        "timed from the first ask"
    );
    h.ask("a", "0");
    h.ask("b", "1");
    assert_eq!(
        latency(&h, alloc),
        [300, 2, 300],
        "an answer from the map is no wait"
    );

    let mut h = H::active(CoordinatorConfig::default());
    h.two_regions_with_shards_on_a(4);
    assert_eq!(latency(&h, alloc), [0, 4, 0]);
    h.advance(10_000);
    let [shard] = h.c.handoffs_in_progress().try_into().expect("one hand-off");
    let stamp = begin_stamp(&h.sent(), &shard);
    assert_eq!(latency(&h, handoff), [0, 0, 0]);
    h.advance(20);
    h.ask("b", &shard);
    h.ack_all(&shard, stamp, &["a", "b"]);
    h.advance(30);
    h.from(
        "a",
        Command::ShardStopped {
            shard: shard.clone(),
            stamp,
        },
    );
    assert_eq!(latency(&h, handoff), [50, 1, 50]);
    assert_eq!(h.home(&shard).as_deref(), Some("b"));
    assert_eq!(
        latency(&h, alloc),
        [30, 5, 30],
        "b asked during the hand-off and waited 30 ms for the new home"
    );
}

// ---- loads, offers and drains (least-load) -----------------------------------------------

fn least_load(limit: i32) -> Box<dyn AllocationStrategy> {
    strategy(serde_json::json!({"kind": "least-load", "absoluteLimit": limit}))
}

/// Active under `token`, least-load with at most `limit` moves a round.
fn least_load_active(store: InMemoryStore, token: u64, limit: i32) -> H {
    let mut h = H::new_with(CoordinatorConfig::default(), store, least_load(limit));
    h.c.start(h.now);
    h.grant(token, FAR);
    assert!(h.c.is_active(), "{:?}", h.outs);
    h.outs.clear();
    h
}

fn uniform(loads: &[(&str, f64)]) -> BTreeMap<ShardId, Amount> {
    loads
        .iter()
        .map(|(s, v)| ((*s).into(), Amount::Uniform(*v)))
        .collect()
}

impl H {
    /// a (node 1) hosts shards 0-3 and b (node 2) shards 4-7, every HostShard acked.
    fn four_and_four(&mut self) {
        for s in 0..8 {
            let (r, shard) = (if s < 4 { "a" } else { "b" }, ShardId::from(s.to_string()));
            if s % 4 == 0 {
                // b registers once a holds four, so counting puts the next four on b.
                self.register(r, if s < 4 { 1 } else { 2 });
            }
            self.ask(r, &shard);
            assert_eq!(self.home(&shard).as_deref(), Some(r), "{shard}");
            let stamp = self.stamp_of(&shard);
            self.from(r, Command::ShardStarted { shard, stamp });
        }
        self.take();
    }

    fn report(&mut self, region: &str, loads: BTreeMap<ShardId, Amount>) {
        self.from(region, Command::ReportLoads { loads });
    }

    /// The shards the next rebalance round hands off, in decision order.
    fn rebalance_round(&mut self) -> Vec<ShardId> {
        self.take();
        self.advance(10_000);
        self.take()
            .into_iter()
            .filter_map(|o| match o {
                CoordinatorOutput::Notice(CoordinatorNotice::HandOffStarted {
                    shard,
                    rebalance: true,
                    ..
                }) => Some(shard),
                _ => None,
            })
            .collect()
    }

    fn refused(&mut self) -> Vec<String> {
        self.take()
            .into_iter()
            .filter_map(|o| match o {
                CoordinatorOutput::Notice(CoordinatorNotice::CommandRefused { reason, .. }) => {
                    Some(reason)
                }
                _ => None,
            })
            .collect()
    }
}

#[test]
fn without_reports_least_load_places_as_least_shard() {
    let mut ll = least_load_active(InMemoryStore::new(), 7, 20);
    let mut ls = H::active(CoordinatorConfig::default());
    for h in [&mut ll, &mut ls] {
        h.register("a", 1);
        h.register("b", 2);
        h.register("c", 3);
        for s in 0..30 {
            let asker = ["a", "b", "c"][s % 3];
            h.ask(asker, &s.to_string());
        }
    }
    for s in 0..30 {
        assert_eq!(ll.home(&s.to_string()), ls.home(&s.to_string()), "{s}");
    }
    assert!(ll.c.state().loads().is_empty());
}

#[test]
fn a_load_report_changes_where_a_new_shard_goes() {
    for reported in [false, true] {
        let mut h = least_load_active(InMemoryStore::new(), 7, 20);
        h.four_and_four();
        if reported {
            h.report(
                "a",
                uniform(&[("0", 5.0), ("1", 5.0), ("2", 5.0), ("3", 5.0)]),
            );
            h.report(
                "b",
                uniform(&[("4", 1.0), ("5", 1.0), ("6", 1.0), ("7", 1.0)]),
            );
        }
        h.ask("a", "8");
        // Equal counts: map order picks a; a's reported load sends the shard to b.
        let expected = if reported { "b" } else { "a" };
        assert_eq!(
            h.home("8").as_deref(),
            Some(expected),
            "reported: {reported}"
        );
    }
}

#[test]
fn loads_rise_at_once_decay_slowly_and_are_stored() {
    let mut h = least_load_active(InMemoryStore::new(), 7, 20);
    h.four_and_four();
    h.report("a", uniform(&[("0", 10.0)]));
    h.report("a", uniform(&[("0", 0.0)]));
    assert_eq!(h.c.state().loads()["0"], Amount::Uniform(8.0));
    h.report("a", uniform(&[("0", 20.0)]));
    assert_eq!(h.c.state().loads()["0"], Amount::Uniform(20.0));
    // The same sample twice changes nothing, so nothing is written.
    let before = h.events().len();
    h.report("a", uniform(&[("0", 20.0)]));
    assert_eq!(h.events().len(), before);
    let smoothed: Vec<Event> = h
        .events()
        .into_iter()
        .filter(|e| matches!(e, Event::ShardLoadsSmoothed { .. }))
        .collect();
    assert_eq!(
        smoothed.last(),
        Some(&Event::ShardLoadsSmoothed {
            loads: uniform(&[("0", 20.0)])
        })
    );
    // Shards nobody reported weigh the mean of those reported (the prior).
    assert_eq!(h.c.allocation().shard_load("5").get(0), 20.0);
    // A region's report about a shard it does not host is not taken.
    h.report("b", uniform(&[("0", 99.0), ("4", 2.0)]));
    assert_eq!(h.c.state().loads()["0"], Amount::Uniform(20.0));
    assert_eq!(h.c.state().loads()["4"], Amount::Uniform(2.0));
    assert_eq!(h.c.allocation().shard_load("5").get(0), 11.0);
}

#[test]
fn malformed_reports_are_refused_whole() {
    let mut h = least_load_active(InMemoryStore::new(), 7, 20);
    h.register("a", 1);
    let offer = RegionOffer {
        capacity: Some(Amount::PerDimension(
            [("cpu".to_string(), 4.0), ("mem".to_string(), 8.0)].into(),
        )),
        ..RegionOffer::default()
    };
    h.from(
        "a",
        Command::UpdateOffer {
            offer: Box::new(offer),
        },
    );
    h.ask("a", "0");
    h.ask("a", "1");
    h.take();
    let events = h.events().len();
    let mut bad = BTreeMap::new();
    bad.insert(
        "0".into(),
        Amount::PerDimension([("cpu".to_string(), 1.0)].into()),
    );
    bad.insert(
        "1".into(),
        Amount::PerDimension([("cpux".to_string(), 1.0)].into()),
    );
    h.report("a", bad.clone());
    assert_eq!(
        h.refused(),
        vec![
            "loads.1: dimension \"cpux\" is not one a region's capacity names (cpu, mem)"
                .to_string()
        ]
    );
    bad.insert("1".into(), Amount::Uniform(-1.0));
    h.report("a", bad);
    let reasons = h.refused();
    assert_eq!(reasons.len(), 1);
    assert!(reasons[0].contains("loads.1"), "{reasons:?}");
    assert_eq!(
        h.events().len(),
        events,
        "nothing of a refused report is taken"
    );
    assert!(h.c.state().loads().is_empty());
}

#[test]
fn offers_come_with_registration_and_can_change() {
    let mut h = least_load_active(InMemoryStore::new(), 7, 20);
    let offer = RegionOffer {
        capacity: Some(Amount::Uniform(3.0)),
        tags: vec!["ssd".into()],
        max_shards: Some(5),
    };
    h.from(
        "a",
        Command::Register {
            node: node(1),
            offer: Box::new(offer.clone()),
        },
    );
    assert_eq!(
        h.events(),
        vec![
            Event::ShardRegionRegistered {
                region: "a".into(),
                node: node(1)
            },
            Event::ShardRegionOfferChanged {
                region: "a".into(),
                offer: offer.clone()
            },
        ]
    );
    let p = h.c.allocation().region("a").unwrap().profile();
    assert_eq!((p.capacity.get(0), p.max_shards), (3.0, Some(5)));
    assert_eq!(p.tags.iter().map(|t| &**t).collect::<Vec<_>>(), ["ssd"]);
    // The same offer again writes nothing; a new one replaces it whole.
    h.from(
        "a",
        Command::Register {
            node: node(1),
            offer: Box::new(offer),
        },
    );
    assert_eq!(h.events().len(), 2);
    h.from(
        "a",
        Command::UpdateOffer {
            offer: Box::default(),
        },
    );
    assert!(h.c.allocation().region("a").unwrap().profile().is_default());
    // A bad offer is refused with the registration.
    h.from(
        "b",
        Command::Register {
            node: node(2),
            offer: Box::new(RegionOffer {
                capacity: Some(Amount::Uniform(0.0)),
                ..RegionOffer::default()
            }),
        },
    );
    assert!(!h.c.state().has_region("b"));
    let refusals: Vec<String> = h
        .take()
        .into_iter()
        .filter_map(|o| match o {
            CoordinatorOutput::Notice(CoordinatorNotice::RegisterRefused { reason, .. }) => {
                Some(reason)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        refusals,
        ["offer: capacity: expected a finite number > 0, got 0"]
    );
}

#[test]
fn a_successor_makes_the_same_rebalance_decision_after_failover() {
    let store = InMemoryStore::new();
    let mut old = least_load_active(store.clone(), 7, 2);
    old.four_and_four();
    old.report(
        "a",
        uniform(&[("0", 9.0), ("1", 6.0), ("2", 3.0), ("3", 1.0)]),
    );
    old.report("b", uniform(&[("4", 1.0), ("5", 1.0)]));
    old.report(
        "a",
        uniform(&[("0", 1.0), ("1", 6.0), ("2", 3.0), ("3", 1.0)]),
    );
    // What the store holds now is what a successor starts from.
    let copy = InMemoryStore::from_state(store.contents());
    let decided = old.rebalance_round();
    assert!(!decided.is_empty(), "a is far above b: something moves");
    assert!(
        decided
            .iter()
            .all(|s| old.c.state().home_of(s) == Some("a")),
        "{decided:?}"
    );

    let mut new = least_load_active(copy, 8, 2);
    assert_eq!(new.c.state().loads(), old.c.state().loads());
    new.register("a", 1);
    new.register("b", 2);
    assert_eq!(new.rebalance_round(), decided);

    // Counted by shards the two regions are even: without the stored loads the successor
    // would not move anything, so the decision above came from them.
    let mut blind = H::new_with(
        CoordinatorConfig::default(),
        InMemoryStore::new(),
        least_load(2),
    );
    blind.c.start(blind.now);
    blind.grant(9, FAR);
    blind.four_and_four();
    assert!(blind.rebalance_round().is_empty());
}

#[test]
fn a_drained_region_gives_its_shards_away_within_the_budget() {
    let store = InMemoryStore::new();
    let mut h = least_load_active(store.clone(), 7, 1);
    h.four_and_four();
    h.register("c", 3);
    h.input(CoordinatorInput::Drain { region: "a".into() });
    assert!(h.c.state().is_draining("a"));
    assert!(h.c.allocation().region("a").unwrap().profile().draining);
    assert_eq!(
        h.events().last(),
        Some(&Event::ShardRegionDrainingChanged {
            region: "a".into(),
            draining: true
        })
    );
    // One move a round (absoluteLimit 1), each off the draining region.
    let first = h.rebalance_round();
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(h.home(&first[0]).as_deref(), Some("a"));
    // A successor keeps draining.
    let mut next = least_load_active(InMemoryStore::from_state(store.contents()), 8, 1);
    assert!(next.c.allocation().region("a").unwrap().profile().draining);
    // Undrain: a takes shards again, and draining it twice or undraining it twice is quiet.
    h.input(CoordinatorInput::Undrain { region: "a".into() });
    h.input(CoordinatorInput::Undrain { region: "a".into() });
    assert!(!h.c.state().is_draining("a"));
    let e =
        h.c.handle(
            h.now,
            CoordinatorInput::Drain {
                region: "zz".into(),
            },
        )
        .unwrap_err();
    assert_eq!(e.message(), "drain: region \"zz\" is not registered");
    let e = next
        .c
        .handle(next.now, CoordinatorInput::Stop)
        .and_then(|()| {
            next.c
                .handle(next.now, CoordinatorInput::Drain { region: "a".into() })
        })
        .unwrap_err();
    assert!(e.message().contains("not active"), "{}", e.message());
}

#[test]
fn draining_needs_a_strategy_that_drains() {
    let mut h = H::active(CoordinatorConfig::default());
    h.register("a", 1);
    let e =
        h.c.handle(h.now, CoordinatorInput::Drain { region: "a".into() })
            .unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::InvalidState);
    assert!(
        e.message()
            .starts_with("drain: strategy least-shard does not drain regions"),
        "{}",
        e.message()
    );
    assert!(!h.c.state().is_draining("a"));
}

#[test]
fn loads_offers_and_drains_survive_a_snapshot() {
    let mut h = least_load_active(InMemoryStore::new(), 7, 20);
    h.four_and_four();
    h.from(
        "b",
        Command::UpdateOffer {
            offer: Box::new(RegionOffer {
                capacity: Some(Amount::Uniform(2.0)),
                ..RegionOffer::default()
            }),
        },
    );
    h.report("a", uniform(&[("0", 4.0)]));
    h.input(CoordinatorInput::Drain { region: "a".into() });
    let snap = h.c.state().snapshot();
    let text = serde_json::to_string(&snap).unwrap();
    assert!(text.contains(r#""capacity":2.0"#), "{text}");
    assert!(text.contains(r#""draining":true"#), "{text}");
    assert!(text.contains(r#""loads":{"0":4.0}"#), "{text}");
    let cluster = h.c.allocation().cluster().clone();
    let back =
        PersistentState::from_snapshot(&serde_json::from_str(&text).unwrap(), false, cluster)
            .unwrap();
    assert_eq!(back.snapshot(), snap);
    // A state with nothing of this writes the snapshot it always wrote.
    let plain = H::active(CoordinatorConfig::default()).c.state().snapshot();
    let text = serde_json::to_string(&plain).unwrap();
    assert!(
        !text.contains("loads") && !text.contains("draining"),
        "{text}"
    );
}

/// Every step moves its input in and its outputs through the queue by value; up to 128 bytes
/// the compiler copies them with a few inline moves instead of a call to `memcpy`, which was a
/// fifth of a `GetShardHome` step when a rare variant made them 184 and 320 bytes.
#[test]
#[cfg(target_pointer_width = "64")]
fn step_values_stay_small() {
    use std::mem::size_of;
    assert!(
        size_of::<CoordinatorInput>() <= 128,
        "{}",
        size_of::<CoordinatorInput>()
    );
    assert!(
        size_of::<CoordinatorOutput>() <= 128,
        "{}",
        size_of::<CoordinatorOutput>()
    );
    assert!(size_of::<Envelope>() <= 128, "{}", size_of::<Envelope>());
}
