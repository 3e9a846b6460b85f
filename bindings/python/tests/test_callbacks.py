"""Python code called from shardline: custom strategies and driver hosts. Exceptions come out
unchanged; re-entry is an error, not a deadlock."""

import traceback

import pytest

import shardline


def cluster_state(n=3, shards=None):
    st = shardline.AllocationState("pekko://sys@h0:1")
    for i in range(n):
        st.add_member(f"pekko://sys@h{i}:1")
        st.add_region(f"r{i}", f"pekko://sys@h{i}:1")
    for region, ids in (shards or {}).items():
        for s in ids:
            st.add_shard(region, s)
    return st


class Fewest:
    """Allocates to the region with the fewest shards; moves one shard off the fullest."""

    name = "fewest"

    def __init__(self):
        self.calls = []

    def allocate(self, state, shard, requester):
        self.calls.append(("allocate", shard, requester))
        if getattr(self, "strategy", None) is not None:
            assert self.strategy.name == "fewest"  # readable from inside its own callback
        return min(state.regions(), key=lambda r: (r.shard_count, r.id)).id

    def rebalance(self, state, in_progress):
        self.calls.append(("rebalance", sorted(in_progress)))
        regions = state.regions()
        most = max(regions, key=lambda r: r.shard_count)
        least = min(regions, key=lambda r: r.shard_count)
        if most.shard_count - least.shard_count > 1:
            return [s for s in most.shards if s not in in_progress][:1]
        return []


def test_custom_strategy_decides_and_explains():
    st = cluster_state(shards={"r0": ["a", "b", "c"], "r1": ["d"]})
    impl = Fewest()
    s = impl.strategy = shardline.Strategy(impl)
    assert s.kind == "custom" and s.name == "fewest" and s.config is None
    assert s.allocate(st, "x", requester="r1") == "r2"
    assert s.rebalance(st, in_progress={"a"}) == ["b"]
    region, explanation = s.explain_allocate(st, "y")
    assert region == "r2" and explanation["strategy"] == "fewest" and explanation["op"] == "allocate"
    assert impl.calls[:2] == [("allocate", "x", "r1"), ("rebalance", ["a"])]
    assert shardline.Strategy.custom(impl, name="other").name == "other"


def test_allocate_may_defer_and_rebalance_is_optional():
    class Later:
        def allocate(self, state, shard, requester):
            return None

    s = shardline.Strategy(Later())
    assert s.allocate(cluster_state(), "x") is None
    assert s.rebalance(cluster_state()) == []


def test_custom_strategy_may_delegate_to_a_builtin():
    least = shardline.Strategy("least-shard")

    class Wrapper:
        def allocate(self, state, shard, requester):
            return least.allocate(state, shard, requester)

    st = cluster_state(shards={"r0": ["a"], "r1": ["b"]})
    assert shardline.Strategy(Wrapper()).allocate(st, "x") == "r2"


def test_exception_in_callback_comes_out_unchanged():
    boom = LookupError("no such rack")

    class Raises:
        def allocate(self, state, shard, requester):
            raise boom

    s = shardline.Strategy(Raises())
    with pytest.raises(LookupError) as info:
        s.allocate(cluster_state(), "x")
    assert info.value is boom
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "allocate" in frames, frames
    # The object stays usable, and the kept exception does not leak into the next call.
    ok = shardline.Strategy("least-shard")
    assert ok.allocate(cluster_state(), "x") == "r0"
    with pytest.raises(LookupError):
        s.allocate(cluster_state(), "y")


def test_reentering_the_running_strategy_is_an_error_not_a_deadlock():
    holder = {}

    class Reenters:
        def allocate(self, state, shard, requester):
            return holder["s"].allocate(state, shard)

    holder["s"] = s = shardline.Strategy(Reenters())
    with pytest.raises(shardline.ReentrantCallError, match="own callbacks"):
        s.allocate(cluster_state(), "x")


def test_the_lent_state_is_read_only_and_expires():
    kept = {}

    class Mutates:
        def allocate(self, state, shard, requester):
            kept["view"] = state
            assert state.is_view
            state.add_shard("r0", shard)

    with pytest.raises(shardline.ReentrantCallError, match="read-only"):
        shardline.Strategy(Mutates()).allocate(cluster_state(), "x")
    with pytest.raises(shardline.InvalidStateError, match="has returned"):
        kept["view"].regions()


def test_the_callers_state_cannot_be_touched_from_the_callback():
    st = cluster_state()

    class TouchesOriginal:
        def allocate(self, state, shard, requester):
            st.add_shard("r0", shard)

    with pytest.raises(shardline.ReentrantCallError):
        shardline.Strategy(TouchesOriginal()).allocate(st, "x")
    assert st.shard_count == 0


