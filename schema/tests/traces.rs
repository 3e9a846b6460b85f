//! The schema describes what the core really writes and reads: every input and output of the
//! recorded traces (tests/traces, made by the simulator from real machines) validates against
//! the definition of its form, and forms the core refuses are refused by the schema too.

use std::collections::HashMap;
use std::path::PathBuf;

use jsonschema::Validator;
use serde_json::{json, Value};
use shardline_schema::wire_schema;

fn validator(definition: &str) -> Validator {
    let mut schema = wire_schema();
    schema["$ref"] = json!(format!("#/$defs/{definition}"));
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn check(v: &Validator, what: &str, value: &Value) {
    if let Err(e) = v.validate(value) {
        panic!("{what} does not validate: {e}\n{value}");
    }
}

#[test]
fn every_recorded_input_and_output_validates() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/traces");
    let forms = [
        "CoordinatorInput",
        "CoordinatorOutput",
        "RegionInput",
        "RegionOutput",
    ];
    let validators: HashMap<&str, Validator> = forms.iter().map(|f| (*f, validator(f))).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/traces") {
        let path = entry.expect("a directory entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).expect("a trace");
        let mut kinds: HashMap<String, String> = HashMap::new();
        for (n, line) in text.lines().enumerate().skip(1) {
            let at = format!("{}:{}", path.display(), n + 1);
            let v: Value = serde_json::from_str(line).expect("a JSON line");
            if let Some(kind) = v["create"].as_str() {
                kinds.insert(v["machine"].as_str().expect("a name").into(), kind.into());
                continue;
            }
            let Some(machine) = v["machine"].as_str() else {
                continue;
            };
            let (input, output) = match kinds[machine].as_str() {
                "coordinator" => ("CoordinatorInput", "CoordinatorOutput"),
                _ => ("RegionInput", "RegionOutput"),
            };
            // start, timeout and route are calls on the machine, not documents it reads.
            if !matches!(
                v["input"]["type"].as_str(),
                Some("start" | "timeout" | "route")
            ) {
                check(&validators[input], &format!("{at} input"), &v["input"]);
                *counts.entry(input).or_default() += 1;
            }
            for o in v["outputs"].as_array().expect("outputs") {
                check(&validators[output], &format!("{at} output"), o);
                *counts.entry(output).or_default() += 1;
            }
        }
    }
    assert!(files > 0, "no traces in {}", dir.display());
    for f in forms {
        assert!(
            counts.get(f).copied().unwrap_or(0) > 0,
            "no {f} in the traces"
        );
    }
}

#[test]
fn forms_the_core_refuses_are_refused() {
    let output = validator("RegionOutput");
    let deliver = json!({"type": "deliver", "shard": "1", "entity": "e", "payload": "aGk="});
    assert!(output.is_valid(&deliver));
    let mut bytes_as_numbers = deliver.clone();
    bytes_as_numbers["payload"] = json!([104, 105]);
    assert!(!output.is_valid(&bytes_as_numbers));

    let input = validator("CoordinatorInput");
    assert!(input.is_valid(&json!({"type": "leaseLost", "token": 3})));
    // The core's reader rejects a field of another variant, and a missing one.
    assert!(!input.is_valid(&json!({"type": "leaseLost", "token": 3, "fenced": true})));
    assert!(!input.is_valid(&json!({"type": "leaseGranted", "token": 3})));
    assert!(!input.is_valid(&json!({"type": "nope"})));
    for text in [
        r#"{"type":"leaseLost","token":3,"fenced":true}"#,
        r#"{"type":"leaseGranted","token":3}"#,
        r#"{"type":"nope"}"#,
    ] {
        assert!(shardline_core::coordinator::CoordinatorInput::from_json(text, "input").is_err());
    }
}
