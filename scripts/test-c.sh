#!/usr/bin/env bash
# Builds libshardline and runs the C host tests against it under ASan/UBSan with leak checks.
# Prints "C tests: N passed, N failed" and exits non-zero on any failure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [ ! -f /usr/include/cjson/cJSON.h ]; then
    echo "installing libcjson-dev (cJSON headers for the C tests)" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
    # A fresh machine may have no package lists yet.
    $sudo apt-get install -y -qq libcjson-dev >/dev/null 2>&1 ||
        { $sudo apt-get update -qq && $sudo apt-get install -y -qq libcjson-dev; }
fi

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
