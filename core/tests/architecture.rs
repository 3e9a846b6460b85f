//! The module layering of `core/src`, enforced: each top-level module may use only modules
//! in layers below its own, so there is no import cycle, and a new top-level module fails
//! here until it is given a layer.
//!
//! A use is any `crate::<module>` path (`use` lines, `crate::{a, b}` groups, paths in
//! expressions and serde attributes) outside comments and test code: tests may reach up
//! (the coordinator's tests drive it against the in-memory store), shipped code may not.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Lowest first. Modules in one layer do not use each other.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["jvm"],
    &["hashing"],
    &["model", "metrics"],
    &["strategy", "protocol", "workerid"],
    &["coordinator", "region", "decide"],
    &["replay"],
    &["host"],
    &["sim", "schema"],
];

/// Module -> (used module -> a file that uses it).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn top_level_modules_are_layered_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph_of(&src);
    let problems = check(&graph);
    assert!(
        problems.is_empty(),
        "core/src layering:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_cycle_and_an_unplaced_module_are_named() {
    let mut graph = Graph::new();
    let edge = |g: &mut Graph, from: &str, to: &str| {
        g.entry(from.into())
            .or_default()
            .insert(to.into(), format!("{from}/mod.rs"));
    };
    edge(&mut graph, "protocol", "coordinator");
    edge(&mut graph, "coordinator", "protocol");
    graph.entry("gadgets".into()).or_default();
    let problems = check(&graph).join("\n");
    assert!(
        problems.contains("cycle: coordinator -> protocol -> coordinator"),
        "{problems}"
    );
    assert!(
        problems.contains("protocol (layer 5) uses coordinator (layer 6)"),
        "{problems}"
    );
    assert!(problems.contains("`gadgets` has no layer"), "{problems}");

    let uses = uses_in(concat!(
        "use crate::{model::Address, protocol};\n",
        "// crate::sim\n",
        "x(crate::jvm::f, '{');\n",
        "#[cfg(test)]\n",
        "mod tests {\n",
        "    const OPEN: &str = \"{\";\n",
        "    use crate::host::Store;\n",
        "}\n",
        "use crate::strategy::StrategyConfig;\n",
    ));
    assert_eq!(
        uses,
        ["jvm", "model", "protocol", "strategy"]
            .map(String::from)
            .into()
    );
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .map(|i| i + 1)
}

fn check(graph: &Graph) -> Vec<String> {
    let mut problems = Vec::new();
    for module in graph.keys() {
        if layer_of(module).is_none() {
            problems.push(format!(
                "`{module}` has no layer: add it to LAYERS in tests/architecture.rs"
            ));
        }
    }
    for module in LAYERS.iter().flat_map(|l| l.iter()) {
        if !graph.contains_key(*module) {
            problems.push(format!(
                "LAYERS names `{module}`, which core/src does not have"
            ));
        }
    }
    if let Some(cycle) = find_cycle(graph) {
        problems.push(format!("cycle: {}", cycle.join(" -> ")));
    }
    for (from, uses) in graph {
        for (to, file) in uses {
            if let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) {
                if b >= a {
                    problems.push(format!(
                        "{from} (layer {a}) uses {to} (layer {b}) in {file}: \
                         a module uses only lower layers"
                    ));
                }
            }
        }
    }
    problems
}

fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        graph: &Graph,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(|uses| uses.keys()) {
            if let Some(cycle) = visit(graph, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|start| visit(graph, start, &mut Vec::new(), &mut done))
}

fn graph_of(src: &Path) -> Graph {
    let mut graph = Graph::new();
    for entry in fs::read_dir(src).expect("core/src") {
        let path = entry.expect("core/src entry").path();
        let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        let name = match path.file_stem().and_then(|s| s.to_str()) {
            Some(n) if is_module && n != "lib" => n.to_owned(),
            _ => continue,
        };
        let mut files = Vec::new();
        rust_files(&path, &mut files);
        let uses = graph.entry(name.clone()).or_default();
        for file in files {
            let text = fs::read_to_string(&file).expect("a source file");
            for used in uses_in(&text) {
                if used != name {
                    let shown = file
                        .strip_prefix(src)
                        .unwrap_or(&file)
                        .display()
                        .to_string();
                    uses.entry(used).or_insert(shown);
                }
            }
        }
    }
    graph
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        if path.file_name().is_some_and(|n| n == "tests") {
            return;
        }
        for entry in fs::read_dir(path).expect("a source directory") {
            rust_files(&entry.expect("a directory entry").path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs")
        && path.file_name().is_some_and(|n| n != "tests.rs")
    {
        out.push(path.to_owned());
    }
}

/// The top-level modules a source text names through `crate::`.
fn uses_in(text: &str) -> BTreeSet<String> {
    let code = without_tests(&without_comments(text));
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Only the group's first level names modules: `crate::{a::b, c}` uses a and c.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && depth == 0 && (c.is_alphabetic() || c == '_') => {
                        found.insert(ident_at(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident_at(rest));
        }
    }
    // The crate root's own items (Error, Result, VERSION) belong to no module.
    found.retain(|m| m.chars().next().is_some_and(|c| c.is_lowercase()) && m != "self");
    found
}

fn ident_at(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string literal (a URL) is rare enough in this crate to accept
            // losing the rest of that line.
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Drops each `#[cfg(test)]` item: a `mod x;` line or a braced block.
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        let brace = rest.find('{');
        let semi = rest.find(';');
        match (brace, semi) {
            (_, Some(s)) if brace.is_none_or(|b| s < b) => rest = &rest[s + 1..],
            (Some(b), _) => rest = &rest[block_end(rest, b)..],
            _ => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// The index just past the block that opens at `open`, skipping braces inside string and
/// character literals.
fn block_end(text: &str, open: usize) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b'r' if matches!(bytes.get(i + 1), Some(b'"' | b'#'))
                && !bytes[i.saturating_sub(1)].is_ascii_alphanumeric() =>
            {
                let hashes = bytes[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                let body = i + 2 + hashes;
                i = text[body..]
                    .find(&close)
                    .map_or(bytes.len(), |e| body + e + close.len());
                continue;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            // A character literal ('{', '\''), not a lifetime ('a).
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < bytes.len() && bytes[i] != b'\'' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}
