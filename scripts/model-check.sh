#!/usr/bin/env bash
# The long model check: the real coordinator and region machines, every reachable state of
# the runs in Bounds::long_runs (model/src/lib.rs: longer horizons, each fault over a whole
# failover, three regions). Prints one JSON summary line; a violation also prints a shortest
# trace on standard error and fails. The test command runs the short form
# (cargo test --release -p shardline-model). Extra arguments make one run of your own, e.g.
#   scripts/model-check.sh --start unbalanced --horizon-ms 3000 --drops 1 --crashes 1
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -q --release -p shardline-model
bin="${CARGO_TARGET_DIR:-target}/release/shardline-model"
if [ $# -eq 0 ]; then
    exec "$bin" --long
fi
exec "$bin" "$@"
