"""The asyncio coordinator: host calls may be coroutines, nothing blocks the loop, and a
store write holds back everything the coordinator does after it until it completes."""

import asyncio

import pytest

import shardline
from shardline import AsyncCoordinatorDriver

NODE = "pekko://sys@h{}:2552".format
FROM_A = {"region": "a"}


def command(cmd):
    return {"from": FROM_A, "to": "coordinator", "message": {"command": cmd}}


class SlowStore:
    """An async store in front of an InMemoryStore whose writes wait until `resume()`."""

    def __init__(self):
        self.inner = shardline.InMemoryStore()
        self.gate = asyncio.Event()
        self.gate.set()
        self.writes = 0

    def pause(self):
        self.gate.clear()

    def resume(self):
        self.gate.set()

    async def append(self, token, record):
        self.writes += 1
        await self.gate.wait()
        return self.inner.append(token, record)

    async def save_snapshot(self, token, snapshot):
        await self.gate.wait()
        return self.inner.save_snapshot(token, snapshot)

    async def load(self, token):
        await asyncio.sleep(0)
        return self.inner.load(token)


class AsyncLease:
    def __init__(self, lease):
        self.lease = lease

    async def acquire(self, now_ms):
        await asyncio.sleep(0)
        return self.lease.acquire(now_ms)

    async def renew(self, token, now_ms):
        return self.lease.renew(token, now_ms)

    def release(self, token):  # a plain method works too
        self.lease.release(token)


async def active_driver(store, sent, clock, lease=None):
    d = AsyncCoordinatorDriver(
        "least-shard", NODE(0),
        transport=sent.append,
        lease=AsyncLease(lease or shardline.InMemoryLease("c1", 30_000)),
        store=store, clock=clock)
    d.member(NODE(1))
    d.start()
    await d.settle()
    assert d.is_active and d.token is not None
    return d


def test_the_loop_keeps_running_while_a_write_waits_and_later_outputs_wait_for_it():
    async def main():
        clock, store, sent = shardline.ManualClock(0), SlowStore(), []
        d = await active_driver(store, sent, clock)
        store.pause()
        d.receive(command({"type": "register", "node": NODE(1)}))
        d.receive(command({"type": "getShardHome", "shard": "7"}))
        ticks = 0
        for _ in range(20):  # the loop is free: other tasks run while the write waits
            await asyncio.sleep(0)
            ticks += 1
        assert ticks == 20 and d.in_flight == 1
        assert sent == [], "nothing after the unfinished write may be sent"
        store.resume()
        await d.settle()
        types = [e["message"]["directive"]["type"] for e in sent]
        assert types[0] == "registerAck", types
        assert "shardHome" in types, types
        assert d.home_of("7") == "a"
        assert store.writes >= 2
        assert d.take_errors() == []
    asyncio.run(main())


def test_a_failing_host_call_is_reported_and_the_coordinator_carries_on():
    async def main():
        clock, store, sent = shardline.ManualClock(0), SlowStore(), []
        d = await active_driver(store, sent, clock)

        async def broken(token, record):
            raise OSError("disk on fire")
        store.append = broken
        d.receive(command({"type": "register", "node": NODE(1)}))
        await d.settle()
        [error] = d.take_errors()
        assert isinstance(error, OSError)
        assert d.home_of("7") is None and "a" not in d.allocations()
        assert not any(e["message"]["directive"]["type"] == "registerAck" for e in sent)
    asyncio.run(main())


def test_notices_reach_on_notice_as_they_are_made_and_a_failing_sink_is_reported():
    async def main():
        clock, store, sent, seen = shardline.ManualClock(0), SlowStore(), [], []

        def sink(notice):
            seen.append(notice)
            if notice["type"] == "allocated":
                raise ValueError("sink broke")
        d = AsyncCoordinatorDriver(
            "least-shard", NODE(0), transport=sent.append,
            lease=AsyncLease(shardline.InMemoryLease("c1", 30_000)), store=store, clock=clock,
            config={"decisionEvents": True}, on_notice=sink)
        d.member(NODE(1))
        d.start()
        await d.settle()
        assert [n["type"] for n in seen] == ["active"]
        d.receive(command({"type": "register", "node": NODE(1)}))
        d.receive(command({"type": "getShardHome", "shard": "7"}))
        await d.settle()
        [allocated] = [n for n in seen if n["type"] == "allocated"]
        assert allocated["shard"] == "7" and allocated["explanation"]["op"] == "allocate"
        [error] = d.take_errors()
        assert isinstance(error, ValueError), error
        assert d.home_of("7") == "a", "the coordinator carried on"
        assert d.take_notices() == [], "notices went to the sink, not the list"
    asyncio.run(main())


