#!/usr/bin/env python3
"""Rust lines in each binding against the core's, the measure issue 13's "0.35x" goal uses.

A line counts when it is neither blank nor a `//` comment and comes before a file's first
`#[cfg(test)]`; files named tests.rs are test code and do not count.
Usage: scripts/binding-lines.py [--files]   (run from anywhere; prints one JSON object)
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINDINGS = ["bindings/python/src", "bindings/node/src", "bindings/java/src"]


def lines(path):
    n = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if s.startswith("#[cfg(test)]"):
                break
            if s and not s.startswith("//"):
                n += 1
    return n


def tree(rel, per_file):
    total = 0
    for dirpath, _, names in os.walk(os.path.join(ROOT, rel)):
        for name in sorted(names):
            if name.endswith(".rs") and name != "tests.rs":
                path = os.path.join(dirpath, name)
                n = lines(path)
                per_file[os.path.relpath(path, ROOT)] = n
                total += n
    return total


per_file = {}
core = tree("core/src", per_file)
bindings = {b.split("/")[1]: tree(b, per_file) for b in BINDINGS}
out = {
    "core": core,
    **bindings,
    "bindings": sum(bindings.values()),
    "ratio": round(sum(bindings.values()) / core, 3),
}
if "--files" in sys.argv:
    out["files"] = dict(sorted(per_file.items(), key=lambda kv: -kv[1]))
print(json.dumps(out))
