"""Replays tests/vectors with the comparison core/tests/vectors.rs `check` makes."""

import json

import pytest

import shardline
from conftest import load_vectors

KEYS = ("region", "error", "pending", "order", "shards", "shardsInOrder", "rounds")


def check(v, got):
    """Port of core/tests/vectors.rs `check`: a mismatch description, or None."""
    expect = v["expect"]
    vid = v.get("id", "?")
    for key in KEYS:
        if key in expect and got.get(key) != expect[key]:
            return f"{vid}: {key}: expected {expect[key]!r}, got {got.get(key)!r}"
    then = v.get("then")
    if then is not None:
        counts = list(got["then"]["counts"])
        expected = list(then["expectCounts"])
        if then.get("countsSorted"):
            counts.sort()
            expected.sort()
        if counts != expected:
            return f"{vid}: counts after re-allocation: expected {expected}, got {counts}"
        if "expectRegions" in then and got["then"]["regions"] != then["expectRegions"]:
            return f"{vid}: regions after re-allocation differ"
    return None


def cases(name):
    return [pytest.param(v, id=v["id"]) for v in load_vectors(name)]


@pytest.mark.parametrize(
    "vector", cases("pekko-strategies.json") + cases("actor-ts-strategies.json") + cases("least-load.json")
)
def test_vector(vector):
    assert check(vector, shardline.decide(vector)) is None
    explained = shardline.decide(vector, explain=True)
    assert "explanation" in explained
    assert check(vector, explained) is None, "explaining changed the decision"


def test_check_catches_a_wrong_answer():
    v = load_vectors("pekko-strategies.json")[0]
    got = shardline.decide(v)
    wrong = dict(got, region="nowhere") if "region" in got else dict(got, shards=["?"])
    assert check(v, wrong) is not None


def test_whole_file_as_a_list_and_as_json_text():
    all_vectors = load_vectors("actor-ts-strategies.json")
    as_list = shardline.decide(all_vectors)
    assert len(as_list) == len(all_vectors)
    assert shardline.decide(json.dumps(all_vectors)) == as_list
    assert shardline.decide(json.dumps(all_vectors[0])) == as_list[0]


def test_differential_findings_replay(root):
    n = 0
    for path in sorted((root / "scripts" / "differential" / "findings").glob("*.json")):
        doc = json.loads(path.read_text())
        for v in doc if isinstance(doc, list) else [doc]:
            assert check(v, shardline.decide(v)) is None, path.name
            n += 1
    assert n > 0


def test_malformed_vectors_name_the_field():
    v = load_vectors("pekko-strategies.json")[0]
    bad = json.loads(json.dumps(v))
    bad["regions"][1]["address"] = "not an address"
    with pytest.raises(shardline.InvalidArgumentError, match=r"least-01.*regions\[1\]\.address"):
        shardline.decide(bad)
    bad = json.loads(json.dumps(v))
    bad["strategy"]["relativeLimit"] = 1.5
    with pytest.raises(shardline.InvalidArgumentError, match="relativeLimit"):
        shardline.decide(bad)
    with pytest.raises(shardline.InvalidArgumentError, match=r"vector \[0\].*strategy"):
        shardline.decide([{"op": "allocate"}])
    with pytest.raises(shardline.InvalidArgumentError, match="not valid JSON"):
        shardline.decide("{nope")
    with pytest.raises(TypeError):
        shardline.decide({"strategy": object()})


# ---- hashing.json ---------------------------------------------------------------------

HASHING = load_vectors("hashing.json")


@pytest.mark.parametrize(
    "case", HASHING["pekkoHashCodeExtractor"]["values"], ids=lambda c: f"{c['entityId']!r}/{c['numShards']}"
)
def test_pekko_entity_to_shard(case):
    assert shardline.pekko_shard_id(case["entityId"], case["numShards"]) == case["shard"]


@pytest.mark.parametrize(
    "case", HASHING["actorTsHashShardId"]["values"], ids=lambda c: f"{c['entityId']!r}/{c['numShards']}"
)
def test_actor_ts_entity_to_shard(case):
    assert shardline.actor_ts_shard_id(case["entityId"], case["numShards"]) == case["shard"]


def test_murmur_string_hash():
    values = HASHING["pekkoMurmurStringHash"]["values"]
    assert values
    for text, expected in values.items():
        assert shardline.murmur_string_hash(text) == expected, text


def test_ring_nodes():
    for node in HASHING["pekkoRingNodes"]["values"]:
        h = shardline.murmur_string_hash(node["address"])
        assert h == node["nodeHash"]
        assert [shardline.murmur_vnode_hash(h, r) for r in range(1, 11)] == node["vnodeHashes(1..10)"]


def test_rings():
    for case in HASHING["pekkoRings"]["values"]:
        nodes = case["nodes(sorted by Address ordering)"]
        ring = shardline.ConsistentHashRing(nodes, case["virtualNodesFactor"])
        assert [list(p) for p in ring.positions()] == case["ring"]
        for shard, owner in case["nodeFor"].items():
            assert ring.node_for(shard) == owner


def test_entity_functions_reject_bad_counts():
    with pytest.raises(shardline.InvalidArgumentError, match="numberOfShards"):
        shardline.pekko_shard_id("a", 0)
    with pytest.raises(shardline.InvalidArgumentError, match="numShards"):
        shardline.actor_ts_shard_id("a", 0)
    assert shardline.ConsistentHashRing([]).node_for("x") is None
