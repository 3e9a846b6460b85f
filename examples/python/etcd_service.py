"""An asyncio service on etcd, placed by shardline: two nodes, one coordinator at a time.

Two nodes live in one process. Each runs a shard region and a coordinator contender; the
contenders share an etcd lease and a fenced etcd store bound to it, so one coordinates and
the other stands by. Regions talk through an in-process transport; entities record every
message they receive. The story:

1. node A starts alone: its coordinator takes the lease and gives A every shard on first
   contact, and traffic flows;
2. node B joins: the coordinator's rebalance moves shards to B while traffic keeps flowing
   (its decision events are printed, one per line);
3. A's coordinator stops and releases the lease: B's, the standby, takes it over, restores
   the shard homes from etcd and keeps deciding (homes for shards no one has used yet).

It asserts its own outcome (every message delivered exactly once, on the node hosting the
shard at the time; shards moved on the join; the successor became active with A's homes)
and exits non-zero otherwise. Real time, on the event loop; nothing blocks it: etcd calls run
on worker threads under the asyncio drivers. Each run uses a namespace of its own.

    etcd &        # or any etcd; the endpoints come from SHARDLINE_ETCD_ENDPOINTS or --etcd
    pip install ./bindings/python && python examples/python/etcd_service.py [--etcd URL,...]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import random
import sys
import time
import uuid
from typing import Any, Callable

import shardline

SHARDS = 12
PER_SHARD = 3  # entities per shard
FIRST_SHARDS = [str(s) for s in range(10)]  # used from the start; the last two only after the takeover
# Half the shards may move in one round, so the join settles in a single rebalance.
STRATEGY = {"kind": "least-shard", "relativeLimit": 0.5}
COORDINATOR = {
    "decisionEvents": True,
    "rebalanceIntervalMs": 300,
    "leaseRetryIntervalMs": 200,  # how soon the standby asks for the lease again
}
REGION = {"retryIntervalMs": 200}
LEASE_TTL_MS = 5_000
DECISIONS = ("allocated", "rebalanceRound")


def entities_by_shard() -> dict[str, list[str]]:
    """PER_SHARD entity ids for every shard, found by the shard function the regions use."""
    found: dict[str, list[str]] = collections.defaultdict(list)
    i = 0
    while len(found) < SHARDS or min(len(v) for v in found.values()) < PER_SHARD:
        entity = f"account-{i}"
        shard = shardline.pekko_shard_id(entity, SHARDS)
        if len(found[shard]) < PER_SHARD:
            found[shard].append(entity)
        i += 1
    return found


class Entity:
    """An actor: it records what it receives."""

    def __init__(self, node: Node, shard: str, entity_id: str) -> None:
        self.node, self.shard, self.id = node, shard, entity_id

    def receive(self, payload: bytes) -> None:
        self.node.cluster.deliveries[int(payload)].append((self.node.name, self.shard, self.id))


class Node:
    """One process of the service, and the entity host of its region."""

    def __init__(self, cluster: Cluster, name: str, index: int) -> None:
        self.cluster, self.name = cluster, name
        self.address = f"pekko://shop@10.0.0.{index}:2552"
        self.region_id = f"{name}-region"
        self.entities: dict[str, Entity] = {}
        self.hosted: set[str] = set()
        # A handle per node, as separate processes would have; the lease and the store are
        # named the same for every contender.
        etcd = shardline.Etcd(cluster.endpoints, cluster.namespace)
        self.coordinator = shardline.AsyncCoordinatorDriver(
            STRATEGY,
            self.address,
            transport=cluster.send,
            lease=etcd.lease("coordinator", name, ttl_ms=LEASE_TTL_MS),
            store=etcd.store("state", bound_to_lease="coordinator"),
            config=COORDINATOR,
            on_notice=lambda notice: cluster.notice(name, notice),
        )
        self.region = shardline.AsyncRegionDriver(
            self.region_id,
            self.address,
            {"kind": "pekko", "numberOfShards": SHARDS},
            transport=cluster.send,
            host=self,
            config=REGION,
        )
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self.tasks = [
            asyncio.create_task(self.coordinator.run()),
            asyncio.create_task(self.region.run()),
        ]

    # -- the entity host: called by the region; nothing here calls back into it --

    def start_shard(self, shard: str, entities: list[str]) -> None:
        self.hosted.add(shard)

    def deliver(self, shard: str, entity: str, payload: bytes) -> None:
        if shard not in self.hosted:  # checked at the end: raising here would stop the network
            self.cluster.misplaced.append((self.name, shard, int(payload)))
        actor = self.entities.get(entity)
        if actor is None:
            actor = self.entities[entity] = Entity(self, shard, entity)
        actor.receive(payload)

    def stop_shard(self, shard: str) -> bool:
        self.hosted.discard(shard)
        for e in [e for e, a in self.entities.items() if a.shard == shard]:
            del self.entities[e]
        return True


class Cluster:
    def __init__(self, endpoints: list[str]) -> None:
        self.endpoints = endpoints
        self.namespace = f"shardline-example/{uuid.uuid4()}"
        self.nodes: dict[str, Node] = {}
        self.wire: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sent = 0
        self.deliveries: dict[int, list[tuple[str, str, str]]] = collections.defaultdict(list)
        self.misplaced: list[tuple[str, str, int]] = []  # deliveries to a node not hosting the shard
        self.events: list[tuple[str, dict[str, Any]]] = []  # (coordinator's node, notice)
        self.last_round: dict[str, str] = {}
        self.started = time.monotonic()
        self.helpers: list[asyncio.Task[None]] = []

    # -- the in-process transport: the coordinator's envelopes go to whichever is active --

    def send(self, envelope: dict[str, Any]) -> None:
        self.wire.put_nowait(envelope)

    async def network(self) -> None:
        while True:
            env = await self.wire.get()
            if env["to"] == "coordinator":
                for n in self.nodes.values():
                    if n.coordinator.is_active:
                        n.coordinator.receive(env)
            else:
                for n in self.nodes.values():
                    if n.region_id == env["to"]["region"]:
                        n.region.receive(env)

    def notice(self, node: str, notice: dict[str, Any]) -> None:
        """A coordinator's notice, as it is made: decision events are printed, and a
        coordinator that became active is announced to every region, which registers with it."""
        self.events.append((node, notice))
        self.show(node, notice)
        if notice["type"] == "active":
            for m in self.nodes.values():
                m.region.coordinator_changed()

    def show(self, node: str, notice: dict[str, Any]) -> None:
        kind, at = notice["type"], f"{time.monotonic() - self.started:5.2f}s"
        if kind == "active":
            print(f"  {at} {node}  coordinator active (fencing token {notice['token']})")
        elif kind == "allocated":
            summary = notice["explanation"]["summary"]
            print(f"  {at} {node}  allocated       shard {notice['shard']:>2} -> {notice['region']}: {summary}")
        elif kind == "rebalanceRound":
            # Rounds come every rebalance interval: a round is shown when it moves shards or
            # says something new.
            summary = notice["explanation"]["summary"]
            if notice["shards"] or self.last_round.get(node) != summary:
                shards = ",".join(notice["shards"]) or "nothing"
                print(f"  {at} {node}  rebalanceRound  moves {shards}: {summary}")
            self.last_round[node] = summary

    def say(self, line: str) -> None:
        """Prints a line of the story (after the notices that came before it)."""
        print(line)

    # -- traffic --

    def tell(self, via: Node, entity: str) -> None:
        msg_id = self.sent
        self.sent += 1
        via.region.route(entity, str(msg_id).encode())

    async def delivered(self, what: str) -> None:
        await until(lambda: len(self.deliveries) == self.sent, what, self)

    def homes(self) -> dict[str, str]:
        """Shard -> node, as the entity hosts see it."""
        return {s: n.name for n in self.nodes.values() for s in n.hosted}


async def until(cond: Callable[[], bool], what: str, cluster: Cluster, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        for t in cluster.helpers:  # a failure in the network ends the story
            if t.done():
                t.result()
        if time.monotonic() > deadline:
            errors = {n.name: n.coordinator.take_errors() for n in cluster.nodes.values()}
            last = "; ".join(f"{name}'s: {e[-1]}" for name, e in errors.items() if e)
            raise AssertionError(f"timed out waiting: {what}" + (f" (last coordinator error {last})" if last else ""))
        await asyncio.sleep(0.01)


async def run(endpoints: list[str]) -> None:
    cluster = Cluster(endpoints)
    by_shard = entities_by_shard()
    first = [e for s in FIRST_SHARDS for e in by_shard[s]]
    everyone = [e for es in by_shard.values() for e in es]
    rng = random.Random(7)
    cluster.helpers = [asyncio.create_task(cluster.network())]
    cluster.say(f"etcd {','.join(endpoints)}, namespace {cluster.namespace}")

    cluster.say("node A starts alone")
    a = cluster.nodes["A"] = Node(cluster, "A", 1)
    a.coordinator.member(a.address)
    a.start()
    await until(lambda: a.coordinator.is_active and a.region.is_registered, "A coordinates", cluster)
    for e in first:
        cluster.tell(a, e)
    await cluster.delivered("the first messages delivered")
    assert set(cluster.homes().values()) == {"A"}, cluster.homes()
    cluster.say(f"  {len(cluster.homes())} shards on A, {cluster.sent} messages delivered")

    cluster.say("node B joins; its coordinator stands by; the rebalance:")
    b = cluster.nodes["B"] = Node(cluster, "B", 2)
    for n in (a, b):
        n.coordinator.member(a.address)
        n.coordinator.member(b.address)
    b.start()

    async def traffic() -> None:
        while True:
            cluster.tell(rng.choice([a, b]), rng.choice(first))
            await asyncio.sleep(0.005)

    sender = asyncio.create_task(traffic())
    await until(lambda: len(b.hosted) == len(FIRST_SHARDS) // 2, "B hosts half the shards", cluster)
    sender.cancel()
    await cluster.delivered("the messages sent during the rebalance delivered")
    moved = sorted(b.hosted, key=int)
    assert not b.coordinator.is_active, "B stood by while A held the lease"
    homes_before = {r: sorted(s) for r, s in a.coordinator.allocations().items()}
    assert homes_before == {"A-region": sorted(a.hosted), "B-region": sorted(b.hosted)}, homes_before
    cluster.say(f"  shards {','.join(moved)} moved to B; {cluster.sent} messages delivered so far")

    cluster.say("A's coordinator stops and releases the lease; B's takes over from etcd:")
    token_before = a.coordinator.token
    a.coordinator.stop()
    await until(lambda: b.coordinator.is_active, "B's coordinator active", cluster)
    assert b.coordinator.token > token_before, (b.coordinator.token, token_before)
    restored = {r: sorted(s) for r, s in b.coordinator.allocations().items()}
    assert restored == homes_before, (restored, homes_before)
    cluster.say(f"  B's coordinator restored the homes of {sum(map(len, restored.values()))} shards")
    for e in everyone:  # the last shards are new: B's coordinator gives them homes
        cluster.tell(rng.choice([a, b]), e)
    await cluster.delivered("the messages after the takeover delivered")
    await until(lambda: len(cluster.homes()) == SHARDS, "every shard hosted", cluster)
    await until(lambda: any(who == "B" and n["type"] == "rebalanceRound" for who, n in cluster.events),
                "a rebalance round of B's coordinator", cluster)

    late = sorted((s for s in by_shard if s not in FIRST_SHARDS), key=int)
    decided_by_b = {n["shard"] for who, n in cluster.events if who == "B" and n["type"] == "allocated"}
    assert set(late) <= decided_by_b, (late, decided_by_b)
    assert not cluster.misplaced, f"delivered where the shard was not hosted: {cluster.misplaced}"
    duplicated = [m for m, d in cluster.deliveries.items() if len(d) > 1]
    assert not duplicated, f"delivered more than once: {duplicated}"
    assert sorted(cluster.deliveries) == list(range(cluster.sent)), "every message delivered"
    decisions = sum(1 for _, n in cluster.events if n["type"] in DECISIONS)
    cluster.say(
        f"{cluster.sent} messages delivered exactly once; {len(moved)} shards moved to B on the "
        f"join; B's coordinator took over (token {token_before} -> {b.coordinator.token}) and "
        f"homed shards {','.join(late)}; {decisions} decision events; "
        f"{time.monotonic() - cluster.started:.1f}s"
    )

    b.coordinator.stop()  # releases the lease
    await asyncio.wait_for(asyncio.gather(a.tasks[0], b.tasks[0]), 5)
    for t in [a.tasks[1], b.tasks[1], *cluster.helpers]:
        t.cancel()
    errors = [e for n in cluster.nodes.values() for e in n.coordinator.take_errors()]
    assert not errors, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--etcd",
        default=os.environ.get("SHARDLINE_ETCD_ENDPOINTS", "http://127.0.0.1:2379"),
        help="comma-separated etcd endpoints (default: SHARDLINE_ETCD_ENDPOINTS or %(default)s)",
    )
    endpoints = [e for e in parser.parse_args().etcd.split(",") if e]
    if not shardline.HAS_ETCD:
        sys.exit("this shardline was built without etcd")
    try:
        asyncio.run(asyncio.wait_for(run(endpoints), 30))
    except AssertionError as e:
        sys.exit(f"FAILED: {e}")


if __name__ == "__main__":
    main()
