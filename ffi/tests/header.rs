//! include/shardline.h must be exactly what cbindgen generates from ffi/src; run with
//! BLESS=1 to rewrite it after an intended change.

use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn header_path() -> PathBuf {
    crate_dir().join("../include/shardline.h")
}

fn generate() -> String {
    let dir = crate_dir();
    let config =
        cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn header_is_up_to_date() {
    let generated = generate();
    let path = header_path();
    if std::env::var_os("BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("include/shardline.h is writable");
        return;
    }
    let checked_in = read(&path);
    if checked_in != generated {
        let line = checked_in
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| checked_in.lines().count().min(generated.lines().count()))
            + 1;
        panic!(
            "include/shardline.h is out of date (first difference at line {line}); \
             regenerate with BLESS=1 cargo test -p shardline-ffi --test header"
        );
    }
}

fn define(header: &str, name: &str) -> u64 {
    let prefix = format!("#define {name} ");
    header
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("the header defines {name}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{name} is a number: {e}"))
}

#[test]
fn version_macros_match_cargo() {
    let header = read(&header_path());
    for (name, cargo) in [
        ("SHARDLINE_VERSION_MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("SHARDLINE_VERSION_MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("SHARDLINE_VERSION_PATCH", env!("CARGO_PKG_VERSION_PATCH")),
    ] {
        assert_eq!(
            define(&header, name).to_string(),
            cargo,
            "{name} in ffi/cbindgen.toml disagrees with the crate version"
        );
    }
    assert_eq!(
        define(&header, "SHARDLINE_ABI_VERSION"),
        u64::from(shardline::version::shardline_abi_version())
    );
    let version = unsafe { std::ffi::CStr::from_ptr(shardline::version::shardline_version()) };
    assert_eq!(version.to_str().unwrap(), shardline_core::VERSION);
}
