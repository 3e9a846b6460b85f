#!/usr/bin/env bash
# C ABI overhead: builds libshardline in release mode, compiles scripts/bench/c/overhead.c with
# -O2 (no sanitizers) and runs it on the standard workload.
#   scripts/bench/c.sh [--quick] [--out FILE]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"

cargo build -q --release -p shardline-ffi

target=${CARGO_TARGET_DIR:-$root/target}
lib="$target/release"
out="$target/bench-c"
mkdir -p "$out/lib"
# The library's SONAME is libshardline.so.<ABI>; give the loader that name.
abi=$(sed -n 's/^#define SHARDLINE_ABI_VERSION \([0-9][0-9]*\)$/\1/p' include/shardline.h)
ln -sf "$lib/libshardline.so" "$out/lib/libshardline.so.$abi"

gcc -std=c11 -O2 -Wall -Wextra -Werror -I include scripts/bench/c/overhead.c \
    -L "$lib" -lshardline -o "$out/overhead"

LD_LIBRARY_PATH="$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/overhead" "$@"