def test_a_wrong_answer_names_the_method_and_what_came():
    async def main():
        clock, sent = shardline.ManualClock(0), []

        class Odd:
            def acquire(self, now_ms):
                return "yes"

            def renew(self, token, now_ms):
                return None

            def release(self, token):
                return None
        d = AsyncCoordinatorDriver("least-shard", NODE(0), transport=sent.append, lease=Odd(),
                                   store=shardline.InMemoryStore(), clock=clock)
        d.start()
        await d.settle()
        [error] = d.take_errors()
        assert isinstance(error, shardline.CallbackFailedError)
        assert "the lease's acquire returned \"yes\"" in str(error)
        assert not d.is_active
    asyncio.run(main())


def test_hosts_are_checked_at_construction():
    with pytest.raises(shardline.InvalidArgumentError, match="the store has no load method"):
        class NoLoad:
            def append(self, token, record): ...
            def save_snapshot(self, token, snapshot): ...
        AsyncCoordinatorDriver("least-shard", NODE(0), transport=print,
                               lease=shardline.InMemoryLease("c", 1000), store=NoLoad())
    with pytest.raises(shardline.NullPointerError, match="transport is None"):
        AsyncCoordinatorDriver("least-shard", NODE(0), transport=None,
                               lease=shardline.InMemoryLease("c", 1000),
                               store=shardline.InMemoryStore())


def test_run_fires_timers_and_a_contender_takes_over_with_the_same_state():
    async def main():
        lease = shardline.InMemoryLease("c1", 300)
        store = shardline.InMemoryStore()
        sent = []
        config = {"leaseRetryIntervalMs": 50}
        drivers = [
            AsyncCoordinatorDriver("least-shard", NODE(0), transport=sent.append,
                                   lease=AsyncLease(lease if i == 0 else lease.contender("c2")),
                                   store=store, config=config)
            for i in range(2)
        ]
        for d in drivers:
            d.member(NODE(1))
        tasks = [asyncio.ensure_future(d.run()) for d in drivers]
        await asyncio.sleep(0.05)
        first, second = drivers
        assert first.is_active and not second.is_active
        first.receive(command({"type": "register", "node": NODE(1)}))
        first.receive(command({"type": "getShardHome", "shard": "3"}))
        await first.settle()
        assert first.home_of("3") == "a"
        first_token = first.token
        first.stop()  # releases the lease; the contender's next retry wins it
        for _ in range(100):
            await asyncio.sleep(0.02)
            if second.is_active:
                break
        assert second.is_active and second.token > first_token
        assert second.home_of("3") == "a", "the successor restored the stored state"
        second.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 5)
        assert first.phase == second.phase == "stopped"
    asyncio.run(main())


def test_a_cluster_on_one_loop_delivers_through_coroutine_hosts():
    async def main():
        wire = asyncio.Queue()
        got = []

        class Entities:
            def __init__(self):
                self.shards = set()

            async def start_shard(self, shard, entities):
                await asyncio.sleep(0)
                self.shards.add(shard)

            async def deliver(self, shard, entity, payload):
                await asyncio.sleep(0)
                got.append((entity, payload))

            async def stop_shard(self, shard):
                await asyncio.sleep(0.01)  # entities take a while to stop
                self.shards.discard(shard)

        coordinator = AsyncCoordinatorDriver(
            "least-shard", NODE(0), transport=wire.put_nowait,
            lease=shardline.InMemoryLease("c1", 30_000), store=shardline.InMemoryStore())
        hosts = {"a": Entities(), "b": Entities()}
        regions = {
            n: shardline.aio.AsyncRegionDriver(n, NODE(i), {"kind": "pekko", "numberOfShards": 12},
                                               transport=wire.put_nowait, host=hosts[n])
            for i, n in enumerate("ab", start=1)
        }
        for i in (1, 2):
            coordinator.member(NODE(i))

        async def network():
            while True:
                env = await wire.get()
                if env["to"] == "coordinator":
                    coordinator.receive(env)
                else:
                    regions[env["to"]["region"]].receive(env)

        tasks = [asyncio.ensure_future(t) for t in
                 [network(), coordinator.run(), *(r.run() for r in regions.values())]]
        for _ in range(200):
            await asyncio.sleep(0.005)
            if all(r.is_registered for r in regions.values()):
                break
        for i in range(20):
            regions["a"].route(f"e{i}", b"m%d" % i)
        for _ in range(200):
            await asyncio.sleep(0.005)
            if len(got) == 20:
                break
        assert sorted(got) == sorted((f"e{i}", b"m%d" % i) for i in range(20))
        regions["b"].graceful_shutdown()
        for _ in range(400):
            await asyncio.sleep(0.005)
            if tasks[3].done():
                break
        assert tasks[3].done(), "region b stopped once its shards were handed off"
        assert not hosts["b"].shards
        assert all(coordinator.home_of(s) != "b" for s in map(str, range(12)))
        assert [r.take_errors() for r in regions.values()] == [[], []]
        regions["a"].graceful_shutdown()
        await asyncio.wait_for(tasks[2], 5)
        coordinator.stop()
        await asyncio.wait_for(tasks[1], 5)
        tasks[0].cancel()
    asyncio.run(main())
