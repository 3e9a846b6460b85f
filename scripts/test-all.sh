#!/usr/bin/env bash
# The one test command: every language, every vector, then the release artifacts installed
# as users install them. Installs the system packages it needs (scripts/install-deps.sh).
# Debug builds except for the packaging step; fails fast.
set -euo pipefail
cd "$(dirname "$0")/.."

passed=()
start=$SECONDS
# A failing step names itself on the last line, so a CI log's tail says which step broke.
step() {
  local name=$1 rc=0
  shift
  echo
  echo "=== $name ($((SECONDS - start)) s in)"
  "$@" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo
    echo "=== FAILED: $name (exit $rc) after $((SECONDS - start)) s; passed before it: ${passed[*]:-none}"
    exit "$rc"
  fi
  passed+=("$name")
}

step "system packages and Rust components" bash scripts/install-deps.sh
step "rustfmt" cargo fmt --all -- --check
# napi-rs registers exports in a way clippy's test-target pass reads as dead code: lint
# the Node crate's library target only.
step "clippy" cargo clippy --workspace --exclude shardline-node --all-targets --all-features --quiet -- -D warnings
step "clippy (node)" cargo clippy -p shardline-node --quiet -- -D warnings
step "rust tests" cargo test
# Release: the checker explores ~170k states of the real machines, seconds optimised.
step "model checking (short form; scripts/model-check.sh is the long one)" cargo test -q --release -p shardline-model --test model_check -- --nocapture
step "C ABI tests (ASan/UBSan)" bash scripts/test-c.sh
step "differential vs Pekko" bash scripts/differential/run.sh --count 2000
step "Python binding" bash scripts/test-python.sh
step "Node binding" bash scripts/test-node.sh
step "JVM binding and Pekko adapter" bash scripts/test-java.sh
step "etcd integration (real etcd on loopback)" bash scripts/test-etcd.sh
# Network 7, so that a soak someone runs by hand on the default network is not disturbed.
# One of the three nodes is the Python node (cluster/python/node.py), so the binding's drivers
# run under the faults too; it reuses the venv of the Python step above. One more run has the
# nodes force timed-out hand-offs (force-reallocate) while entities stop slowly.
step "real cluster under faults (checker tests, scripts/cluster-test.sh --quick, one Python node, one force-reallocate run)" bash -c 'cargo test -q -p shardline-cluster && bash scripts/cluster-test.sh --quick --net-id 7 --python-nodes 1 --force-runs 1'
step "release artifacts (scripts/package.sh)" bash scripts/package.sh
step "artifacts installed as users install them, no cargo" bash scripts/test-install.sh
step "least-load quality goals (plans with per-shard loads, short form)" bash -c 'cargo build -q -p shardline-cli && python3 scripts/bench/load_quality.py --quick --check --shardline "${CARGO_TARGET_DIR:-target}/debug/shardline" > /dev/null'
step "demo" bash -c 'cargo run -q -p shardline-cli -- decide < examples/vectors/demo.json > /dev/null && cargo run -q -p shardline-cli -- sim --scenario coordinator-failover --seed 1 --svg "${CARGO_TARGET_DIR:-target}/failover.svg"'

echo
echo "=== all steps passed in $((SECONDS - start)) s: ${passed[*]}"
