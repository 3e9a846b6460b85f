"""Load reports, offers and drains through the step API: a region's report changes where
least-load puts a shard, and a drained region's shards move away."""

import pytest

import shardline

from test_coordination import NODE, StepCluster


def entity_of(shard):
    """An entity id the Pekko extractor (12 shards) maps to ``shard``."""
    return next(f"user-{i}" for i in range(10_000) if shardline.pekko_shard_id(f"user-{i}", 12) == shard)


def four_and_four(reported):
    """a hosts shards 0-3, b shards 4-7; with ``reported``, a's shards weigh 5 and b's 1."""
    c = StepCluster("least-load")
    c.settle()
    c.add_region("a", 1)
    c.settle()
    for s in "0123":
        c.regions["a"].route(c.now, entity_of(s), b"x")
    c.settle()
    c.add_region("b", 2)
    c.settle()
    for s in "4567":
        c.regions["b"].route(c.now, entity_of(s), b"x")
    c.settle()
    assert c.hosted == {"a": set("0123"), "b": set("4567")}
    if reported:
        c.regions["a"].report_loads(c.now, {s: 5.0 for s in "0123"})
        c.regions["b"].report_loads(c.now, {s: 1 for s in "4567"})
        c.settle()
    return c


@pytest.mark.parametrize("reported, home", [(False, "a"), (True, "b")])
def test_a_load_report_changes_where_least_load_puts_a_shard(reported, home):
    c = four_and_four(reported)
    c.regions["a"].route(c.now, entity_of("8"), b"x")
    c.settle()
    # Counted by shards the two are even and map order picks a; a's load sends it to b.
    assert c.coordinator.home_of("8") == home
    assert ("loads" in c.coordinator.snapshot()) == reported


def test_a_drained_region_gives_its_shards_away_and_bad_loads_are_named():
    c = four_and_four(False)
    c.coordinator.drain(c.now, "a")
    c.advance(5_000)
    assert c.hosted["a"] == set()
    assert c.coordinator.snapshot()["regions"][0]["draining"] is True
    c.coordinator.undrain(c.now, "a")
    assert "draining" not in c.coordinator.snapshot()["regions"][0]
    with pytest.raises(shardline.InvalidArgumentError, match=r"loads\.1: expected a finite number >= 0, got -1"):
        c.regions["a"].report_loads(c.now, {"1": -1})
    with pytest.raises(shardline.InvalidArgumentError, match="capacity: expected a finite number > 0"):
        c.regions["a"].update_offer(c.now, capacity=0)
    plain = StepCluster()
    plain.settle()
    plain.add_region("a", 1)
    plain.settle()
    with pytest.raises(shardline.InvalidStateError, match="strategy least-shard does not drain"):
        plain.coordinator.drain(plain.now, "a")
