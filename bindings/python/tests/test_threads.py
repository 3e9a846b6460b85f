"""Objects shared between threads: calls on one object take turns (waiting without the GIL),
and a callback never waits for an object another thread holds (it gets an error instead)."""

import threading

import pytest

import shardline


def run_threads(n, target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_shared_state_and_strategy_under_contention():
    st = shardline.AllocationState("pekko://sys@h0:1")
    for i in range(4):
        st.add_member(f"pekko://sys@h{i}:1")
        st.add_region(f"r{i}", f"pekko://sys@h{i}:1")
    strategy = shardline.Strategy("least-shard")
    lock = threading.Lock()  # allocate-then-add must be one step for the counts to balance

    def work(t):
        for k in range(100):
            with lock:
                region = strategy.allocate(st, f"{t}-{k}")
                st.add_shard(region, f"{t}-{k}")
            st.regions()
            strategy.rebalance(st)

    run_threads(8, work)
    assert st.shard_count == 800
    assert {r.shard_count for r in st.regions()} == {200}


def test_python_strategy_shared_by_threads():
    calls = []

    class Counting:
        def allocate(self, state, shard, requester):
            calls.append(shard)  # a GIL switch may happen anywhere in here
            return state.regions()[hash(shard) % state.region_count].id

    strategy = shardline.Strategy(Counting())
    states = []
    for t in range(6):
        st = shardline.AllocationState("pekko://sys@h0:1")
        for i in range(3):
            st.add_member(f"pekko://sys@h{i}:1")
            st.add_region(f"r{i}", f"pekko://sys@h{i}:1")
        states.append(st)

    def work(t):
        for k in range(200):
            assert strategy.allocate(states[t], f"{t}-{k}") in {"r0", "r1", "r2"}

    run_threads(6, work)
    assert len(calls) == 1200


def test_second_thread_waits_for_the_first_callback_to_finish():
    entered, release = threading.Event(), threading.Event()
    order = []

    class Slow:
        def allocate(self, state, shard, requester):
            order.append(("begin", shard))
            if shard == "first":
                entered.set()
                release.wait()
            order.append(("end", shard))
            return "r0"

    strategy = shardline.Strategy(Slow())
    st = shardline.AllocationState("pekko://sys@h0:1")
    st.add_member("pekko://sys@h0:1")
    st.add_region("r0", "pekko://sys@h0:1")
    results = {}

    def first():
        results["first"] = strategy.allocate(st, "first")

    def second():
        entered.wait()
        results["second"] = strategy.allocate(st, "second")

    t1, t2 = threading.Thread(target=first), threading.Thread(target=second)
    t1.start()
    t2.start()
    entered.wait()
    release.set()
    t1.join()
    t2.join()
    assert results == {"first": "r0", "second": "r0"}
    assert order == [("begin", "first"), ("end", "first"), ("begin", "second"), ("end", "second")]


def test_callback_refuses_to_wait_for_an_object_busy_elsewhere():
    b_inside, b_go = threading.Event(), threading.Event()
    seen = {}

    st_a = shardline.AllocationState("pekko://sys@h0:1")
    st_b = shardline.AllocationState("pekko://sys@h0:1")
    for st in (st_a, st_b):
        st.add_member("pekko://sys@h0:1")
        st.add_region("r0", "pekko://sys@h0:1")

    class B:
        def allocate(self, state, shard, requester):
            b_inside.set()
            b_go.wait()
            return "r0"

    strategy_b = shardline.Strategy(B())

    class A:
        def allocate(self, state, shard, requester):
            b_inside.wait()
            try:
                strategy_b.allocate(st_a, "from-a")
            except shardline.ReentrantCallError as e:
                seen["error"] = e
            finally:
                b_go.set()
            return "r0"

    tb = threading.Thread(target=lambda: seen.setdefault("b", strategy_b.allocate(st_b, "b")))
    tb.start()
    assert shardline.Strategy(A()).allocate(st_a, "a") == "r0"
    tb.join()
    assert seen["b"] == "r0"
    assert "another thread" in str(seen["error"])


def test_views_stay_on_their_thread():
    out = {}

    class Leaks:
        def allocate(self, state, shard, requester):
            t = threading.Thread(target=lambda: out.setdefault("r", _try(state.regions)))
            t.start()
            t.join()
            return "r0"

    st = shardline.AllocationState("pekko://sys@h0:1")
    st.add_member("pekko://sys@h0:1")
    st.add_region("r0", "pekko://sys@h0:1")
    shardline.Strategy(Leaks()).allocate(st, "x")
    assert isinstance(out["r"], shardline.InvalidStateError)


def _try(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001
        return e


def test_drivers_shared_by_threads():
    clock = shardline.ManualClock(0)
    sent = []
    lock = threading.Lock()

    def send(envelope):
        with lock:
            sent.append(envelope)

    d = shardline.CoordinatorDriver("least-shard", "pekko://sys@h0:1", transport=send,
                                    clock=clock, lease=shardline.InMemoryLease("c"),
                                    store=shardline.InMemoryStore())
    d.start()
    for i in range(4):
        d.member(f"pekko://sys@h{i}:1")
        d.receive({"from": {"region": f"r{i}"}, "to": "coordinator",
                   "message": {"command": {"type": "register", "node": f"pekko://sys@h{i}:1"}}})

    def work(t):
        for k in range(50):
            d.receive({"from": {"region": f"r{t}"}, "to": "coordinator",
                       "message": {"command": {"type": "getShardHome", "shard": f"{t}-{k}"}}})

    run_threads(4, work)
    homes = d.allocations()
    assert sum(len(v) for v in homes.values()) == 200
    assert max(len(v) for v in homes.values()) - min(len(v) for v in homes.values()) <= 1


def driver_busy_in_another_thread(order):
    """A CoordinatorDriver whose transport callback blocks, in a thread of its own, until the
    returned event is set; returns (driver, release, thread) once the callback is running."""
    entered, release = threading.Event(), threading.Event()

    def send(envelope):
        if not entered.is_set():
            entered.set()
            release.wait()
        order.append("sent")

    d = shardline.CoordinatorDriver("least-shard", "pekko://sys@h0:1", transport=send,
                                    clock=shardline.ManualClock(0),
                                    lease=shardline.InMemoryLease("c"),
                                    store=shardline.InMemoryStore())
    d.start()
    d.member("pekko://sys@h0:1")
    register = {"from": {"region": "r0"}, "to": "coordinator",
                "message": {"command": {"type": "register", "node": "pekko://sys@h0:1"}}}
    t = threading.Thread(target=lambda: d.receive(register))
    t.start()
    entered.wait()
    return d, release, t


def test_second_thread_waits_for_a_driver_callback_then_runs():
    order = []
    d, release, t1 = driver_busy_in_another_thread(order)

    def second():
        homes = d.allocations()
        order.append(("allocations", sorted(homes)))

    t2 = threading.Thread(target=second)
    t2.start()
    t2.join(0.2)
    assert t2.is_alive(), "the second thread must wait for the call in progress"
    release.set()
    t1.join()
    t2.join()
    assert order[0] == "sent"
    assert order[-1] == ("allocations", ["r0"])


def test_callback_touching_a_driver_busy_in_another_thread_gets_reentrant_call():
    d, release, t1 = driver_busy_in_another_thread([])
    seen = {}

    class Peeks:
        def allocate(self, state, shard, requester):
            try:
                d.allocations()
            except shardline.ReentrantCallError as e:
                seen["error"] = e
            return "r0"

    st = shardline.AllocationState("pekko://sys@h0:1")
    st.add_member("pekko://sys@h0:1")
    st.add_region("r0", "pekko://sys@h0:1")
    try:
        assert shardline.Strategy(Peeks()).allocate(st, "x") == "r0"
    finally:
        release.set()
        t1.join()
    assert "another thread" in str(seen["error"])
    assert d.allocations() == {"r0": []}

def test_a_callback_may_read_the_state_its_decision_is_reading():
    st = shardline.AllocationState("pekko://sys@h0:1")
    st.add_member("pekko://sys@h0:1")
    st.add_region("r0", "pekko://sys@h0:1")

    class ReadsOriginal:
        def allocate(self, state, shard, requester):
            # Reads nest (the same rule as the C ABI); only writes are refused (see
            # test_callbacks.py).
            return st.regions()[0].id

    assert shardline.Strategy(ReadsOriginal()).allocate(st, "x") == "r0"
