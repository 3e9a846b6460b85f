#!/usr/bin/env bash
# Records the state-machine traces in tests/traces (format: tests/traces/README.md).
# Run it when a change to outputs or JSON forms is intended, and review the diff; the Rust
# tests record every trace again and fail when the bytes differ.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -q -p shardline-cli
bin="${CARGO_TARGET_DIR:-target}/debug/shardline"
out=tests/traces
rm -f "$out"/*.jsonl

# Small clusters and light traffic keep the files small; every scenario still runs its
# whole script (warm-up, faults, convergence, steady window, drain).
record() {
    local name=$1
    shift
    "$bin" sim "$@" --record "$out/$name.jsonl" >/dev/null
}
small=(--seed 1 --nodes 3 --shards 12 --rate 1 --steady-rounds 2)

record coordinator-failover.least-shard --scenario coordinator-failover --strategy least-shard \
    "${small[@]}"
record scale-out.consistent-hashing --scenario scale-out --strategy consistent-hashing "${small[@]}"
record slow-handoff.bounded-load-hashing --scenario slow-handoff --strategy bounded-load-hashing \
    "${small[@]}"
record crash.least-shard-legacy --scenario crash --strategy least-shard-legacy "${small[@]}"
# Coordinators that explain every decision (decisionEvents): the notices carry least-load's
# explanations, which every language must reproduce byte for byte.
record scale-out.least-load.decision-events --scenario scale-out --strategy least-load \
    "${small[@]}" --events /dev/null
# Chaos runs long (every fault kind, again and again): fewer shards and messages.
record chaos.least-shard.force-reallocate --scenario chaos --strategy least-shard \
    --policy force-reallocate --seed 1 --nodes 3 --shards 6 --rate 0.5 --steady-rounds 1

for f in "$out"/*.jsonl; do
    printf '%-60s %6d lines %8d bytes\n' "$f" "$(wc -l <"$f")" "$(wc -c <"$f")"
done
