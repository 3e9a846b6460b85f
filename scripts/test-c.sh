#!/usr/bin/env bash
# Builds libshardline and runs the C host tests against it under ASan/UBSan with leak checks.
# Prints "C tests: N passed, N failed" and exits non-zero on any failure.
#
#   scripts/test-c.sh          the C suite (tests/c/test_shardline.c)
#   scripts/test-c.sh --etcd   the etcd suite (tests/c/test_etcd.c) against a library built with
#                              the `etcd` feature and the etcd at SHARDLINE_ETCD_ENDPOINTS
#                              (scripts/test-etcd.sh starts one); prints "c etcd: N passed, N failed"
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

features=()
defines=()
test=test_shardline
run_args=(tests/vectors tests/traces)
if [ "${1:-}" = --etcd ]; then
    features=(--features etcd)
    defines=(-DSHARDLINE_FEATURE_ETCD)
    test=test_etcd
    run_args=()
fi

bash scripts/install-deps.sh cjson

cargo build -p shardline-ffi "${features[@]}"

target=${CARGO_TARGET_DIR:-$root/target}
lib="$target/debug"
out="$target/c-tests"
mkdir -p "$out/lib"

# The library's SONAME is libshardline.so.<ABI>; give the loader that name.
abi=$(sed -n 's/^#define SHARDLINE_ABI_VERSION \([0-9][0-9]*\)$/\1/p' include/shardline.h)
ln -sf "$lib/libshardline.so" "$out/lib/libshardline.so.$abi"

gcc -std=c11 -pthread -Wall -Wextra -Werror -g -fsanitize=address,undefined -fno-omit-frame-pointer \
    -I include "${defines[@]}" "tests/c/$test.c" \
    -L "$lib" -lshardline -lcjson \
    -o "$out/$test"

LD_LIBRARY_PATH="$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$out/$test" "${run_args[@]}"
