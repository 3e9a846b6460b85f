//! `shardline sim --record` and `shardline replay`: every checked-in trace is what recording
//! its command line again writes, byte for byte, and replays with exit 0; a changed output
//! exits 1 and a broken trace 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn shardline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shardline"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("shardline runs")
}

fn traces() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/traces");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/traces")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no traces in {}", dir.display());
    files
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("shardline-{}-{name}", std::process::id()))
}

fn replay(path: &Path) -> (i32, Value, String) {
    let out = shardline(&["replay", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        value,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn recording_again_gives_the_same_bytes_and_they_replay() {
    for path in traces() {
        let text = std::fs::read_to_string(&path).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let args: Vec<&str> = header["recordedBy"]
            .as_array()
            .expect("recordedBy")
            .iter()
            .map(|a| a.as_str().expect("string argument"))
            .collect();
        let again = scratch(&path.file_name().unwrap().to_string_lossy());
        let mut with_record = args.clone();
        with_record.extend(["--record", again.to_str().unwrap()]);
        let out = shardline(&with_record);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let new = std::fs::read_to_string(&again).unwrap();
        std::fs::remove_file(&again).ok();
        assert!(
            new == text,
            "{}: recording {args:?} again gives different bytes; if that is intended, run \
             scripts/record-traces.sh and review the diff",
            path.display()
        );
        let (code, result, stderr) = replay(&path);
        assert_eq!(code, 0, "{}: {stderr}", path.display());
        assert_eq!(result["mismatches"], 0);
        assert!(result["first"].is_null());
        assert!(result["steps"].as_u64().unwrap() > 100);
    }
}

#[test]
fn a_mismatch_exits_1_and_names_the_first_step() {
    let path = &traces()[0];
    let text = std::fs::read_to_string(path).unwrap();
    // The first step with an output gets one more, which the machine will not produce.
    let mut done = false;
    let changed: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if !done && v["outputs"].as_array().is_some_and(|o| !o.is_empty()) {
                v["outputs"]
                    .as_array_mut()
                    .unwrap()
                    .push(serde_json::json!({"type": "stopped"}));
                done = true;
            }
            v.to_string()
        })
        .collect();
    let bad = scratch("mismatch.jsonl");
    std::fs::write(&bad, changed.join("\n")).unwrap();
    let (code, result, stderr) = replay(&bad);
    std::fs::remove_file(&bad).ok();
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(result["mismatches"], 1);
    assert!(result["first"]["step"].as_u64().is_some());
    assert_ne!(result["first"]["expected"], result["first"]["actual"]);
    assert!(stderr.contains("differ"), "{stderr}");
}

#[test]
fn a_broken_trace_exits_2_naming_the_line() {
    let bad = scratch("broken.jsonl");
    let path = &traces()[0];
    let text = std::fs::read_to_string(path).unwrap();
    let header = text.lines().next().unwrap();
    std::fs::write(&bad, format!("{header}\n{{\"end\":\"c9\"}}\n")).unwrap();
    let (code, _, stderr) = replay(&bad);
    std::fs::remove_file(&bad).ok();
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("line 2: field end: unknown machine \"c9\""),
        "{stderr}"
    );
    let (code, _, stderr) = replay(Path::new("/nonexistent/trace.jsonl"));
    assert_eq!(code, 2, "{stderr}");
}
