#!/usr/bin/env bash
# Installs the Python package (a debug build) into a venv under target/, runs its pytest suite
# and the asyncio examples (one on etcd). Needs Rust and Python >= 3.10 with pip; maturin comes
# from PyPI as the package's build requirement. Safe to run again: the venv and cargo's cache
# are reused. The etcd tests and example use SHARDLINE_ETCD_ENDPOINTS, or a throw-away etcd on
# loopback started here.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. scripts/etcd-lib.sh

target=${CARGO_TARGET_DIR:-$root/target}
venv="$target/python-venv"
python=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
py="$venv/bin/python"

# Debug profile: the tests do not need an optimized library and CI has two cores. The etcd
# backends are always built in (pyproject.toml), so protoc must be there. The reinstall makes
# a second run pick up changed sources at the same version.
bash scripts/install-deps.sh protoc etcd
build_args="--profile dev"
start=$(date +%s)
"$py" -m pip install --quiet --disable-pip-version-check \
    --force-reinstall --no-deps \
    --config-settings=build-args="$build_args" \
    ./bindings/python
"$py" -m pip install --quiet --disable-pip-version-check "pytest>=8" "prometheus-client>=0.17"
echo "python: package built and installed in $(( $(date +%s) - start ))s"

if [ -z "${SHARDLINE_ETCD_ENDPOINTS:-}" ]; then
    trap etcd_stop EXIT
    etcd_start
    export SHARDLINE_ETCD_ENDPOINTS=$ETCD_ENDPOINT
fi

# pytest prints its own "N passed" summary line; the etcd tests get a line of their own.
report="$target/python-tests.xml"
rm -f "$report"
"$py" -m pytest -q -p no:cacheprovider --junitxml="$report" bindings/python/tests
python3 scripts/junit-summary.py "python etcd" etcd "$report"

"$py" examples/python/actor_system.py
"$py" examples/python/etcd_service.py
