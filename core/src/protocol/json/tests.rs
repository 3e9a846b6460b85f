use serde_json::json;

use super::*;
use crate::coordinator::json::{InputKind, COORDINATOR_KINDS};
use crate::coordinator::{
    CoordinatorInput, CoordinatorNotice, CoordinatorOutput, LeaseGrant, LeaseRequest,
};
use crate::model::Amount;
use crate::protocol::{
    Command, Directive, Endpoint, Envelope, FencingToken, Message, RegionOffer, ShardHome, Stamp,
};
use crate::region::json::{RegionKind, REGION_KINDS};
use crate::region::RegionInput;
use crate::region::RegionOutput;

fn envelope(shard: &str) -> Envelope {
    Envelope {
        from: Endpoint::Region("r1".into()),
        to: Endpoint::Coordinator,
        message: Message::Command(Command::GetShardHome {
            shard: shard.into(),
        }),
    }
}

fn input(text: &str) -> Result<CoordinatorInput> {
    CoordinatorInput::from_json(text, "input")
}

fn error(text: &str) -> String {
    let e = input(text).expect_err(text);
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{text}");
    e.message().to_owned()
}

#[test]
fn kind_tables_follow_serde_names() {
    for (i, name) in COORDINATOR_KINDS.iter().enumerate() {
        let k: InputKind = serde_json::from_value(json!(name)).unwrap();
        assert_eq!(k as usize, i, "{name}");
    }
    for (i, name) in REGION_KINDS.iter().enumerate() {
        let k: RegionKind = serde_json::from_value(json!(name)).unwrap();
        assert_eq!(k as usize, i, "{name}");
    }
}

#[test]
fn every_coordinator_input_round_trips() {
    let mut member = Member::new(Address::parse("pekko://sys@h1:2552").unwrap());
    member.status = MemberStatus::Leaving;
    member.app_version = Version::parse("1.2.3").unwrap();
    member.data_center = "dc2".into();
    member.up_number = 4;
    let all = vec![
        CoordinatorInput::Receive(envelope("7")),
        CoordinatorInput::Member(Box::new(member)),
        CoordinatorInput::MemberRemoved {
            address: "pekko://sys@h1:2552".into(),
        },
        CoordinatorInput::Reachability {
            address: "pekko://sys@h1:2552".into(),
            reachable: false,
        },
        CoordinatorInput::RegionTerminated {
            region: "r1".into(),
        },
        CoordinatorInput::LeaseGranted(LeaseGrant {
            token: FencingToken(1),
            valid_until_ms: u64::MAX,
        }),
        CoordinatorInput::LeaseDenied,
        CoordinatorInput::LeaseRenewed {
            token: FencingToken(2),
            valid_until_ms: 9,
        },
        CoordinatorInput::LeaseRenewFailed {
            token: FencingToken(3),
        },
        CoordinatorInput::LeaseLost {
            token: FencingToken(4),
        },
        CoordinatorInput::StateLoaded(Box::default()),
        CoordinatorInput::StateLoadFailed { fenced: true },
        CoordinatorInput::StoreFailed { fenced: false },
        CoordinatorInput::PreparingForShutdown,
        CoordinatorInput::Stop,
        CoordinatorInput::Drain {
            region: "r1".into(),
        },
        CoordinatorInput::Undrain {
            region: "r1".into(),
        },
    ];
    assert_eq!(all.len(), COORDINATOR_KINDS.len());
    for i in all {
        let text = to_string(&i).unwrap();
        assert_eq!(input(&text).unwrap(), i, "{text}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            from_value::<CoordinatorInput>(&value, "input").unwrap(),
            i,
            "{text}"
        );
    }
}

#[test]
fn every_region_input_round_trips() {
    let all = vec![
        RegionInput::Receive(envelope("3")),
        RegionInput::CoordinatorChanged,
        RegionInput::RegionTerminated {
            region: "r2".into(),
        },
        RegionInput::ShardStopped { shard: "3".into() },
        RegionInput::EntityPassivated {
            shard: "3".into(),
            entity: "e".into(),
        },
        RegionInput::GracefulShutdown,
        RegionInput::ReportLoads {
            loads: [
                ("3".into(), Amount::Uniform(2.5)),
                ("4".into(), Amount::Uniform(0.0)),
            ]
            .into(),
        },
        RegionInput::UpdateOffer {
            offer: RegionOffer {
                capacity: Some(Amount::PerDimension([("cpu".into(), 4.0)].into())),
                tags: vec!["ssd".into()],
                max_shards: Some(10),
            },
        },
    ];
    assert_eq!(all.len(), REGION_KINDS.len());
    for i in all {
        let text = to_string(&i).unwrap();
        assert_eq!(RegionInput::from_json(&text, "input").unwrap(), i, "{text}");
    }
}

