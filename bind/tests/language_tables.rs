//! Each language spells the shared tables in its own file: the status table (the C header,
//! Java's `Status` enum, Python's exception classes, Node's `ErrorCode` type) and the
//! coordinator phase names (Java's generated `Wire.CoordinatorPhase`, Python's stub). These
//! tests fail when one of them drifts from the Rust source of the table.

use std::path::PathBuf;

use shardline_bind::Status;
use shardline_core::coordinator::phase_name;
use shardline_core::coordinator::Phase;

fn read(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Every (name, code) of the shared table, OK included when `with_ok`.
fn table(with_ok: bool) -> Vec<(String, u32)> {
    Status::ALL
        .into_iter()
        .filter(|s| with_ok || *s != Status::Ok)
        .map(|s| (s.name().to_owned(), s.code()))
        .collect()
}

#[test]
fn the_c_header_lists_the_table() {
    let header = read("include/shardline.h");
    let found: Vec<(String, u32)> = header
        .lines()
        .filter_map(|l| l.trim().strip_prefix("SHARDLINE_STATUS_"))
        .filter_map(|l| {
            let (name, code) = l.trim_end_matches(',').split_once(" = ")?;
            Some((name.to_owned(), code.parse().ok()?))
        })
        .collect();
    assert_eq!(found, table(true));
}

#[test]
fn java_status_lists_the_table() {
    let java = read("bindings/java/shardline/src/main/java/org/shardline/Status.java");
    let found: Vec<(String, u32)> = java
        .lines()
        .filter_map(|l| {
            let l = l.trim().trim_end_matches([',', ';']);
            let (name, rest) = l.split_once('(')?;
            let code = rest.strip_suffix(')')?.parse().ok()?;
            name.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_')
                .then(|| (name.to_owned(), code))
        })
        .collect();
    assert_eq!(found, table(true));
}

#[test]
fn python_exceptions_list_the_table() {
    let py = read("bindings/python/python/shardline/errors.py");
    let codes = py
        .lines()
        .filter_map(|l| l.trim().strip_prefix("code = ")?.parse::<u32>().ok());
    let names = py.lines().filter_map(|l| {
        let n = l.trim().strip_prefix("status = \"SHARDLINE_STATUS_")?;
        Some(n.strip_suffix('"')?.to_owned())
    });
    let found: Vec<(String, u32)> = names.zip(codes).collect();
    assert_eq!(found, table(false));
}

#[test]
fn node_error_codes_list_the_table() {
    let ts = read("bindings/node/src/types.d.ts");
    let start = ts
        .find("export type ErrorCode =")
        .expect("types.d.ts has ErrorCode");
    let found: Vec<String> = ts[start..]
        .lines()
        .skip(1)
        .map_while(|l| {
            l.trim()
                .strip_prefix("| '")?
                .strip_suffix('\'')
                .map(str::to_owned)
        })
        .collect();
    let names: Vec<String> = table(false).into_iter().map(|(n, _)| n).collect();
    assert_eq!(found, names);
}

/// Every phase; the match stops compiling when a phase is added, so this list cannot fall
/// behind.
fn phases() -> Vec<&'static str> {
    let all = [
        Phase::Idle,
        Phase::AcquiringLease,
        Phase::Loading,
        Phase::Active,
        Phase::Stopped,
    ];
    for p in all {
        match p {
            Phase::Idle
            | Phase::AcquiringLease
            | Phase::Loading
            | Phase::Active
            | Phase::Stopped => {}
        }
    }
    all.into_iter().map(phase_name).collect()
}

#[test]
fn java_phases_carry_the_core_names() {
    // Phase is built from the generated Wire constants (WireTest checks it covers them all).
    let java = read("bindings/java/shardline/src/main/java/org/shardline/Wire.java");
    let start = java
        .find("class CoordinatorPhase")
        .expect("Wire has CoordinatorPhase");
    let end = start + java[start..].find("  }").expect("the class ends");
    let found: Vec<&str> = java[start..end].split('"').skip(1).step_by(2).collect();
    assert_eq!(found, phases());
}

#[test]
fn the_python_queries_name_the_core_phases() {
    // `phase` is a query by name, documented where Python names it.
    let py = read("bindings/python/python/shardline/machines.py");
    let want = phases()
        .iter()
        .map(|p| format!("\"{p}\""))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(
        py.contains(&format!("One of {want}.")),
        "machines.py should document CoordinatorQueries.phase as: One of {want}."
    );
}
