//! Record and replay: the checked-in traces in tests/traces replay identically on fresh
//! machines, a changed output is caught, bad traces get errors naming line and field, and
//! recording leaves a simulation's outcome as it was.

use std::path::PathBuf;

use serde_json::{json, Value};
use shardline_core::replay::replay;
use shardline_core::sim::{self, Scenario, SimConfig};
use shardline_core::strategy::StrategyConfig;

fn traces() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/traces");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("trace is readable");
            (p.file_name().unwrap().to_string_lossy().into_owned(), text)
        })
        .collect()
}

#[test]
fn every_checked_in_trace_replays_identically() {
    let traces = traces();
    assert!(
        traces.len() >= 4,
        "expected several traces, found {}",
        traces.len()
    );
    let mut total = 0;
    for (name, text) in &traces {
        let r = replay(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.mismatches, 0, "{name}: {:?}", r.first);
        assert!(r.first.is_none());
        assert!(r.steps > 100, "{name}: only {} steps", r.steps);
        total += r.steps;
    }
    assert!(total > 5_000, "only {total} steps in all traces");
}

/// The trace with the first step whose outputs hold a `send`, changed in that output.
fn corrupt(text: &str) -> (String, u64, u64) {
    let mut step = 0;
    let mut lines: Vec<String> = Vec::new();
    let mut hit = None;
    for (i, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v.get("input").is_some() {
            step += 1;
            if hit.is_none() {
                if let Some(out) = v["outputs"]
                    .as_array_mut()
                    .and_then(|o| o.iter_mut().find(|o| o["type"] == "send"))
                {
                    out["envelope"]["to"] = json!({"region": "nobody"});
                    hit = Some((step, i as u64 + 1));
                }
            }
        }
        lines.push(v.to_string());
    }
    let (step, line) = hit.expect("a step that sends");
    (lines.join("\n"), step, line)
}

#[test]
fn a_changed_output_is_reported_as_the_first_mismatch() {
    let (name, text) = &traces()[0];
    let (bad, step, line) = corrupt(text);
    let r = replay(&bad).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(r.mismatches >= 1, "{name}: corrupted trace replayed clean");
    let first = r.first.expect("first mismatch");
    assert_eq!((first.step, first.line), (step, line));
    assert_ne!(first.expected, first.actual);
    assert!(first
        .expected
        .outputs
        .iter()
        .any(|o| o["envelope"]["to"] == json!({"region": "nobody"})));
    // The machine itself was fed the same input, so the rest still agrees.
    assert_eq!(r.mismatches, 1);
}

fn error(text: &str) -> String {
    match replay(text) {
        Ok(r) => panic!("expected an error, replayed {r:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_traces_get_errors_naming_line_and_field() {
    let (_, text) = &traces()[0];
    let header = text.lines().next().unwrap();
    let with = |rest: &str| format!("{header}\n{rest}\n");
    let create = r#"{"create":"region","machine":"r0","address":"pekko://sim@n0:2552"}"#;

    assert!(error("").contains("empty"));
    let e = error("not json");
    assert!(e.starts_with("line 1: not valid JSON"), "{e}");
    let e = error(&header.replace(r#""version":1"#, r#""version":99"#));
    assert!(
        e.contains("line 1: field version") && e.contains("99"),
        "{e}"
    );
    let e = error(r#"{"format":"something-else","version":1}"#);
    assert!(e.contains("line 1: field format"), "{e}");
    let e = error(&header.replacen(r#""kind":"#, r#""kind":"nope","was":"#, 1));
    assert!(e.starts_with("line 1: header.strategy"), "{e}");

    let e = error(&with(
        r#"{"machine":"c7","now":0,"input":{"type":"start"},"outputs":[]}"#,
    ));
    assert!(
        e.contains("line 2: field machine: unknown machine \"c7\""),
        "{e}"
    );
    let e = error(&with(&format!(
        "{create}\n{{\"end\":\"r0\"}}\n{{\"machine\":\"r0\",\"now\":0,\"input\":{{\"type\":\"start\"}},\"outputs\":[]}}"
    )));
    assert!(e.contains("line 4") && e.contains("ended at line 3"), "{e}");
    let e = error(&with(&format!(
        "{create}\n{{\"machine\":\"r0\",\"now\":0,\"input\":{{\"type\":\"receive\",\"envelope\":{{\"from\":\"coordinator\",\"to\":{{\"region\":\"r0\"}},\"message\":{{\"directive\":{{\"type\":\"bogus\"}}}}}}}},\"outputs\":[]}}"
    )));
    assert!(
        e.starts_with("line 3: input.envelope.message.directive"),
        "{e}"
    );
    let e = error(&with(&format!(
        "{create}\n{{\"machine\":\"r0\",\"now\":0,\"input\":{{\"type\":\"start\"}}}}"
    )));
    assert!(e.contains("line 3: missing field outputs"), "{e}");
    let e = error(&with(&format!(
        "{create}\n{{\"machine\":\"r0\",\"now\":0,\"input\":{{\"type\":\"leaseDenied\"}},\"outputs\":[]}}"
    )));
    assert!(e.starts_with("line 3: input"), "{e}");
    let e = error(&with(&format!("{create}\n{create}")));
    assert!(
        e.contains("line 3: field machine") && e.contains("created before"),
        "{e}"
    );
    let e = error(&with(
        r#"{"create":"coordinator","machine":"c0","address":"nowhere"}"#,
    ));
    assert!(e.starts_with("line 2: field address"), "{e}");
    let e = error(&with(
        r#"{"create":"region","machine":"r0","address":"a","extra":1}"#,
    ));
    assert!(e.contains("line 2") && e.contains("extra"), "{e}");
}

fn report_json(config: &SimConfig) -> String {
    serde_json::to_string(&sim::run(config).unwrap()).unwrap()
}

#[test]
fn recording_leaves_the_run_as_it_was() {
    for (scenario, kind) in [
        (Scenario::CoordinatorFailover, "least-shard"),
        (Scenario::Chaos, "consistent-hashing"),
    ] {
        let mut config = SimConfig::new(scenario, 5);
        config.nodes = Some(3);
        config.shards = Some(12);
        config.rate = 2.0;
        config.steady_rounds = 2;
        config.strategy = StrategyConfig::from_json(&json!({ "kind": kind })).unwrap();
        // Recording, and logging events with every decision explained, observe the run
        // without changing it; a trace with explained decisions replays identically too.
        for events in [false, true] {
            let observed = sim::run_observed(
                &config,
                sim::Observe {
                    record: Some(json!(["test"])),
                    events,
                },
            )
            .unwrap();
            assert_eq!(
                serde_json::to_string(&observed.report).unwrap(),
                report_json(&config)
            );
            let r = replay(&observed.trace.unwrap()).unwrap();
            assert_eq!(r.mismatches, 0, "{scenario:?}: {:?}", r.first);
            assert!(r.steps > 100);
            assert_eq!(observed.events.is_some(), events);
            if let Some(log) = observed.events {
                let kinds: std::collections::BTreeSet<String> = log
                    .lines()
                    .map(|l| {
                        let v: serde_json::Value = serde_json::from_str(l).unwrap();
                        v["event"]["type"].as_str().unwrap().to_owned()
                    })
                    .collect();
                for k in ["active", "allocated", "rebalanceRound"] {
                    assert!(kinds.contains(k), "{scenario:?}: no {k} event in {kinds:?}");
                }
                let explained = log
                    .lines()
                    .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                    .find(|v| v["event"]["type"] == "allocated")
                    .unwrap();
                assert_eq!(explained["event"]["explanation"]["op"], "allocate");
            }
        }
    }
}
