#!/usr/bin/env bash
# Randomized differential test: shardline's allocation strategies against the REAL reference
# implementations, on random cases shardline has never seen.
#
#   scripts/differential/run.sh [--seed N] [--count N]
#   SHARDLINE=/path/to/shardline scripts/differential/run.sh ...   (test that binary; skip cargo build)
#
# - Apache Pekko (JVM): scripts/differential/pekko generates --count random cases from the seed,
#   runs Pekko's own LeastShardAllocationStrategy (new and legacy) and its ConsistentHash ring,
#   and writes conformance vectors whose `expect` is Pekko's answer.
# - actor-ts (npm): run from scripts/differential/actor-ts when that harness exists. The npm
#   package `actor-ts` is not published on the registry, so there is none yet.
# Every vector is replayed with `target/debug/shardline decide`; each mismatch is printed and the
# whole vector saved under /tmp/shardline-differential-<seed>/mismatches/<id>.json
# (reproduce with: target/debug/shardline decide < that file).
# The last line is `differential: N passed, M failed`; the exit status is 1 on any mismatch.
# Needs: cargo, Java 17+, Maven, python3 (and node/npm for actor-ts). Same seed, same cases.
set -euo pipefail
cd "$(dirname "$0")/../.."

seed=""
count=500
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed="$2"; shift 2 ;;
    --seed=*) seed="${1#--seed=}"; shift ;;
    --count) count="$2"; shift 2 ;;
    --count=*) count="${1#--count=}"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$seed" ]; then
  seed=$(( $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') ))
fi
case "$seed" in (*[!0-9-]*|'') echo "--seed must be an integer" >&2; exit 2 ;; esac

start=$(date +%s)
echo "differential: seed $seed (reproduce with: scripts/differential/run.sh --seed $seed --count $count)"
work="/tmp/shardline-differential-$seed"
rm -rf "$work"
mkdir -p "$work"

if [ -n "${SHARDLINE:-}" ]; then
  shardline="$SHARDLINE"
else
  echo "building shardline ..."
  cargo build -q -p shardline-cli
  shardline=${CARGO_TARGET_DIR:-target}/debug/shardline
fi

echo "building the Pekko harness ..."
if ! (cd scripts/differential/pekko && mvn -q -B package) > "$work/mvn.log" 2>&1; then
  cat "$work/mvn.log" >&2
  exit 1
fi

vector_files=()
echo "generating $count Pekko cases ..."
java -cp 'scripts/differential/pekko/target/classes:scripts/differential/pekko/target/lib/*' \
  shardline.differential.Main --seed "$seed" --count "$count" --out "$work/pekko.json" 2>&1
vector_files+=("$work/pekko.json")

if [ -f scripts/differential/actor-ts/package.json ]; then
  echo "generating $count actor-ts cases ..."
  (cd scripts/differential/actor-ts && npm ci --silent --no-audit --no-fund)
  node scripts/differential/actor-ts/generate.mjs --seed "$seed" --count "$count" --out "$work/actor-ts.json" 2>&1
  vector_files+=("$work/actor-ts.json")
else
  echo "actor-ts: skipped (the npm package actor-ts is not published, so there is no harness)"
fi

echo "vectors in $work; build and generation took $(( $(date +%s) - start ))s; comparing ..."
python3 scripts/differential/compare.py "$shardline" "$work/mismatches" "${vector_files[@]}"