#[test]
fn documented_shapes() {
    // The shapes the Node typings declare, field order free.
    assert_eq!(
        to_string(&CoordinatorInput::LeaseGranted(LeaseGrant {
            token: FencingToken(1),
            valid_until_ms: 5
        }))
        .unwrap(),
        r#"{"type":"leaseGranted","token":1,"validUntilMs":5}"#
    );
    assert_eq!(
        input(r#"{"validUntilMs":5,"token":1,"type":"leaseRenewed"}"#).unwrap(),
        CoordinatorInput::LeaseRenewed {
            token: FencingToken(1),
            valid_until_ms: 5
        }
    );
    assert_eq!(
        input(
            r#"{"type":"receive","envelope":{"from":{"region":"r1"},"to":"coordinator",
                "message":{"command":{"type":"getShardHome","shard":"7"}}}}"#
        )
        .unwrap(),
        CoordinatorInput::Receive(envelope("7"))
    );
    assert_eq!(
        input(r#"{"type":"stateLoaded","state":{"snapshot":null,"events":[]}}"#).unwrap(),
        CoordinatorInput::StateLoaded(Box::default())
    );
    assert_eq!(
        from_str::<RegionInput>(r#"{"type":"gracefulShutdown"}"#, "input").unwrap(),
        RegionInput::GracefulShutdown
    );
}

#[test]
fn members_take_defaults_and_canonical_addresses() {
    let CoordinatorInput::Member(m) =
        input(r#"{"type":"member","member":{"address":"pekko://sys@h:02552"}}"#).unwrap()
    else {
        panic!("not a member input")
    };
    assert_eq!(
        *m,
        Member::new(Address::parse("pekko://sys@h:2552").unwrap())
    );
    let CoordinatorInput::Member(m) = input(
        r#"{"type":"member","member":{"address":"pekko://sys@h:1","status":"Joining",
            "appVersion":"2.0.0","dataCenter":"east","upNumber":-3}}"#,
    )
    .unwrap() else {
        panic!("not a member input")
    };
    assert_eq!(m.status, MemberStatus::Joining);
    assert_eq!(m.app_version.as_str(), "2.0.0");
    assert_eq!(m.data_center, "east");
    assert_eq!(m.up_number, -3);
    assert_eq!(
        input(r#"{"type":"memberRemoved","address":"pekko://sys@h:02552"}"#).unwrap(),
        CoordinatorInput::MemberRemoved {
            address: "pekko://sys@h:2552".into()
        }
    );
}

#[test]
fn errors_name_the_field() {
    let cases = [
        (r#"{"type":"bogus"}"#, "input.type: unknown variant `bogus`"),
        (r#"{}"#, "input: missing field `type`"),
        (
            r#"{"type":"leaseGranted","token":"x","validUntilMs":1}"#,
            "input.token: invalid type: string \"x\"",
        ),
        (
            r#"{"type":"leaseGranted","token":1}"#,
            "input: type \"leaseGranted\" needs field `validUntilMs`",
        ),
        (
            r#"{"type":"stop","token":1}"#,
            "input: field `token` does not belong to type \"stop\"",
        ),
        (r#"{"type":"stop","tokn":1}"#, "unknown field `tokn`"),
        (
            r#"{"type":"member","member":{"address":"no address"}}"#,
            "input.member.address: address \"no address\"",
        ),
        (
            r#"{"type":"member","member":{"address":"pekko://s@h:1","status":"Upp"}}"#,
            "input.member.status: member status \"Upp\"",
        ),
        (
            r#"{"type":"member","member":{"address":"pekko://s@h:1","upNumber":1e99}}"#,
            "input.member.upNumber: invalid type",
        ),
        (
            r#"{"type":"receive","envelope":{"from":{"region":"r1"},"to":"coordinator","message":{"comand":{}}}}"#,
            "input.envelope.message: unknown variant `comand`",
        ),
        (
            r#"{"type":"receive","envelope":{"from":"nobody","to":"coordinator","message":{}}}"#,
            "input.envelope.from: unknown variant `nobody`",
        ),
        ("not json", "input: expected a JSON object"),
        ("[1]", "input: expected a JSON object"),
        (
            "{\"type\":",
            "input.type: EOF while parsing a value at line 1 column 8",
        ),
        (r#"{"type":"stop"} x"#, "input: trailing characters"),
    ];
    for (text, want) in cases {
        let got = error(text);
        assert!(got.starts_with(want) || got.contains(want), "{text}: {got}");
    }
}

#[test]
fn values_fail_like_text() {
    let v = json!({"type": "leaseLost", "token": -1});
    let e = CoordinatorInput::from_json_value(&v, "input").unwrap_err();
    assert!(e.message().starts_with("input.token: invalid value"), "{e}");
    let e = CoordinatorInput::from_json_value(&json!([1]), "input").unwrap_err();
    assert_eq!(e.message(), "input: expected an object, got an array");
    let v = json!({"type": "entityPassivated", "shard": "1"});
    let e = RegionInput::from_json_value(&v, "input").unwrap_err();
    assert_eq!(
        e.message(),
        "input: type \"entityPassivated\" needs field `entity`"
    );
    let e = member_from_value(&json!({"address": 5}), "member").unwrap_err();
    assert!(
        e.message().starts_with("member.address: invalid type"),
        "{e}"
    );
}

#[test]
fn outputs_nest_their_inner_values() {
    let send = CoordinatorOutput::Send(Envelope {
        from: Endpoint::Coordinator,
        to: Endpoint::Region("r1".into()),
        message: Message::Directive(Directive::ShardHome(ShardHome {
            shard: "7".into(),
            region: "r1".into(),
            stamp: Stamp::new(1, 1),
        })),
    });
    let text = to_string(&send).unwrap();
    assert_eq!(
        text,
        r#"{"type":"send","envelope":{"from":"coordinator","to":{"region":"r1"},"message":{"directive":{"type":"shardHome","shard":"7","region":"r1","stamp":{"token":1,"version":1}}}}}"#
    );
    let outs = vec![
        send,
        CoordinatorOutput::Lease(LeaseRequest::Acquire),
        CoordinatorOutput::LoadState {
            token: FencingToken(2),
        },
        CoordinatorOutput::Notice(CoordinatorNotice::Active {
            token: FencingToken(2),
        }),
    ];
    let text = to_string(&outs).unwrap();
    assert_eq!(
        from_str::<Vec<CoordinatorOutput>>(&text, "outputs").unwrap(),
        outs
    );
    let region = vec![
        RegionOutput::Send(envelope("1")),
        RegionOutput::Deliver {
            shard: "1".into(),
            entity: "e".into(),
            payload: b"hi".to_vec(),
        },
        RegionOutput::Stopped,
    ];
    let text = to_string(&region).unwrap();
    assert!(text.contains(r#""payload":"aGk=""#), "{text}");
    assert!(
        text.starts_with(r#"[{"type":"send","envelope":{"#),
        "{text}"
    );
    assert_eq!(
        from_str::<Vec<RegionOutput>>(&text, "outputs").unwrap(),
        region
    );
}

#[test]
fn bad_loads_and_offers_are_named_where_they_are_fed() {
    let err = |text: &str| {
        let e = RegionInput::from_json(text, "input").expect_err(text);
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{text}");
        e.message().to_owned()
    };
    let e = err(r#"{"type":"reportLoads","loads":{"7":-1}}"#);
    assert!(
        e.contains("loads.7: expected a finite number >= 0, got -1"),
        "{e}"
    );
    let e = err(r#"{"type":"reportLoads","loads":{"1":2,"2":{"cpu":1}}}"#);
    assert!(
        e.contains("shard \"1\" has a plain number and shard \"2\" a dimension map"),
        "{e}"
    );
    let e = err(r#"{"type":"reportLoads","loads":{"1":{"":1}}}"#);
    assert!(e.contains("loads.1: a dimension name is empty"), "{e}");
    let e = err(r#"{"type":"reportLoads"}"#);
    assert!(e.contains("needs field `loads`"), "{e}");
    let e = err(r#"{"type":"updateOffer","offer":{"capacity":0}}"#);
    assert!(
        e.contains("offer: capacity: expected a finite number > 0"),
        "{e}"
    );
    let e = err(r#"{"type":"updateOffer","offer":{"tags":[""]}}"#);
    assert!(e.contains("a tag is empty"), "{e}");
    // NaN cannot be written in JSON; a Rust host that builds one is refused by the region.
    let loads = [("1".into(), Amount::Uniform(f64::NAN))].into();
    assert!(crate::protocol::check_loads(&loads)
        .unwrap_err()
        .message()
        .contains("loads.1: expected a finite number >= 0, got NaN"));
}

#[test]
fn a_default_offer_keeps_the_register_form() {
    let m = Message::Command(Command::register("pekko://s@h:1"));
    assert_eq!(
        to_string(&m).unwrap(),
        r#"{"command":{"type":"register","node":"pekko://s@h:1"}}"#
    );
    let m = Message::Command(Command::Register {
        node: "pekko://s@h:1".into(),
        offer: Box::new(RegionOffer {
            capacity: Some(Amount::Uniform(2.0)),
            tags: vec![],
            max_shards: Some(3),
        }),
    });
    let text = to_string(&m).unwrap();
    assert_eq!(
        text,
        r#"{"command":{"type":"register","node":"pekko://s@h:1","capacity":2.0,"maxShards":3}}"#
    );
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), m);
}
