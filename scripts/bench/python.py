#!/usr/bin/env python3
"""Per-call cost of the Python binding on the standard overhead workload (BENCHMARKS.md):
allocate on a 10-region x 1000-shard state, and one coordinator step (GetShardHome for an
allocated shard, outputs drained), and the binding's cheapest call: a native method taking one
handle and answering an integer (`AllocationState._region_count`, behind `region_count`), which
issue 18 bounds allocate's extra cost by. The Rust baseline for the same calls is the criterion bench
`core/benches/overhead.rs`; scripts/bench.sh reports the difference.

    scripts/bench/python.py [--quick] [--out FILE] [--python INTERPRETER]

Builds the package in release mode into a private venv under the cargo target dir unless
--python names an interpreter that already has shardline installed. Not part of CI.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
VENV = TARGET / "python-bench-venv"

PYTHON_SIDE = r'''
import sys, time, json
N, ROUNDS = int(sys.argv[1]), int(sys.argv[2])
import shardline

def per_call(f, n):
    f()
    best = float("inf")
    for _ in range(ROUNDS):
        t = time.perf_counter_ns()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter_ns() - t) / n)
    return best

node = "pekko://sys@10.0.0.{}:2552".format
strategy = shardline.Strategy("least-shard")
state = shardline.AllocationState(node(0))
for i in range(10):
    state.add_member(node(i))
    state.add_region(f"r{i}", node(i))
for s in range(1000):
    state.add_shard(strategy.allocate(state, str(s)), str(s))
assert strategy.allocate(state, "new") in {f"r{i}" for i in range(10)}
allocate = per_call(lambda: strategy.allocate(state, "new"), N)

c = shardline.Coordinator("least-shard", node(0))
c.start(0)
c.lease_granted(0, 1, 2**63)
c.state_loaded(0, {"snapshot": None, "events": []})
c.member(0, node(1))
reg = {"from": {"region": "r1"}, "to": "coordinator",
       "message": {"command": {"type": "register", "node": node(1)}}}
ask = {"from": {"region": "r1"}, "to": "coordinator",
       "message": {"command": {"type": "getShardHome", "shard": "7"}}}
c.receive(0, reg)
c.receive(0, ask)
c.drain_outputs()
def step():
    c.receive(0, ask)
    return c.drain_outputs()
assert step()[0]["envelope"]["message"]["directive"]["type"] == "shardHome"
coordinator_step = per_call(step, N // 5)
assert state._region_count() == 10
cheapest = per_call(lambda: state._region_count(), N)
print(json.dumps({"allocate": allocate, "coordinator-step": coordinator_step, "cheapest-call": cheapest}))
'''


def bench_venv() -> pathlib.Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    print("python: building the package in release mode ...", file=sys.stderr)
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--force-reinstall", "--no-deps", str(ROOT / "bindings" / "python")],
        check=True,
    )
    return py


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", help="an interpreter that already has shardline installed")
    ap.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    ap.add_argument("--out", help="write the figures JSON fragment here")
    args = ap.parse_args()
    py = args.python or str(bench_venv())
    n, rounds = (100_000, 3) if args.quick else (500_000, 7)
    run = subprocess.run([py, "-c", PYTHON_SIDE, str(n), str(rounds)], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"python: the timed script failed:\n{run.stderr}")
    ns = json.loads(run.stdout)
    figures = [{"name": f"overhead.python.{k}", "value": v, "unit": "ns"} for k, v in ns.items()]
    for f in figures:
        print(f"{f['name']:<34} {f['value']:8.0f} ns")
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps({"figures": figures, "ratios": []}, indent=1) + "\n")


if __name__ == "__main__":
    main()
