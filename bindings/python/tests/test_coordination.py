"""The coordinator and region state machines through both APIs: stepped by hand, and run by
the callback drivers over an in-process network."""

from collections import deque

import pytest

import shardline

NODE = "pekko://sys@h{}:2552".format
SHARDS = {"kind": "pekko", "numberOfShards": 12}


class StepCluster:
    """One step coordinator and step regions; the test plays the host for all of them."""

    def __init__(self, strategy="least-shard", via="receive"):
        self.now = 0
        self.via = via  # "handle": envelopes go in as step documents, read the general way
        self.sent = []
        self.lease = shardline.InMemoryLease("c", 30_000)
        self.store = shardline.InMemoryStore()
        self.coordinator = shardline.Coordinator(strategy, NODE(0), {"rebalance_interval_ms": 1_000})
        self.regions = {}
        self.wire = deque()
        self.hosted = {}  # region -> set of shards
        self.delivered = []
        self.coordinator.start(self.now)

    def add_region(self, name, node):
        self.coordinator.member(self.now, NODE(node))
        r = shardline.Region(name, NODE(node), SHARDS)
        self.regions[name] = r
        self.hosted[name] = set()
        r.start(self.now)

    def settle(self):
        for _ in range(10_000):
            moved = self._coordinator_outputs() | self._region_outputs()
            while self.wire:
                env = self.wire.popleft()
                self.sent.append(env)
                moved = True
                if env["to"] == "coordinator":
                    self._receive(self.coordinator, env)
                elif env["to"]["region"] in self.regions:
                    self._receive(self.regions[env["to"]["region"]], env)
            if not moved:
                return
        raise AssertionError("did not settle")

    def _receive(self, machine, env):
        if self.via == "handle":
            machine.handle(self.now, {"type": "receive", "envelope": env})
        else:
            machine.receive(self.now, env)

    def _coordinator_outputs(self):
        c, now, moved = self.coordinator, self.now, False
        while (o := c.poll_output()) is not None:
            moved = True
            t = o["type"]
            if t == "send":
                self.wire.append(o["envelope"])
            elif t == "lease":
                req = o["request"]
                if req["type"] == "acquire":
                    g = self.lease.acquire(now)
                    c.lease_granted(now, *g) if g else c.lease_denied(now)
                elif req["type"] == "renew":
                    until = self.lease.renew(req["token"], now)
                    c.lease_renewed(now, req["token"], until) if until else c.lease_lost(now, req["token"])
                else:
                    self.lease.release(req["token"])
            elif t == "loadState":
                c.state_loaded(now, self.store.load(o["token"]))
            elif t == "persist":
                assert self.store.append(o["token"], o["record"])
            elif t == "saveSnapshot":
                assert self.store.save_snapshot(o["token"], o["snapshot"])
        return moved

    def _region_outputs(self):
        moved = False
        for name, r in self.regions.items():
            while (o := r.poll_output()) is not None:
                moved = True
                t = o["type"]
                if t == "send":
                    self.wire.append(o["envelope"])
                elif t == "startShard":
                    self.hosted[name].add(o["shard"])
                elif t == "deliver":
                    self.delivered.append((name, o["shard"], o["entity"], o["payload"]))
                elif t == "stopShard":
                    self.hosted[name].discard(o["shard"])
                    r.shard_stopped(self.now, o["shard"])
        return moved

    def advance(self, ms):
        end = self.now + ms
        while True:
            deadlines = [d for d in [self.coordinator.next_deadline()]
                         + [r.next_deadline() for r in self.regions.values()] if d is not None]
            nxt = min(deadlines, default=None)
            if nxt is None or nxt > end:
                break
            self.now = max(self.now, nxt)
            self.coordinator.on_timeout(self.now)
            for r in self.regions.values():
                r.on_timeout(self.now)
            self.settle()
        self.now = end


