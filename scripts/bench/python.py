#!/usr/bin/env python3
"""Per-call overhead of the Python binding: allocate and a coordinator step, timed through
Python and compared with the same calls made directly in Rust
(bindings/python/benches/overhead.rs, a criterion bench).

    python3 scripts/bench_python.py            # release build into target/python-bench-venv
    python3 scripts/bench_python.py --no-rust  # Python side only

Not part of CI: it builds in release mode and takes a few minutes the first time.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
VENV = TARGET / "python-bench-venv"

PYTHON_SIDE = r'''
import sys, time, json
import shardline

def per_call(f, n):
    f()
    best = float("inf")
    for _ in range(5):
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
allocate = per_call(lambda: strategy.allocate(state, "new"), 200_000)

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
coordinator_step = per_call(step, 100_000)
noop = per_call(lambda: None, 200_000)
print(json.dumps({"allocate": allocate, "coordinator-step": coordinator_step, "python-noop-call": noop}))
'''


def bench_venv() -> pathlib.Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    print("building the package in release mode ...", file=sys.stderr)
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--force-reinstall", "--no-deps", str(ROOT / "bindings" / "python")],
        check=True,
    )
    return py


def rust_side() -> dict[str, float]:
    print("running cargo bench -p shardline-python --bench overhead ...", file=sys.stderr)
    out = subprocess.run(
        ["cargo", "bench", "-q", "-p", "shardline-python", "--bench", "overhead"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    unit = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6}
    found = {}
    for name, mid, u in re.findall(r"^(\S+)\s+time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", out, re.M):
        found[name] = float(mid) * unit[u]
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", help="an interpreter that already has shardline installed")
    ap.add_argument("--no-rust", action="store_true", help="skip the Rust side")
    args = ap.parse_args()
    py = args.python or str(bench_venv())
    import json

    py_ns = json.loads(subprocess.run([py, "-c", PYTHON_SIDE], check=True, capture_output=True,
                                      text=True).stdout)
    rust_ns = {} if args.no_rust else rust_side()
    print(f"{'call':<18} {'python ns':>10} {'rust ns':>10} {'overhead ns':>12}")
    for name in ("allocate", "coordinator-step"):
        r = rust_ns.get(name)
        rs = f"{r:10.0f}" if r is not None else f"{'-':>10}"
        ov = f"{py_ns[name] - r:12.0f}" if r is not None else f"{'-':>12}"
        print(f"{name:<18} {py_ns[name]:10.0f} {rs} {ov}")
    print(f"(an empty Python lambda call costs {py_ns['python-noop-call']:.0f} ns here)")


if __name__ == "__main__":
    start = time.time()
    main()
    print(f"({time.time() - start:.0f} s)", file=sys.stderr)
