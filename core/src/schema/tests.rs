use super::*;

use crate::coordinator::phase_name;
use crate::coordinator::Phase;

/// The string values a definition allows, in order.
fn values(def: &str) -> Vec<String> {
    let schema = wire_schema();
    let s = &schema["$defs"][def];
    let mut out = Vec::new();
    let one = |v: &Value, out: &mut Vec<String>| {
        if let Some(c) = v["const"].as_str() {
            out.push(c.to_owned());
        }
        for e in v["enum"].as_array().into_iter().flatten() {
            out.push(e.as_str().expect("a string").to_owned());
        }
    };
    one(s, &mut out);
    for v in s["oneOf"].as_array().into_iter().flatten() {
        one(v, &mut out);
    }
    out
}

#[test]
fn phases_are_named_as_the_hosts_see_them() {
    let all = [
        Phase::Idle,
        Phase::AcquiringLease,
        Phase::Loading,
        Phase::Active,
        Phase::Stopped,
    ];
    let names: Vec<&str> = all.into_iter().map(phase_name).collect();
    assert_eq!(values("CoordinatorPhase"), names);
}

#[test]
fn member_statuses_are_named_as_parsed() {
    let names: Vec<&str> = MemberStatus::ALL.into_iter().map(|s| s.as_str()).collect();
    assert_eq!(values("MemberStatus"), names);
}

#[test]
fn input_types_are_the_readers() {
    // Every `type` the schema lists is one the step reader takes (with the fields the schema
    // requires), and the reader takes no other.
    let schema = wire_schema();
    for (def, read) in [
        (
            "CoordinatorInput",
            (|t: &str| crate::coordinator::CoordinatorInput::from_json(t, "input").map(|_| ()))
                as fn(&str) -> crate::Result<()>,
        ),
        ("RegionInput", |t: &str| {
            crate::region::RegionInput::from_json(t, "input").map(|_| ())
        }),
    ] {
        for v in schema["$defs"][def]["oneOf"].as_array().expect("a union") {
            let kind = v["properties"]["type"]["const"].as_str().expect("a type");
            let err = read(&format!(r#"{{"type":"{kind}"}}"#)).err();
            let required: Vec<&str> = v["required"]
                .as_array()
                .expect("required")
                .iter()
                .filter_map(Value::as_str)
                .filter(|f| *f != "type")
                .collect();
            match (required.first(), err) {
                (None, None) => {}
                (Some(first), Some(e)) => assert!(
                    e.message().contains(&format!("needs field `{first}`")),
                    "{def} {kind}: {}",
                    e.message()
                ),
                (first, err) => {
                    panic!("{def} {kind}: schema requires {first:?}, reader says {err:?}")
                }
            }
        }
        let err = read(r#"{"type":"nope"}"#).unwrap_err();
        assert!(
            err.message().contains("unknown variant"),
            "{}",
            err.message()
        );
    }
}

#[test]
fn payloads_are_one_definition_of_base64_text() {
    let schema = wire_schema();
    assert_eq!(schema["$defs"]["Payload"]["contentEncoding"], "base64");
    let text = serde_json::to_string(&schema).expect("serializes");
    // Deliver, Undeliverable and Forward all point at it; no payload is described inline.
    assert_eq!(
        text.matches(r##""payload":{"$ref":"#/$defs/Payload"}"##)
            .count(),
        3
    );
}