def test_step_api_places_routes_and_rebalances():
    c = StepCluster()
    c.settle()
    assert c.coordinator.is_active and c.coordinator.phase == "active"
    c.add_region("a", 1)
    c.add_region("b", 2)
    c.settle()
    assert all(r.is_registered for r in c.regions.values())
    entities = [f"user-{i}" for i in range(60)]
    for i, e in enumerate(entities):
        c.regions["ab"[i % 2]].route(c.now, e, e.encode())
    c.settle()
    assert sorted(x[2] for x in c.delivered) == sorted(entities), "each message delivered once"
    for name, shard, entity, payload in c.delivered:
        assert shardline.pekko_shard_id(entity, 12) == shard
        assert shard in c.hosted[name]
        assert payload == entity.encode()
    homes = c.coordinator.allocations()
    assert sorted(s for v in homes.values() for s in v) == sorted(c.hosted["a"] | c.hosted["b"])

    c.add_region("n", 3)
    c.settle()
    assert not c.hosted["n"]
    c.advance(5_000)  # a few rebalance rounds
    assert c.hosted["n"], "the new region got shards"
    sizes = sorted(len(s) for s in c.hosted.values())
    assert sizes[-1] - sizes[0] <= 1, sizes
    assert c.coordinator.handoffs_in_progress() == []
    before = len(c.delivered)
    for e in entities:
        c.regions["a"].route(c.now, e, b"again")
    c.settle()
    assert len(c.delivered) == before + len(entities)
    for name, shard, entity, payload in c.delivered[before:]:
        assert c.coordinator.home_of(shard) == name


def test_step_outputs_are_plain_dicts_and_envelopes_encode():
    c = StepCluster()
    c.settle()
    r = shardline.Region("x", NODE(1), SHARDS)
    r.start(0)
    [out] = r.drain_outputs()
    assert out["type"] == "send"
    env = out["envelope"]
    assert env == {"from": {"region": "x"}, "to": "coordinator",
                   "message": {"command": {"type": "register", "node": NODE(1)}}}
    assert shardline.decode_envelope(shardline.encode_envelope(env)) == env
    fwd = {"from": {"region": "x"}, "to": {"region": "y"},
           "message": {"forward": {"shard": "1", "entity": "e", "payload": b"\x00\xff"}}}
    assert shardline.decode_envelope(shardline.encode_envelope(fwd).encode()) == fwd
    # On the wire the payload is base64 text; a str that happens to be base64 stays a str.
    assert '"payload":"AP8="' in shardline.encode_envelope(fwd)
    named = {"from": {"region": "x"}, "to": "coordinator",
             "message": {"command": {"type": "getShardHome", "shard": "AP8="}}}
    assert shardline.decode_envelope(shardline.encode_envelope(named)) == named
    assert r.shard_of("user-1") == shardline.pekko_shard_id("user-1", 12)


def test_envelopes_by_known_keys_match_the_general_conversion():
    # `receive` and step outputs convert envelopes by their known keys; `handle` documents and
    # encode/decode_envelope take serde's general way. Both must see the same messages.
    runs = []
    for via in ("receive", "handle"):
        c = StepCluster(via=via)
        c.add_region("a", 1)
        c.add_region("b", 2)
        c.settle()
        for i in range(40):
            c.regions["ab"[i % 2]].route(c.now, f"user-{i}", bytes([i, 255]))
        c.settle()
        c.add_region("n", 3)
        c.advance(5_000)
        runs.append((c.sent, c.delivered))
    assert runs[0] == runs[1]
    sent = runs[0][0]
    for env in sent:
        assert shardline.decode_envelope(shardline.encode_envelope(env)) == env
    kinds = {body.get("type", kind) for e in sent for kind, body in e["message"].items()}
    assert {"register", "getShardHome", "shardStarted", "beginHandOffAck", "shardStopped",
            "registerAck", "shardHome", "hostShard", "beginHandOff", "handOff",
            "forward"} <= kinds, kinds