def test_custom_strategy_in_a_coordinator_and_its_exceptions():
    impl = Fewest()
    c = shardline.Coordinator(impl, "pekko://sys@h0:1")
    lease = shardline.InMemoryLease("c", 10_000)
    store = shardline.InMemoryStore()
    c.start(0)
    pump(c, 0, lease, store)
    assert c.is_active
    c.member(0, "pekko://sys@h1:1")
    c.receive(0, {"from": {"region": "r1"}, "to": "coordinator",
                  "message": {"command": {"type": "register", "node": "pekko://sys@h1:1"}}})
    c.receive(0, {"from": {"region": "r1"}, "to": "coordinator",
                  "message": {"command": {"type": "getShardHome", "shard": "7"}}})
    pump(c, 0, lease, store)
    assert c.home_of("7") == "r1"
    assert ("allocate", "7", "r1") in impl.calls

    err = RuntimeError("strategy down")

    def broken(state, shard, requester):
        raise err

    impl.allocate = broken
    with pytest.raises(RuntimeError) as info:
        c.receive(0, {"from": {"region": "r1"}, "to": "coordinator",
                      "message": {"command": {"type": "getShardHome", "shard": "8"}}})
    assert info.value is err
    notices = [o["notice"] for o in c.drain_outputs() if o["type"] == "notice"]
    assert any(n["type"] == "allocationFailed" and n["shard"] == "8" for n in notices)


def pump(c, now, lease, store):
    """Carries out a step coordinator's outputs against the in-memory backends."""
    sent = []
    while (o := c.poll_output()) is not None:
        t = o["type"]
        if t == "lease" and o["request"] == {"type": "acquire"}:
            g = lease.acquire(now)
            c.lease_granted(now, *g) if g else c.lease_denied(now)
        elif t == "loadState":
            c.state_loaded(now, store.load(o["token"]))
        elif t == "persist":
            assert store.append(o["token"], o["record"])
        elif t == "saveSnapshot":
            assert store.save_snapshot(o["token"], o["snapshot"])
        elif t == "send":
            sent.append(o["envelope"])
    return sent


# ---- driver hosts ----------------------------------------------------------------------


class Host:
    def __init__(self):
        self.log = []
        self.driver = None

    def start_shard(self, shard, entities):
        self.log.append(("start", shard))

    def deliver(self, shard, entity, payload):
        self.log.append((entity, payload))

    def stop_shard(self, shard):
        self.log.append(("stop", shard))


def region_driver(transport, host, clock=None):
    return shardline.RegionDriver(
        "r1", "pekko://sys@h1:1", lambda entity: entity[0],
        transport=transport, clock=clock or shardline.ManualClock(0), host=host,
    )


def test_transport_exception_propagates_after_the_outputs_are_carried_out():
    err = ConnectionError("network down")
    attempts = []

    def send(envelope):
        attempts.append(envelope)
        raise err

    d = region_driver(send, Host())
    with pytest.raises(ConnectionError) as info:
        d.start()
    assert info.value is err
    assert attempts and attempts[0]["message"]["command"]["type"] == "register"
    # The first exception wins; later ones in the same call are dropped, and the message
    # itself was kept although asking for its shard's home failed.
    with pytest.raises(ConnectionError):
        d.route("x1", b"hi")
    assert d.buffered == 1


def test_host_callback_that_reenters_its_driver_gets_reentrant_call_error():
    sent = []
    host = Host()

    def stop_and_report(shard):
        host.driver.shard_stopped(shard)  # must not re-enter; return True instead

    host.stop_shard = stop_and_report
    d = host.driver = region_driver(sent.append, host)
    d.start()
    ack = {"from": "coordinator", "to": {"region": "r1"},
           "message": {"directive": {"type": "registerAck", "token": 1}}}
    d.receive(ack)
    d.receive({"from": "coordinator", "to": {"region": "r1"},
               "message": {"directive": {"type": "hostShard", "shard": "a",
                                          "stamp": {"token": 1, "version": 1}}}})
    assert d.running_shards() == ["a"]
    with pytest.raises(shardline.ReentrantCallError):
        d.receive({"from": "coordinator", "to": {"region": "r1"},
                   "message": {"directive": {"type": "handOff", "shard": "a",
                                              "stamp": {"token": 1, "version": 2}}}})


def test_python_lease_and_store_objects_drive_a_coordinator():
    class Lease:
        def __init__(self):
            self.calls = []

        def acquire(self, now_ms):
            self.calls.append("acquire")
            return (5, now_ms + 10_000)

        def renew(self, token, now_ms):
            self.calls.append("renew")
            return now_ms + 10_000

        def release(self, token):
            self.calls.append(("release", token))

    class Store:
        def __init__(self):
            self.events = []

        def append(self, token, record):
            self.events.append(record)
            return True

        def save_snapshot(self, token, snapshot):
            return True

        def load(self, token):
            return {"snapshot": None, "events": []}

    lease, store, sent = Lease(), Store(), []
    clock = shardline.ManualClock(100)
    d = shardline.CoordinatorDriver("least-shard", "pekko://sys@h0:1", transport=sent.append,
                                    clock=clock, lease=lease, store=store)
    d.start()
    assert d.is_active and d.token == 5
    assert any(n["type"] == "active" for n in d.take_notices())
    d.receive({"from": {"region": "r0"}, "to": "coordinator",
               "message": {"command": {"type": "register", "node": "pekko://sys@h0:1"}}})
    assert store.events[-1]["event"] == {"type": "shardRegionRegistered", "region": "r0",
                                         "node": "pekko://sys@h0:1"}
    assert sent[-1]["message"]["directive"]["type"] == "registerAck"
    d.stop()
    assert ("release", 5) in lease.calls

    def bad_acquire(now_ms):
        return "yes"

    lease.acquire = bad_acquire
    d2 = shardline.CoordinatorDriver("least-shard", "pekko://sys@h0:1", transport=sent.append,
                                     clock=clock, lease=lease, store=store)
    with pytest.raises(shardline.CallbackFailedError, match="expected None or"):
        d2.start()
    assert not d2.is_active
