//! The committed wire contract and the files generated from it match what the core's types
//! give now. `BLESS=1 cargo test -p shardline-schema --test generated` rewrites them.

use std::path::PathBuf;

use shardline_schema::{generate, place};

#[test]
fn committed_files_match_the_core_types() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bless = std::env::var_os("BLESS").is_some();
    let mut stale = Vec::new();
    for g in generate() {
        let path = root.join(g.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        let want = place(&current, &g).unwrap_or_else(|| {
            panic!(
                "{}: the markers around the generated part are missing",
                g.path
            )
        });
        if want == current {
            continue;
        }
        if bless {
            std::fs::write(&path, &want).unwrap_or_else(|e| panic!("writing {}: {e}", g.path));
        } else {
            stale.push(g.path);
        }
    }
    assert!(
        stale.is_empty(),
        "generated from the core's types, these differ from the committed files: {}; \
         run BLESS=1 cargo test -p shardline-schema --test generated and commit them",
        stale.join(", ")
    );
}