def test_replies_name_the_shard_asked_about_whatever_ids_came_before():
    # Replies take their id strings from a bounded cache of Python strings; ids that share a
    # slot must still each come back as asked, unicode included.
    c = allocating_coordinator()
    c.drain_outputs()
    frm = {"region": "r1"}
    shards = [f"s-{i}" for i in range(3000)] + ["ünï-çødé", "s-7", "s-0"]
    for shard in shards:
        c.receive(0, {"from": frm, "to": "coordinator",
                      "message": {"command": {"type": "getShardHome", "shard": shard}}})
        [out] = [o for o in c.drain_outputs() if o["type"] == "send"
                 and o["envelope"]["message"]["directive"]["type"] == "shardHome"]
        home = out["envelope"]["message"]["directive"]
        assert (home["shard"], home["region"], out["envelope"]["to"]) == (shard, "r1", frm)
        assert shardline.decode_envelope(shardline.encode_envelope(out["envelope"])) == \
            out["envelope"]


def test_handle_takes_the_step_documents_the_named_methods_build():
    named, generic = (shardline.Coordinator("least-shard", NODE(0)) for _ in range(2))
    for c in (named, generic):
        c.start(0)
        c.drain_outputs()
    named.lease_granted(1, 7, 60_000)
    generic.handle(1, {"type": "leaseGranted", "token": 7, "validUntilMs": 60_000})
    named.member(2, NODE(1), up_number=3)
    generic.handle(2, {"type": "member", "member": {"address": NODE(1), "upNumber": 3}})
    assert named.drain_outputs() == generic.drain_outputs() != []
    assert named.token == generic.token == 7
    r = shardline.Region("x", NODE(1), SHARDS)
    r.handle(0, {"type": "shardStopped", "shard": "1"})
    with pytest.raises(shardline.InvalidArgumentError, match=r"^input\.token: invalid type"):
        generic.handle(3, {"type": "leaseLost", "token": "seven"})
    with pytest.raises(shardline.InvalidArgumentError, match=r"^input\.type: unknown variant `nope`"):
        r.handle(0, {"type": "nope"})


def test_conversion_errors_name_the_field():
    c = shardline.Coordinator("least-shard", NODE(0))
    ask = {"from": {"region": "r1"}, "to": "coordinator",
           "message": {"command": {"type": "getShardHome", "shard": object()}}}
    with pytest.raises(TypeError, match=r"envelope\.message\.command\.shard: cannot carry"):
        c.receive(0, ask)
    ask["message"]["command"]["shard"] = 7
    # The command is read through serde's buffer for `type`-tagged enums, which ends the path.
    wrong = r"envelope\.message\.command: invalid type: integer"
    with pytest.raises(shardline.InvalidArgumentError, match=wrong):
        c.receive(0, ask)
    with pytest.raises(shardline.InvalidArgumentError, match="does not fit 64 bits"):
        c.handle(0, {"type": "leaseLost", "token": 2**64})


def test_coordinator_restores_from_the_store_on_failover():
    c = StepCluster()
    c.settle()
    c.add_region("a", 1)
    c.settle()
    c.regions["a"].route(c.now, "e1", b"x")
    c.settle()
    shard = shardline.pekko_shard_id("e1", 12)
    assert c.coordinator.home_of(shard) == "a"
    snapshot = c.coordinator.snapshot()

    successor = shardline.Coordinator("least-shard", NODE(0))
    successor.member(c.now, NODE(1))
    c.coordinator.stop(c.now)
    c._coordinator_outputs()
    c.coordinator = successor
    successor.start(c.now)
    c.settle()
    assert successor.is_active and successor.token > 1
    assert successor.home_of(shard) == "a"
    assert successor.snapshot()["regions"] == snapshot["regions"]


class Net:
    """An in-process network for drivers: coordinator mail goes to the active coordinator."""

    def __init__(self):
        self.wire = deque()
        self.coordinators = []
        self.regions = {}

    def send(self, envelope):
        self.wire.append(envelope)

    def flush(self):
        while self.wire:
            env = self.wire.popleft()
            if env["to"] == "coordinator":
                for c in self.coordinators:
                    if c.is_active:
                        c.receive(env)
            elif env["to"]["region"] in self.regions:
                self.regions[env["to"]["region"]].receive(env)


