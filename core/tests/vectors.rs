//! Replays every conformance vector in tests/vectors through `conformance::decide`.

use std::path::PathBuf;

use serde_json::Value;
use shardline_core::decide::decide;

fn vectors(file: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("vector file is JSON")
}

/// Checks one decision against `expect` (and `then`); returns a description of any mismatch.
pub fn check(v: &Value, got: &Value) -> Option<String> {
    let expect = &v["expect"];
    let id = v["id"].as_str().unwrap_or("?");
    for key in [
        "region",
        "error",
        "pending",
        "order",
        "shards",
        "shardsInOrder",
        "rounds",
    ] {
        if let Some(e) = expect.get(key) {
            if got.get(key) != Some(e) {
                return Some(format!(
                    "{id}: {key}: expected {e}, got {}",
                    got.get(key).unwrap_or(&Value::Null)
                ));
            }
        }
    }
    if let Some(then) = v.get("then") {
        let mut counts: Vec<u64> = got["then"]["counts"]
            .as_array()?
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        let mut expected: Vec<u64> = then["expectCounts"]
            .as_array()?
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        if then["countsSorted"].as_bool() == Some(true) {
            counts.sort_unstable();
            expected.sort_unstable();
        }
        if counts != expected {
            return Some(format!(
                "{id}: counts after re-allocation: expected {expected:?}, got {counts:?}"
            ));
        }
        if let Some(regions) = then.get("expectRegions") {
            if &got["then"]["regions"] != regions {
                return Some(format!(
                    "{id}: regions after re-allocation: expected {regions}, got {}",
                    got["then"]["regions"]
                ));
            }
        }
    }
    None
}

fn replay(file: &str) {
    let all = vectors(file);
    assert!(!all.is_empty());
    let mut failures = Vec::new();
    for v in &all {
        match decide(v, false) {
            Ok(got) => failures.extend(check(v, &got)),
            Err(e) => failures.push(format!("{}: error {e}", v["id"])),
        }
        // Explaining must not change the decision.
        let explained = decide(v, true).expect("explain succeeds where decide does");
        assert!(explained.get("explanation").is_some());
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn pekko_vectors() {
    replay("pekko-strategies.json");
}

#[test]
fn actor_ts_vectors() {
    replay("actor-ts-strategies.json");
}

#[test]
fn least_load_vectors() {
    replay("least-load.json");
}

#[test]
fn whole_file_decides_as_an_array() {
    let all = Value::Array(vectors("actor-ts-strategies.json"));
    let got = decide(&all, false).unwrap();
    assert_eq!(got.as_array().unwrap().len(), all.as_array().unwrap().len());
}

#[test]
fn malformed_vectors_name_the_field() {
    let mut v = vectors("pekko-strategies.json")[0].clone();
    v["regions"][1]["address"] = Value::from("not an address");
    let e = decide(&v, false).unwrap_err().to_string();
    assert!(
        e.contains("least-01") && e.contains("regions[1].address"),
        "{e}"
    );

    let mut v = vectors("pekko-strategies.json")[0].clone();
    v["strategy"]["relativeLimit"] = Value::from(1.5);
    let e = decide(&v, false).unwrap_err().to_string();
    assert!(e.contains("relativeLimit"), "{e}");

    let mut v = vectors("pekko-strategies.json")[0].clone();
    v["cluster"]["members"][0]["status"] = Value::from("Sleeping");
    let e = decide(&v, false).unwrap_err().to_string();
    assert!(e.contains("members[0].status"), "{e}");

    let e = decide(&serde_json::json!([{"op": "allocate"}]), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("vector [0]") && e.contains("strategy"), "{e}");
}

/// Minimal cases where the randomized differential test once caught shardline disagreeing
/// with the real Pekko; their `expect` is Pekko's answer.
#[test]
fn differential_findings() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/differential/findings");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("findings directory") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let cases = match value {
            Value::Array(v) => v,
            v => vec![v],
        };
        for v in &cases {
            let got = decide(v, false).unwrap();
            assert_eq!(check(v, &got), None, "{}", path.display());
            n += 1;
        }
    }
    assert!(n > 0, "no findings replayed");
}
