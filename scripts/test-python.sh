#!/usr/bin/env bash
# Installs the Python package (a debug build) into a venv under target/, runs its pytest suite
# and the asyncio example. Needs Rust and Python >= 3.10 with pip; maturin comes from PyPI as
# the package's build requirement. Safe to run again: the venv and cargo's cache are reused.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

target=${CARGO_TARGET_DIR:-$root/target}
venv="$target/python-venv"
python=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
py="$venv/bin/python"

# Debug profile: the tests do not need an optimized library and CI has two cores. The etcd
# backends are always built in (pyproject.toml), so protoc must be there; their tests also
# need an etcd, or skip. The reinstall makes a second run pick up changed sources at the same
# version.
bash scripts/install-deps.sh protoc
build_args="--profile dev"
start=$(date +%s)
"$py" -m pip install --quiet --disable-pip-version-check \
    --force-reinstall --no-deps \
    --config-settings=build-args="$build_args" \
    ./bindings/python
"$py" -m pip install --quiet --disable-pip-version-check "pytest>=8" "prometheus-client>=0.17"
echo "python: package built and installed in $(( $(date +%s) - start ))s"

# pytest prints its own "N passed" summary line; the etcd tests (against the etcd the test
# command installed, or SHARDLINE_ETCD_ENDPOINTS) get a line of their own.
report="$target/python-tests.xml"
rm -f "$report"
"$py" -m pytest -q -p no:cacheprovider --junitxml="$report" bindings/python/tests
python3 scripts/junit-summary.py "python etcd" etcd "$report"

"$py" examples/python/actor_system.py
