#!/usr/bin/env bash
# The real-cluster fault campaign: a 3-member etcd cluster and 3 shardline nodes on this
# machine, one fault per run, a checker over the recorded history, one JSON summary line on
# stdout. Installs etcd, protoc and libfaketime if missing (scripts/install-deps.sh). Run as
# root for the partition faults (network namespaces); otherwise they are left out.
#
#   scripts/cluster-test.sh                 11 runs, one of each fault kind
#   scripts/cluster-test.sh --quick         the same, with shorter runs (the test command's)
#   scripts/cluster-test.sh --runs 110      a soak: the kinds in turn, 10 runs each
#   scripts/cluster-test.sh --only pause    one kind only; --keep keeps every run's history
#
# Other flags go to `shardline-cluster campaign` (see `--help`). Exit status 1 when the
# checker found a violation; the offending runs' histories are kept under --work.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh etcd protoc faketime >/dev/null
target=${CARGO_TARGET_DIR:-target}
# The short form reuses the debug build the test command has already made of the etcd
# client; the nodes spend their time waiting, not computing, so the profile does not matter
# to the faults.
profile=release
for a in "$@"; do [ "$a" = --quick ] && profile=debug; done
if [ "$profile" = release ]; then
  cargo build -q --release -p shardline-cluster
else
  cargo build -q -p shardline-cluster
fi
exec "$target/$profile/shardline-cluster" campaign --work "$target/cluster-campaign-$profile" "$@"
