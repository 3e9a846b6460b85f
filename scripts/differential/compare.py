#!/usr/bin/env python3
"""Replays differential vectors through `shardline decide` and compares every field of `expect`.

usage: compare.py SHARDLINE_BINARY SAVE_DIR VECTORS.json [VECTORS.json ...]

For each vector: `region`, `pending` and `error` must be equal; `shards` equal as sorted lists;
`shardsInOrder` (actor-ts) equal as lists. Each mismatching vector is saved whole as
SAVE_DIR/<id>.json, so `shardline decide < SAVE_DIR/<id>.json` reproduces it.
Prints `differential: N passed, M failed` last and exits 1 on any failure.
"""

import json
import os
import subprocess
import sys

MAX_SHOWN = 25


def decide(binary, vectors):
    """Decides all vectors in one call; if shardline rejects the batch, one by one."""
    run = subprocess.run(
        [binary, "decide"], input=json.dumps(vectors), capture_output=True, text=True
    )
    if run.returncode == 0:
        out = json.loads(run.stdout)
        if len(out) == len(vectors):
            return out
    results = []
    for v in vectors:
        one = subprocess.run(
            [binary, "decide"], input=json.dumps(v), capture_output=True, text=True
        )
        if one.returncode == 0:
            results.append(json.loads(one.stdout)[0])
        else:
            msg = (one.stderr.strip() or one.stdout.strip())[-400:]
            results.append({"shardlineFailed": f"exit {one.returncode}: {msg}"})
    return results


def differences(expect, actual):
    diffs = []
    if "shardlineFailed" in actual:
        return [f"shardline rejected the vector: {actual['shardlineFailed']}"]
    for key, want in expect.items():
        got = actual.get(key)
        if key == "shards":
            same = isinstance(got, list) and sorted(got) == sorted(want)
        else:
            same = got == want
        if not same:
            diffs.append(f"{key}: expected {json.dumps(want, ensure_ascii=False)}"
                         f" != shardline {json.dumps(got, ensure_ascii=False)}")
    if not diffs:
        # an answer of another kind (e.g. a region where Pekko keeps retrying) is a difference too
        extra = {k for k in ("region", "pending", "error") if k in actual} - set(expect)
        for key in sorted(extra):
            diffs.append(f"{key}: expected none, shardline {json.dumps(actual[key])}")
    return diffs


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    binary, save_dir, files = argv[1], argv[2], argv[3:]
    os.makedirs(save_dir, exist_ok=True)
    passed = failed = 0
    shown = 0
    by_kind = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            vectors = json.load(f)
        results = decide(binary, vectors)
        for v, actual in zip(vectors, results):
            diffs = differences(v["expect"], actual)
            kind = f"{v['strategy']['kind']} {v['op']}"
            tally = by_kind.setdefault(kind, [0, 0])
            if not diffs:
                passed += 1
                tally[0] += 1
                continue
            failed += 1
            tally[1] += 1
            saved = os.path.join(save_dir, f"{v['id']}.json")
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(v, f, indent=1)
                f.write("\n")
            if shown < MAX_SHOWN:
                shown += 1
                print(f"MISMATCH {v['id']} ({kind}; {v['source']})")
                for d in diffs:
                    print(f"  {d}")
                print(f"  vector: {saved}")
            elif shown == MAX_SHOWN:
                shown += 1
                print(f"... further mismatches are saved under {save_dir} only")
    for kind in sorted(by_kind):
        ok, bad = by_kind[kind]
        print(f"  {kind:40s} {ok:5d} passed {bad:5d} failed")
    print(f"differential: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
