"""least-load's inputs through AllocationState's setters: every least-load vector decided on a
state built call by call gives the vector's answer, and bad input is named."""

import pytest

import shardline
from conftest import load_vectors


def state_of(v):
    """The vector's state, built with the object API instead of `decide`."""
    regions = v["regions"]
    state = shardline.AllocationState(regions[0]["address"])
    for r in regions:
        state.add_member(r["address"])
    for r in regions:
        state.add_region(r["region"], r["address"])
        for shard in r.get("shards", []):
            state.add_shard(r["region"], shard)
        if "capacity" in r:
            state.set_region_capacity(r["region"], r["capacity"])
        if "tags" in r:
            state.set_region_tags(r["region"], r["tags"])
        if "maxShards" in r:
            state.set_region_max_shards(r["region"], r["maxShards"])
        if r.get("draining"):
            state.set_region_draining(r["region"], True)
    for shard, load in v.get("loads", {}).items():
        state.set_shard_load(shard, load)
    for shard, rule in v.get("shardRules", {}).items():
        state.set_shard_rule(shard, rule.get("tags", ()), rule.get("pin"))
    return state


DECISIONS = [v for v in load_vectors("least-load.json") if v["op"] in ("allocate", "rebalance")]


@pytest.mark.parametrize("v", DECISIONS, ids=[v["id"] for v in DECISIONS])
def test_setters_decide_as_the_vector(v):
    state = state_of(v)
    strategy = shardline.Strategy(v["strategy"])
    if v["op"] == "allocate":
        want = None if v["expect"].get("pending") else v["expect"]["region"]
        assert strategy.allocate(state, v["shardId"], v.get("requester")) == want
    else:
        assert strategy.rebalance(state, v["rebalanceInProgress"]) == v["expect"]["shards"]


def test_setters_matter_and_bad_input_is_named():
    v = next(v for v in DECISIONS if v["id"] == "least-load-alloc-capacity")
    state = state_of(v)
    strategy = shardline.Strategy(v["strategy"])
    assert strategy.allocate(state, "x") == "regionB"
    state.set_region_capacity("regionB", 1)
    assert strategy.allocate(state, "x") == "regionA", "back to fewest shards"
    state.set_shard_rule("x", pin="regionB")
    assert strategy.allocate(state, "x") == "regionB"
    state.set_shard_rule("x")
    with pytest.raises(shardline.InvalidArgumentError, match='load of shard "a1"'):
        state.set_shard_load("a1", float("nan"))
    with pytest.raises(shardline.ShardlineError, match="nope"):
        state.set_region_draining("nope", True)
    assert strategy.allocate(state, "x") == "regionA", "a refused change changed nothing"
