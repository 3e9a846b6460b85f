#!/usr/bin/env bash
# JVM benchmarks: Pekko 1.7.0's own allocation strategies next to shardline through the drop-in
# adapter, the JNI wrappers and the Rust core in-process, on the same inputs in one run, plus
# the JNI call overhead (standard workload). JMH, one fork per benchmark.
#
#   scripts/bench/jvm.sh [--quick] [--full] [--out FILE]
#
#   (none)    R in {10, 100, 1000, 10000} x S in {1k, 100k}; about 17 minutes on 2 cores
#   --quick   R=1000 x S=100k only, short warm-up and measurement (under 2 minutes once built)
#   --full    adds S=1M to the default sizes
#   --out     writes the result fragment ({"figures": [...], "ratios": [...]}) for merge.py
#
# Builds the jars with the release JNI library first (tests skipped); honours CARGO_TARGET_DIR
# and MVN_ARGS (extra Maven arguments, e.g. -o). Needs JDK 17+, Maven 3.8+, cargo.
set -euo pipefail

# --out is relative to the caller's directory; everything else runs from the repository root.
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --out)
      [ $# -ge 2 ] || { echo "jvm.sh: --out needs a file name" >&2; exit 2; }
      case "$2" in /*) args+=(--out "$2") ;; *) args+=(--out "$PWD/$2") ;; esac
      shift 2 ;;
    --quick|--full) args+=("$1"); shift ;;
    *) echo "jvm.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/../.."

echo "jvm: building with the release JNI library ..." >&2
(cd bindings/java && mvn -B -ntp -q -Dstyle.color=never ${MVN_ARGS:-} -Dshardline.cargo.profile=release -Dshardline.cli.dir= -DskipTests package)

bench=bindings/java/shardline-bench/target
java -cp "$bench/classes:$(cat "$bench/classpath.txt")" org.shardline.bench.BenchMain ${args[@]+"${args[@]}"}
