"""A small actor system on asyncio, placed by shardline.

Three nodes live in one process. Each runs a shard region and a coordinator contender (one
holds the lease and coordinates); entities are coroutines with a mailbox, started on the node
hosting their shard. Entity and message ids are Snowflake ids minted under worker ids each node
reserves. The story: two nodes serve traffic, a third joins (shards rebalance onto it), the
second leaves gracefully (its shards move away), and traffic keeps flowing throughout. It
asserts its own outcome: every message delivered exactly once, to the node that owned the
shard at the time, and shards moved on both join and leave.

Time is simulated (a ManualClock advanced from deadline to deadline), so the run is fast and
the same every time.

    pip install ./bindings/python && python examples/python/actor_system.py
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
from typing import Any, Coroutine

import shardline

SHARDS = 30
T0 = 1_767_225_600_000  # wall clock at the start, for the Snowflake ids
COORDINATOR = {"rebalance_interval_ms": 1_000, "handoff_timeout_ms": 10_000}
STOP = object()


class Entity:
    """An actor: a coroutine draining its mailbox."""

    def __init__(self, node: Node, shard: str, entity_id: str) -> None:
        self.node, self.shard, self.id = node, shard, entity_id
        self.mailbox: asyncio.Queue[Any] = asyncio.Queue()
        self.task = asyncio.create_task(self.run())

    async def run(self) -> None:
        while True:
            msg = await self.mailbox.get()
            try:
                if msg is STOP:
                    return
                m = json.loads(msg)
                assert m["to"] == self.id
                self.node.system.delivered[m["id"]].append((self.node.name, self.shard))
            finally:
                self.mailbox.task_done()


class Node:
    """One process of the cluster, and the EntityHost of its region."""

    def __init__(self, system: System, index: int) -> None:
        self.system = system
        self.name = f"node{index}"
        self.address = f"pekko://demo@10.0.0.{index}:2552"
        self.region_id = f"{self.name}-region-1"
        self.entities: dict[str, Entity] = {}
        self.by_shard: dict[str, set[str]] = collections.defaultdict(set)
        self.left = False
        self.worker = shardline.WorkerIdHolder.acquire(
            system.registry, self.name, incarnation=1, clock=system.id_clock
        )
        self.coordinator = shardline.CoordinatorDriver(
            "least-shard",
            self.address,
            transport=system.send,
            clock=system.clock,
            lease=system.lease.contender(self.name),
            store=system.store,
            config=COORDINATOR,
        )
        self.region = shardline.RegionDriver(
            self.region_id,
            self.address,
            {"kind": "pekko", "number_of_shards": SHARDS},
            transport=system.send,
            clock=system.clock,
            host=self,
        )

    # -- EntityHost: called by the region driver; they only schedule, never re-enter it --

    def start_shard(self, shard: str, entities: list[str]) -> None:
        self.system.hosting[shard] = self.name

    def deliver(self, shard: str, entity: str, payload: bytes) -> None:
        assert self.system.hosting.get(shard) == self.name, "delivered by the shard's owner"
        actor = self.entities.get(entity)
        if actor is None:
            actor = self.entities[entity] = Entity(self, shard, entity)
            self.by_shard[shard].add(entity)
        actor.mailbox.put_nowait(payload)

    def stop_shard(self, shard: str) -> bool:
        if self.system.hosting.get(shard) == self.name:
            del self.system.hosting[shard]
        actors = [self.entities.pop(e) for e in self.by_shard.pop(shard, ())]
        if not actors:
            return True
        self.system.spawn(self.stop_entities(shard, actors))
        return False  # shard_stopped follows once the mailboxes are drained

    def stopped(self) -> None:
        self.left = True

    async def stop_entities(self, shard: str, actors: list[Entity]) -> None:
        for a in actors:
            a.mailbox.put_nowait(STOP)  # after everything already delivered
        await asyncio.gather(*(a.task for a in actors))
        self.region.shard_stopped(shard)

    def new_id(self) -> int:
        return self.worker.next_id()


class System:
    def __init__(self) -> None:
        self.clock = shardline.ManualClock(0)
        self.id_clock = shardline.SimClock(T0)
        self.lease = shardline.InMemoryLease("lease", ttl_ms=30_000)
        self.store = shardline.InMemoryStore()
        self.registry = shardline.WorkerIdRegistry()
        self.nodes: dict[str, Node] = {}
        self.wire: collections.deque[dict[str, Any]] = collections.deque()
        self.tasks: set[asyncio.Task[None]] = set()
        self.sent: list[int] = []
        self.delivered: dict[int, list[tuple[str, str]]] = collections.defaultdict(list)
        self.hosting: dict[str, str] = {}  # shard -> node, as the entity hosts see it

    # -- transport: queue only; delivery happens in settle(), outside every callback --

    def send(self, envelope: dict[str, Any]) -> None:
        self.wire.append(envelope)

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def deliver(self, env: dict[str, Any]) -> None:
        if env["to"] == "coordinator":
            for n in self.nodes.values():
                if n.coordinator.is_active:
                    n.coordinator.receive(env)
            return
        for n in self.nodes.values():
            if n.region_id == env["to"]["region"] and not n.left:
                n.region.receive(env)

    async def settle(self) -> None:
        """Runs until the network is quiet and every mailbox and hand-off is done."""
        while True:
            while self.wire:
                self.deliver(self.wire.popleft())
            busy = [a.mailbox.join() for n in self.nodes.values() for a in n.entities.values()]
            await asyncio.gather(*busy, *list(self.tasks))
            await asyncio.sleep(0)
            if not self.wire and not self.tasks:
                return

    async def advance(self, ms: int) -> None:
        """Moves simulated time forward, firing every timer on the way."""
        end = self.clock.now_ms() + ms
        while True:
            deadlines = [
                d
                for n in self.nodes.values()
                for d in (n.coordinator.next_deadline(), None if n.left else n.region.next_deadline())
                if d is not None
            ]
            t = min(deadlines, default=end)
            if t > end:
                break
            self.set_time(t)
            for n in self.nodes.values():
                n.coordinator.poll()
                if not n.left:
                    n.region.poll()
            await self.settle()
        self.set_time(end)

    def set_time(self, t: int) -> None:
        self.clock.set(t)
        self.id_clock.sleep_until(t)

    # -- membership --

    def join(self, index: int) -> Node:
        node = Node(self, index)
        self.nodes[node.name] = node
        for n in self.nodes.values():
            for m in self.nodes.values():
                n.coordinator.member(m.address)
        node.coordinator.start()
        node.region.start()
        return node

    def leave(self, node: Node) -> None:
        for n in self.nodes.values():
            if n is not node:
                n.coordinator.member_removed(node.address)
                n.region.region_terminated(node.region_id)
        node.coordinator.stop()
        node.worker.release()
        del self.nodes[node.name]

    # -- traffic --

    def tell(self, via: Node, entity: str, text: str) -> None:
        msg_id = via.new_id()
        self.sent.append(msg_id)
        via.region.route(entity, json.dumps({"id": msg_id, "to": entity, "text": text}).encode())


async def main() -> None:
    system = System()
    rng = random.Random(7)
    n1 = system.join(1)
    n2 = system.join(2)
    await system.settle()
    assert n1.coordinator.is_active and not n2.coordinator.is_active

    # Entity keys are Snowflake ids, minted by whichever node creates the entity.
    entities = [f"account-{rng.choice([n1, n2]).new_id()}" for _ in range(60)]
    assert len(set(entities)) == len(entities)

    def traffic(rounds: int) -> None:
        live = [n for n in system.nodes.values() if not n.left]
        for _ in range(rounds):
            for e in entities:
                system.tell(rng.choice(live), e, "hello")

    traffic(2)
    await system.settle()
    before_join = dict(system.hosting)
    assert set(before_join.values()) == {"node1", "node2"}

    n3 = system.join(3)
    await system.settle()
    traffic(1)
    for _ in range(10):  # rebalance rounds, with traffic in flight during hand-offs
        await system.advance(1_000)
        traffic(1)
    await system.settle()
    moved_on_join = sorted(s for s, n in system.hosting.items() if n == "node3")
    assert moved_on_join, "the joining node got shards"
    counts = collections.Counter(system.hosting.values())
    assert max(counts.values()) - min(counts.values()) <= 2, counts

    n2.region.graceful_shutdown()
    traffic(1)
    for _ in range(10):
        await system.advance(1_000)
        if n2.left:
            break
        traffic(1)
    await system.settle()
    assert n2.left, "node2 handed every shard off"
    moved_on_leave = sorted(s for s, n in before_join.items() if n == "node2")
    assert all(system.hosting[s] in ("node1", "node3") for s in moved_on_leave)
    system.leave(n2)
    traffic(2)
    await system.advance(2_000)
    await system.settle()

    assert set(system.hosting.values()) == {"node1", "node3"}
    allocations = n1.coordinator.allocations()
    assert sorted(s for shards in allocations.values() for s in shards) == sorted(system.hosting)
    duplicates = [m for m in system.sent if len(system.delivered[m]) > 1]
    missing = [m for m in system.sent if not system.delivered[m]]
    assert not duplicates and not missing, (len(duplicates), len(missing))
    assert len(system.delivered) == len(system.sent)
    worker_ids = sorted(n.worker.worker_id for n in system.nodes.values())
    per_node = dict(sorted(collections.Counter(system.hosting.values()).items()))
    print(
        f"{len(system.sent)} messages to {len(entities)} entities delivered exactly once; "
        f"{len(moved_on_join)} shards moved to node3 on join, {len(moved_on_leave)} moved off "
        f"node2 on leave; shards per node {per_node}; worker ids {worker_ids}; coordinator token {n1.coordinator.token}"
    )


if __name__ == "__main__":
    asyncio.run(main())
