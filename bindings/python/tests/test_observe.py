"""The bridges: notices to logging, metrics to a Prometheus registry."""

import logging

import prometheus_client as prometheus

import shardline
from shardline.observe import MetricsCollector, log_notices

from test_coordination import NODE, allocating_coordinator


def test_notices_become_log_records_with_their_explanations(caplog):
    c = allocating_coordinator()
    notices = [o["notice"] for o in c.drain_outputs() if o["type"] == "notice"]
    with caplog.at_level(logging.INFO, logger="shardline"):
        log_notices(notices, node="n0")
        log_notices([{"type": "handOffTimedOut", "shard": "3", "region": "r2"}])
    allocated = [r for r in caplog.records if r.shardline_notice["type"] == "allocated"]
    assert len(allocated) == 1 and allocated[0].levelno == logging.INFO
    assert allocated[0].getMessage().startswith("shardline allocated node=n0 {")
    assert '"shard": "7"' in allocated[0].getMessage()
    assert allocated[0].shardline_notice["explanation"]["op"] == "allocate"
    assert allocated[0].shardline_context == {"node": "n0"}
    [timed_out] = [r for r in caplog.records if r.shardline_notice["type"] == "handOffTimedOut"]
    assert timed_out.levelno == logging.WARNING


def test_the_warnings_are_the_notices_the_core_marks(caplog):
    # The set comes from the wire schema: a refused input or command is a warning too.
    with caplog.at_level(logging.INFO, logger="shardline"):
        log_notices([
            {"type": "inputRefused", "input": "reportLoads", "reason": "negative load"},
            {"type": "commandRefused", "region": "r1", "command": "updateOffer", "reason": "x"},
            {"type": "registered", "token": 1},
        ])
    levels = {r.shardline_notice["type"]: r.levelno for r in caplog.records}
    assert levels == {
        "inputRefused": logging.WARNING,
        "commandRefused": logging.WARNING,
        "registered": logging.INFO,
    }
    assert shardline.observe.WARNING_NOTICES == shardline.wire.WARNING_NOTICES


def test_metrics_reach_a_prometheus_registry():
    c = allocating_coordinator()
    region = shardline.Region("r1", NODE(1), {"kind": "pekko", "numberOfShards": 12})
    registry = prometheus.CollectorRegistry()
    registry.register(MetricsCollector().add(c, node="n0").add(region, node="n1"))
    text = prometheus.generate_latest(registry).decode()
    assert 'shardline_coordinator_allocations_total{node="n0"} 1.0' in text
    assert 'shardline_coordinator_shards{node="n0",shardline_region="r1"} 1.0' in text
    types = {f.name: f.type for f in registry.collect()}
    assert types["shardline_coordinator_allocations"] == "counter"
    assert types["shardline_coordinator_shards"] == "gauge"
    assert 'shardline_region_registered{node="n1",shardline_region="r1"} 0.0' in text
    assert registry.get_sample_value("shardline_coordinator_active", {"node": "n0"}) == 1.0
