#!/usr/bin/env bash
# Long simulator runs: every scenario x strategy x hand-off timeout policy over many seeds, at
# bigger sizes than CI, on both timing profiles (Pekko's, and tight timeouts that make
# hand-offs time out all the time). Release build. Prints each failing run as the command
# line that replays it, then one summary line; exits 1 if any run broke an invariant.
#
#   scripts/soak.sh [--seeds N] [--first-seed N] [--nodes N] [--shards N] [--jobs N]
#                   [--scenario NAME]... [--strategy KIND]... [--profile pekko|tight|both]
#
# Defaults: 20 seeds, 10 nodes, 200 shards, every scenario and strategy, both profiles,
# one job per CPU. `--seeds 200 --nodes 20 --shards 1000` is a night's run.
set -euo pipefail
cd "$(dirname "$0")/.."

seeds=20
first=1
nodes=10
shards=200
jobs=$(nproc 2>/dev/null || echo 2)
profile=both
scenarios=()
strategies=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --first-seed) first=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --scenario) scenarios+=("$2"); shift 2 ;;
    --strategy) strategies+=("$2"); shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for n in "$seeds" "$first" "$nodes" "$shards" "$jobs"; do
  case "$n" in ''|*[!0-9]*) echo "soak.sh: expected a number, got '$n'" >&2; exit 2 ;; esac
done
case "$profile" in
  pekko) profiles=("") ;;
  tight) profiles=("--rebalance-interval 2000 --handoff-timeout 1500") ;;
  both) profiles=("" "--rebalance-interval 2000 --handoff-timeout 1500") ;;
  *) echo "soak.sh: --profile must be pekko, tight or both" >&2; exit 2 ;;
esac

cargo build --release --quiet -p shardline-cli
bin=$PWD/target/release/shardline
if [ ${#scenarios[@]} -eq 0 ]; then
  mapfile -t scenarios < <("$bin" sim --list | awk '{print $1}')
fi
if [ ${#strategies[@]} -eq 0 ]; then
  strategies=(least-shard least-shard-legacy consistent-hashing actor-ts-least-shard actor-ts-hash)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=$work/runs
for scenario in "${scenarios[@]}"; do
  for strategy in "${strategies[@]}"; do
    for policy in keep-owner force-reallocate; do
      for prof in "${profiles[@]}"; do
        for seed in $(seq "$first" $((first + seeds - 1))); do
          echo "sim --scenario $scenario --seed $seed --strategy $strategy --policy $policy --nodes $nodes --shards $shards $prof"
        done
      done
    done
  done
done > "$runs"
total=$(wc -l < "$runs")
echo "soak: $total runs (${#scenarios[@]} scenarios x ${#strategies[@]} strategies x 2 policies x ${#profiles[@]} profiles x $seeds seeds), $nodes nodes, $shards shards, $jobs jobs"

# One line per run: PASS or FAIL, then the arguments; failures add the first violations.
run_one() {
  local args=$1 out code
  # shellcheck disable=SC2086
  out=$("$bin" $args --json 2>/dev/null) && code=0 || code=$?
  if [ "$code" -eq 0 ]; then
    echo "PASS $args"
  else
    local first_violation
    first_violation=$(printf '%s' "$out" | grep -o '"violations":\["[^"]*"' | head -1 | cut -c16-)
    echo "FAIL $args (exit $code) ${first_violation:-no report}"
  fi
}
export -f run_one
export bin

start=$(date +%s)
results=$work/results
tr '\n' '\0' < "$runs" | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$1"' _ {} > "$results"
elapsed=$(( $(date +%s) - start ))

failed=$(grep -c '^FAIL' "$results" || true)
grep '^FAIL' "$results" | sed 's/^FAIL /  shardline /' || true
echo "soak: $((total - failed))/$total runs passed, $failed failed, ${elapsed}s"
[ "$failed" -eq 0 ]
