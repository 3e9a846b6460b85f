#!/usr/bin/env bash
# Builds libshardline and runs the C host tests against it under ASan/UBSan with leak checks.
# Prints "C tests: N passed, N failed" and exits non-zero on any failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

bash scripts/install-deps.sh cjson

cargo build -p shardline-ffi

target=${CARGO_TARGET_DIR:-$root/target}
lib="$target/debug"
out="$target/c-tests"
mkdir -p "$out/lib"

# The library's SONAME is libshardline.so.<ABI>; give the loader that name.
abi=$(sed -n 's/^#define SHARDLINE_ABI_VERSION \([0-9][0-9]*\)$/\1/p' include/shardline.h)
ln -sf "$lib/libshardline.so" "$out/lib/libshardline.so.$abi"

gcc -std=c11 -pthread -Wall -Wextra -Werror -g -fsanitize=address,undefined -fno-omit-frame-pointer \
    -I include tests/c/test_shardline.c \
    -L "$lib" -lshardline -lcjson \
    -o "$out/test_shardline"

LD_LIBRARY_PATH="$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$out/test_shardline" tests/vectors tests/traces
