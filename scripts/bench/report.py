#!/usr/bin/env python3
"""Renders bench-results.json as the grouped Markdown tables BENCHMARKS.md quotes.

    scripts/bench/report.py [bench-results.json] [--quality RUN_DIR/quality.md]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys


def t(ns):
    """A time in ns, in a readable unit."""
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def rate(x):
    if x is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}/s"
    return f"{x:.3g}/s"


def size_key(s):
    m = re.match(r"R(\d+)_S(\d+)", s)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results", nargs="?", default="bench-results.json")
    ap.add_argument("--quality", help="the run's quality.md, appended as is")
    args = ap.parse_args()
    doc = json.loads(pathlib.Path(args.results).read_text())
    fig = {f["name"]: f["value"] for f in doc["figures"]}
    out = []

    out.append("### Targets\n")
    out.append(table(["target", "goal", "measured", "met"],
                     [[x["target"], x["goal"], "-" if x["value"] is None else f"{x['value']:,.4g}",
                       {True: "yes", False: "**no**", None: "-"}[x["met"]]] for x in doc["targets"]]))

    # Core strategies: rows (strategy, op), columns sizes.
    strat = {}
    for name, v in fig.items():
        m = re.match(r"core\.([a-z-]+)\.(allocate|rebalance-steady|rebalance-join)\.(R\d+_S\d+)$", name)
        if m:
            strat.setdefault((m.group(1), m.group(2)), {})[m.group(3)] = v
    if strat:
        sizes = sorted({s for d in strat.values() for s in d}, key=size_key)
        out.append("\n### Core: allocate and rebalance (criterion, median per call)\n")
        out.append(table(["strategy", "op"] + [s.replace("_", " ") for s in sizes],
                         [[k[0], k[1]] + [t(d.get(s)) for s in sizes] for k, d in sorted(strat.items())]))

    rows = []
    for name, v in sorted(fig.items()):
        if name.endswith(".per_s") and name.startswith(("core.coordinator", "core.region", "core.snowflake", "core.sim")):
            base = name[: -len(".per_s")]
            rows.append([base[len("core."):], rate(v), t(fig.get(base + ".per_op"))])
    if rows:
        out.append("\n### Core: throughput (criterion)\n")
        out.append(table(["bench", "rate", "per op"], rows))

    mem = [[n[len("core.memory."):], f"{v:,.0f}"] for n, v in sorted(fig.items()) if n.startswith("core.memory.")]
    if mem:
        out.append("\n### Core: memory per shard (R = 100 regions, or as named)\n")
        out.append(table(["figure", "bytes per shard"], mem))

    scale = []
    for name, growth in sorted(fig.items()):
        if not name.startswith("scale.growth."):
            continue
        op = name[len("scale.growth."):]
        big = fig.get("core." + op)
        size = next(s for s in ("R10000_S1000000", "S1000000") if op.endswith(s))
        stem = op[: -len(size)]
        base_size = next((b for b in ("R1000_S100000", "R100_S100000", "S100000") if "core." + stem + b in fig), None)
        unit = (lambda v: f"{v:,.1f} B") if op.startswith("memory.") else t
        scale.append([stem.rstrip("./"), base_size.replace("_", " "), unit(fig["core." + stem + base_size]), unit(big), f"{growth:,.1f}x"])
    if scale:
        out.append("\n### Scale run: S = 1M shards over R = 10,000 regions, against the default size (same run)\n")
        out.append(table(["operation", "default size", "at default size", "at S 1M R 10k", "growth"], scale))

    # JVM side by side.
    jvm = {}
    for name, v in fig.items():
        m = re.match(r"jvm\.([a-z-]+)\.(allocate|rebalance)\.([a-z-]+)\.(R\d+_S\d+)$", name)
        if m:
            jvm.setdefault((m.group(1), m.group(2), m.group(4)), {})[m.group(3)] = v
    if jvm:
        impls = ["pekko", "adapter", "adapter-changed", "jni", "inprocess"]
        out.append("\n### JVM: Pekko 1.7.0 vs shardline, same inputs, one run (JMH, time per call; speedup = Pekko / shardline)\n")
        rows = []
        for (s, op, size), d in sorted(jvm.items(), key=lambda kv: (kv[0][0], kv[0][1], size_key(kv[0][2]))):
            p = d.get("pekko")
            cells = [t(p)]
            for i in impls[1:]:
                v = d.get(i)
                cells.append("-" if v is None else f"{t(v)} ({p / v:,.0f}x)" if p else t(v))
            rows.append([s, op, size.replace("_", " ")] + cells)
        out.append(table(["strategy", "op", "size"] + impls, rows))

    over = []
    for lang in ("rust", "c", "python", "node", "jvm"):
        a, c = fig.get(f"overhead.{lang}.allocate"), fig.get(f"overhead.{lang}.coordinator-step")
        if a is None and c is None:
            continue
        over.append([lang, t(a), t(fig.get(f"overhead.{lang}.allocate.extra")) if lang != "rust" else "-",
                     t(c), t(fig.get(f"overhead.{lang}.coordinator-step.extra")) if lang != "rust" else "-",
                     t(fig.get(f"overhead.{lang}.cheapest-call"))])
    if over:
        out.append("\n### Binding overhead (standard workload)\n")
        out.append(table(["language", "allocate", "extra over Rust", "coordinator step", "extra over Rust", "cheapest call"], over))

    if args.quality:
        out.append("\n### Placement quality (`shardline sim`)\n")
        out.append(pathlib.Path(args.quality).read_text())
    sys.stdout.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
