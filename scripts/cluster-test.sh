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
#   scripts/cluster-test.sh --python-nodes 1  the first node runs cluster/python/node.py
#   scripts/cluster-test.sh --policy force-reallocate --runs 24  the nodes force timed-out
#                                           hand-offs; the kinds include slow-stop
#   scripts/cluster-test.sh --quick --force-runs 1  one more run, force-reallocate, slow-stop
#
# With --python-nodes and no --python, the Python package is installed into a venv under the
# target dir (a debug build for --quick, release otherwise; --quick reuses
# scripts/test-python.sh's target/python-venv when it has shardline), and the Python node's
# own tests (cluster/python/test_node.py) run before the campaign.
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

python_nodes=0
python=
work=(--work "$target/cluster-campaign-$profile")
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --python-nodes) python_nodes=${args[i + 1]:-0} ;;
    --python-nodes=*) python_nodes=${args[i]#*=} ;;
    --python) python=${args[i + 1]:-} ;;
    --python=*) python=${args[i]#*=} ;;
    # A campaign beside another one (--net-id) needs a --work of its own.
    --work | --work=*) work=() ;;
  esac
done
extra=()
if [ "$python_nodes" != 0 ]; then
  if [ -z "$python" ]; then
    if [ "$profile" = debug ] && "$target/python-venv/bin/python" -c 'import shardline' 2>/dev/null; then
      python="$target/python-venv/bin/python"
    else
      venv="$target/cluster-python-$profile"
      [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
      build=()
      [ "$profile" = debug ] && build=(--config-settings=build-args="--profile dev")
      # The reinstall makes a second run pick up changed sources at the same version.
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --force-reinstall --no-deps "${build[@]}" ./bindings/python
      python="$venv/bin/python"
    fi
    # Absolute, without resolving the venv's symlink (which would leave the venv).
    python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")"
    extra=(--python "$python")
  fi
  "$python" -m unittest -q cluster/python/test_node.py
fi
exec "$target/$profile/shardline-cluster" campaign "${work[@]}" "$@" "${extra[@]}"
