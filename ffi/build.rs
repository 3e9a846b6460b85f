//! Gives the shared library its SONAME. The ABI version lives in one place, the
//! `SHARDLINE_ABI_VERSION` macro of cbindgen.toml, so the header, the SONAME and
//! `shardline_abi_version()` cannot disagree.

use std::env;
use std::fs;

fn main() {
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = fs::read_to_string("cbindgen.toml").expect("ffi/cbindgen.toml is readable");
    let abi = config
        .lines()
        .find_map(|l| l.trim().strip_prefix("#define SHARDLINE_ABI_VERSION "))
        .map(str::trim)
        .expect("cbindgen.toml defines SHARDLINE_ABI_VERSION in after_includes");
    assert!(
        !abi.is_empty() && abi.bytes().all(|b| b.is_ascii_digit()),
        "SHARDLINE_ABI_VERSION must be a decimal integer, got {abi:?}"
    );
    println!("cargo:rustc-env=SHARDLINE_ABI_VERSION={abi}");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libshardline.so.{abi}");
    }
}
