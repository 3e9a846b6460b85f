"""Randomized vectors decide the same in Python as in `shardline decide` (the Rust CLI)."""

import json
import os
import pathlib
import random
import shutil
import subprocess

import pytest

import shardline

ROOT = pathlib.Path(__file__).resolve().parents[3]
STATUSES = ["Up", "Up", "Up", "Leaving", "Joining", "WeaklyUp", "Exiting"]


def cli():
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "debug" / "shardline"
    if not exe.exists():
        if shutil.which("cargo") is None:
            pytest.skip("no shardline CLI and no cargo to build it")
        subprocess.run(["cargo", "build", "-q", "-p", "shardline-cli"], cwd=ROOT, check=True)
    return exe


def pekko_vector(rng, i, kind):
    n = rng.randint(0, 6)
    addrs = [f"pekko://sys@10.0.0.{k}:2552" for k in range(n)]
    shard_no = iter(range(10_000))
    regions = []
    for k, a in enumerate(addrs):
        shards = [str(next(shard_no)) for _ in range(rng.choice([0, 0, 1, 2, 5, 9, 14]))]
        regions.append({"region": f"r{k}", "address": a, "shards": shards})
    rng.shuffle(regions)  # map order is part of the input
    strategy = {"kind": kind}
    if kind == "least-shard":
        strategy.update(absoluteLimit=rng.randint(1, 8), relativeLimit=rng.choice([0.1, 0.3, 0.5, 1.0]))
        strategy["tieBreakByAge"] = rng.random() < 0.3
    elif kind == "least-shard-legacy":
        strategy.update(rebalanceThreshold=rng.randint(1, 4), maxSimultaneousRebalance=rng.randint(1, 4))
    elif kind == "bounded-load-hashing":
        strategy.update(epsilon=rng.choice([0.1, 0.25, 1.0]), absoluteLimit=rng.randint(1, 8),
                        virtualNodesFactor=rng.choice([1, 10, 100]))
    else:
        strategy.update(rebalanceLimit=rng.randint(-1, 5), virtualNodesFactor=rng.choice([1, 3, 10]))
    v = {"id": f"rand-{i}", "strategy": strategy, "regions": regions}
    if addrs and rng.random() < 0.5:
        v["cluster"] = {
            "self": addrs[0],
            "members": [
                {"address": a, "status": rng.choice(STATUSES), "appVersion": rng.choice(["1.0.0", "1.0.0", "1.1.0"])}
                for a in addrs
            ],
            "unreachable": [a for a in addrs if rng.random() < 0.1],
        }
    allocated = [s for r in regions for s in r["shards"]]
    if rng.random() < 0.5:
        v["op"] = "allocate"
        v["shardId"] = f"new-{rng.randint(0, 999)}"
        if regions and rng.random() < 0.5:
            v["requester"] = rng.choice(regions)["region"]
    else:
        v["op"] = "rebalance"
        v["rebalanceInProgress"] = [s for s in allocated if rng.random() < 0.05]
    return v


def actor_ts_vector(rng, i, kind):
    n = rng.randint(0, 6)
    addrs = [f"sys@{rng.choice(['a', 'B', 'c', 'node'])}{k}:{2550 + k}" for k in range(n)]
    shard_no = iter(range(10_000))
    regions = [
        {"region": a, "address": a, "shards": [str(next(shard_no)) for _ in range(rng.randint(0, 12))]}
        for a in addrs
    ]
    strategy = {"kind": kind}
    if kind == "actor-ts-least-shard":
        strategy.update(rebalanceThreshold=rng.randint(1, 3), maxSimultaneousRebalance=rng.randint(1, 5))
    v = {"id": f"rand-{i}", "strategy": strategy, "regions": regions}
    if addrs and rng.random() < 0.4:
        v["candidates"] = [a for a in addrs if rng.random() < 0.7]
    if rng.random() < 0.5:
        v["op"] = "allocate"
        v["shardId"] = str(rng.randint(0, 999))
    else:
        v["op"] = "rebalance"
    return v


def random_vectors(seed=20261122, count=200):
    rng = random.Random(seed)
    kinds = ["least-shard", "least-shard-legacy", "consistent-hashing", "bounded-load-hashing", "actor-ts-hash", "actor-ts-least-shard"]
    out = []
    for i in range(count):
        kind = kinds[i % len(kinds)]
        make = actor_ts_vector if kind.startswith("actor-ts") else pekko_vector
        out.append(make(rng, i, kind))
    return out


def test_random_vectors_decide_like_the_cli():
    vectors = random_vectors()
    assert len(vectors) == 200
    mine = [shardline.decide(v) for v in vectors]
    run = subprocess.run(
        [str(cli()), "decide"], input=json.dumps(vectors), capture_output=True, text=True, check=True
    )
    theirs = json.loads(run.stdout)
    assert len(theirs) == len(mine)
    for v, a, b in zip(vectors, mine, theirs):
        assert a == b, v["id"]
    # The comparison is not vacuous: the vectors exercise every kind of answer.
    shapes = {next(iter(r)) for r in mine}
    assert {"region", "shards"} <= shapes
    assert any(r.get("shards") for r in mine), "some rebalance moves shards"
    assert any("error" in r or "pending" in r for r in mine)
