"""The etcd backends, against a real etcd on loopback: SHARDLINE_ETCD_ENDPOINTS, or an `etcd`
binary on PATH started for these tests. Skipped when the package was built without the
`etcd` feature or there is no etcd."""

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

import pytest

import shardline

pytestmark = pytest.mark.skipif(not shardline.HAS_ETCD, reason="built without the etcd feature")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def own_etcd():
    """An etcd process of these tests' own on loopback: (process, client URL)."""
    if shutil.which("etcd") is None:
        pytest.skip("no etcd on PATH")
    data = tempfile.mkdtemp(prefix="shardline-py-etcd-")
    client, peer = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        ["etcd", "--name=test", f"--data-dir={data}/data", f"--listen-client-urls={client}",
         f"--advertise-client-urls={client}", f"--listen-peer-urls={peer}",
         f"--initial-advertise-peer-urls={peer}", f"--initial-cluster=test={peer}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):  # until it answers; each try waits at most 500 ms
            try:
                e = shardline.Etcd([client], "probe", timeout_ms=500)
                e.lease("probe", "probe", 2_000).holder()
                break
            except shardline.ShardlineError:
                time.sleep(0.1)
        else:
            pytest.fail(f"etcd did not come up at {client}")
        yield proc, client
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="module")
def endpoint():
    if os.environ.get("SHARDLINE_ETCD_ENDPOINTS"):
        yield os.environ["SHARDLINE_ETCD_ENDPOINTS"]
        return
    with own_etcd() as (_, client):
        yield client


@pytest.fixture
def etcd(endpoint):
    return shardline.Etcd([endpoint], f"shardline-py-test/{uuid.uuid4()}")


def coordinator(etcd, owner, clock, sent):
    return shardline.CoordinatorDriver(
        "least-shard", "pekko://sys@h0:1", transport=sent.append, clock=clock,
        lease=etcd.lease("coordinator", owner, ttl_ms=10_000),
        store=etcd.store("state", bound_to_lease="coordinator"),
    )


def test_lease_and_store_hand_over_between_coordinators(etcd):
    clock, sent = shardline.ManualClock(0), []
    c1 = coordinator(etcd, "c1", clock, sent)
    c2 = coordinator(etcd, "c2", clock, sent)
    for c in (c1, c2):
        c.member("pekko://sys@h1:1")
    c1.start()
    c2.start()
    assert c1.is_active and not c2.is_active
    c1.receive({"from": {"region": "r1"}, "to": "coordinator",
                "message": {"command": {"type": "register", "node": "pekko://sys@h1:1"}}})
    c1.receive({"from": {"region": "r1"}, "to": "coordinator",
                "message": {"command": {"type": "getShardHome", "shard": "s1"}}})
    assert c1.home_of("s1") == "r1"
    first = c1.token
    c1.stop()
    assert c1.token is None
    clock.advance(5_000)  # c2's retry
    c2.poll()
    assert c2.is_active and c2.token > first
    assert c2.home_of("s1") == "r1", "restored from etcd"


def test_a_backend_handle_serves_one_driver(etcd):
    lease = etcd.lease("l", "me")
    assert lease.holder() is None
    clock = shardline.ManualClock(0)
    shardline.CoordinatorDriver("least-shard", "pekko://s@h:1", transport=print, clock=clock,
                                lease=lease, store=shardline.InMemoryStore())
    with pytest.raises(shardline.InvalidStateError, match="already serves"):
        shardline.CoordinatorDriver("least-shard", "pekko://s@h:1", transport=print, clock=clock,
                                    lease=lease, store=shardline.InMemoryStore())


def test_worker_ids_on_etcd(etcd):
    clock = shardline.SystemClock()
    a = shardline.WorkerIdHolder.acquire(etcd, "a", 1, clock=clock, ttl_ms=5_000, worker_bits=4)
    b = shardline.WorkerIdHolder.acquire(etcd, "b", 1, clock=clock, ttl_ms=5_000, worker_bits=4)
    assert {a.worker_id, b.worker_id} == {0, 1}
    ids = {a.next_id() for _ in range(100)} | {b.next_id() for _ in range(100)}
    assert len(ids) == 200
    a.release()
    c = shardline.WorkerIdHolder.acquire(etcd, "c", 1, clock=clock, ttl_ms=5_000, worker_bits=4)
    assert c.worker_id == 0 and c.epoch == 2
    assert c.next_id() not in ids


def test_the_asyncio_driver_keeps_the_loop_running_while_etcd_is_paused():
    with own_etcd() as (proc, client):
        etcd = shardline.Etcd([client], f"shardline-py-test/{uuid.uuid4()}", timeout_ms=10_000)
        sent = []

        async def main():
            d = shardline.AsyncCoordinatorDriver(
                "least-shard", "pekko://sys@h0:1", transport=sent.append,
                lease=etcd.lease("coordinator", "c1", ttl_ms=10_000),
                store=etcd.store("state", bound_to_lease="coordinator"))
            d.member("pekko://sys@h1:1")
            proc.send_signal(signal.SIGSTOP)
            try:
                d.start()
                ticks = 0
                for _ in range(20):  # etcd answers nothing, and the loop runs on
                    await asyncio.sleep(0.01)
                    ticks += 1
                assert ticks == 20 and d.in_flight == 1 and not d.is_active
            finally:
                proc.send_signal(signal.SIGCONT)
            await d.settle()
            assert d.is_active and d.take_errors() == []
            d.receive({"from": {"region": "r1"}, "to": "coordinator",
                       "message": {"command": {"type": "register", "node": "pekko://sys@h1:1"}}})
            d.receive({"from": {"region": "r1"}, "to": "coordinator",
                       "message": {"command": {"type": "getShardHome", "shard": "s1"}}})
            await d.settle()
            assert d.home_of("s1") == "r1" and d.take_errors() == []
            assert "shardHome" in [e["message"]["directive"]["type"] for e in sent]
            assert etcd.lease("coordinator", "watcher").holder() == ("c1", d.token)

        asyncio.run(main())
