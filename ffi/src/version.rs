//! Library and ABI versions, for hosts to check at start-up what they loaded.

use std::ffi::{c_char, CStr};

const VERSION: &CStr = match CStr::from_bytes_with_nul(
    concat!("shardline/", env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
) {
    Ok(v) => v,
    Err(_) => panic!("the package version contains a NUL byte"),
};

/// The ABI major version, from `SHARDLINE_ABI_VERSION` in cbindgen.toml (see build.rs).
pub(crate) const ABI_VERSION: u32 = parse_u32(env!("SHARDLINE_ABI_VERSION"));

const fn parse_u32(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut n: u32 = 0;
    while i < b.len() {
        n = n * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    n
}

/// The library version, "shardline/<semver>" (e.g. "shardline/0.1.0").
///
/// @return a static NUL-terminated string (never NULL).
///
/// Ownership: static; never freed.
/// Thread safety: callable from any thread. Leaves the last error untouched.
#[no_mangle]
pub extern "C" fn shardline_version() -> *const c_char {
    VERSION.as_ptr()
}

/// The ABI major version of the loaded library. A host compiled against this header should
/// check `shardline_abi_version() == SHARDLINE_ABI_VERSION` before other calls.
///
/// @return the ABI major version (also the SONAME suffix, libshardline.so.<version>).
///
/// Ownership: nothing to free.
/// Thread safety: callable from any thread. Leaves the last error untouched.
#[no_mangle]
pub extern "C" fn shardline_abi_version() -> u32 {
    ABI_VERSION
}
