#!/usr/bin/env bash
# Builds the JNI library (crate shardline-java) with cargo and copies it to
# <out>/<os>-<arch>/, the layout NativeLibrary.java reads from the jar. With a third argument
# it also builds the `shardline` CLI and copies it there (tests compare the JVM's decisions with
# `shardline decide`; the CLI is not packaged).
#
#   build-native.sh <debug|release> <out-dir> [<cli-dir>]
#
# SHARDLINE_CARGO_FEATURES: features of shardline-java to turn on (comma-separated), e.g. bench.
#
# Run by Maven in the compile phase of bindings/java/shardline. Honours CARGO_TARGET_DIR
# (cargo reports where it put the library, so this script never guesses the path).
set -euo pipefail

profile="${1:?profile (debug or release)}"
out="${2:?output directory}"
cli_dir="${3:-}"
crate_dir="$(cd "$(dirname "$0")/.." && pwd)"

case "$(uname -s)" in
  Linux) os=linux; lib=libshardline_java.so ;;
  Darwin) os=macos; lib=libshardline_java.dylib ;;
  *) echo "build-native.sh: unsupported OS $(uname -s)" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x86_64 ;;
  aarch64|arm64) arch=aarch64 ;;
  *) echo "build-native.sh: unsupported CPU $(uname -m)" >&2; exit 1 ;;
esac

args=(build -p shardline-java ${cli_dir:+-p shardline-cli} --manifest-path "$crate_dir/Cargo.toml" --message-format=json-render-diagnostics)
for feature in ${SHARDLINE_CARGO_FEATURES//,/ }; do
  args+=(--features "shardline-java/$feature")
done
case "$profile" in
  debug) ;;
  release) args+=(--release) ;;
  *) echo "build-native.sh: profile must be debug or release, got $profile" >&2; exit 1 ;;
esac

# Diagnostics go to stderr; stdout carries cargo's JSON messages, one per line.
messages="$(cargo "${args[@]}")"
built="$(printf '%s\n' "$messages" | grep -o "\"filenames\":\[\"[^\"]*/$lib\"" | tail -n 1 | sed -e 's/^"filenames":\["//' -e 's/"$//')"
if [ -z "$built" ] || [ ! -f "$built" ]; then
  echo "build-native.sh: cargo did not report $lib" >&2
  exit 1
fi
mkdir -p "$out/$os-$arch"
cp "$built" "$out/$os-$arch/$lib"
echo "build-native.sh: $built -> $out/$os-$arch/$lib"

if [ -n "$cli_dir" ]; then
  cli="$(printf '%s\n' "$messages" | grep -o '"executable":"[^"]*/shardline"' | tail -n 1 | sed -e 's/^"executable":"//' -e 's/"$//')"
  if [ -z "$cli" ] || [ ! -x "$cli" ]; then
    echo "build-native.sh: cargo did not report the shardline binary" >&2
    exit 1
  fi
  mkdir -p "$cli_dir"
  cp "$cli" "$cli_dir/shardline"
  echo "build-native.sh: $cli -> $cli_dir/shardline"
fi