class Entities:
    def __init__(self):
        self.shards = set()
        self.got = []

    def start_shard(self, shard, entities):
        self.shards.add(shard)

    def deliver(self, shard, entity, payload):
        self.got.append((entity, payload))

    def stop_shard(self, shard):
        self.shards.discard(shard)
        return True


def test_drivers_fail_over_to_a_contender():
    clock, net = shardline.ManualClock(1_000), Net()
    lease = shardline.InMemoryLease("c1", 30_000)
    store = shardline.InMemoryStore()
    cs = [
        shardline.CoordinatorDriver("least-shard", NODE(0), transport=net.send, clock=clock,
                                    lease=lease if i == 0 else lease.contender(f"c{i + 1}"), store=store)
        for i in range(2)
    ]
    net.coordinators = cs
    for c in cs:
        for i in range(3):
            c.member(NODE(i))
        c.start()
    assert [c.is_active for c in cs] == [True, False]
    hosts = {n: Entities() for n in "ab"}
    for i, n in enumerate("ab", start=1):
        net.regions[n] = shardline.RegionDriver(n, NODE(i), SHARDS, transport=net.send, clock=clock,
                                                host=hosts[n])
        net.regions[n].start()
    net.flush()
    net.regions["b"].route("e1", b"hello")
    net.flush()
    assert [g for h in hosts.values() for g in h.got] == [("e1", b"hello")]

    clock.advance(30_000)  # c1's node hangs: it stops renewing
    cs[1].poll()
    clock.advance(5_000)
    cs[0].poll()
    assert not cs[0].is_active
    assert any(n["type"] == "steppedDown" for n in cs[0].take_notices())
    clock.set(cs[1].next_deadline())
    cs[1].poll()
    assert cs[1].is_active and cs[1].token > 1
    shard = shardline.pekko_shard_id("e1", 12)
    owner = cs[1].home_of(shard)
    assert owner in hosts
    for r in net.regions.values():
        r.coordinator_changed()
    net.flush()
    net.regions["a"].route("e1", b"again")
    net.flush()
    assert hosts[owner].got[-1] == ("e1", b"again")
    assert len(store.contents()["events"]) >= 3


def allocating_coordinator():
    """An active coordinator with decision events on that has just allocated shard 7 to r1."""
    c = shardline.Coordinator("least-shard", NODE(0), {"decisionEvents": True})
    c.start(0)
    c.lease_granted(0, 1, 2**62)
    c.state_loaded(0, {"snapshot": None, "events": []})
    c.member(0, NODE(1))
    frm = {"region": "r1"}
    c.receive(0, {"from": frm, "to": "coordinator",
                  "message": {"command": {"type": "register", "node": NODE(1)}}})
    c.receive(0, {"from": frm, "to": "coordinator",
                  "message": {"command": {"type": "getShardHome", "shard": "7"}}})
    return c


def test_decision_events_explain_allocations_and_metrics_count_them():
    c = allocating_coordinator()
    notices = [o["notice"] for o in c.drain_outputs() if o["type"] == "notice"]
    [allocated] = [n for n in notices if n["type"] == "allocated"]
    assert (allocated["shard"], allocated["region"], allocated["requester"]) == ("7", "r1", "r1")
    assert allocated["explanation"]["op"] == "allocate"
    assert allocated["explanation"]["candidates"][0]["region"] == "r1"
    metrics = {(m["name"], m.get("attributes", {}).get("shardline.region")): m
               for m in c.metrics()}
    assert metrics[("shardline.coordinator.allocations", None)]["value"] == 1
    assert metrics[("shardline.coordinator.allocations", None)]["kind"] == "counter"
    assert metrics[("shardline.coordinator.shards", "r1")]["value"] == 1
    assert metrics[("shardline.coordinator.active", None)]["value"] == 1
    quiet = shardline.Coordinator("least-shard", NODE(0))
    assert all(m["value"] == 0 for m in quiet.metrics()
               if m["name"] == "shardline.coordinator.allocations")
