"""Worker ids and Snowflake ids."""

import pytest

import shardline

T0 = 1_767_225_600_000  # 2026-01-01


def test_snowflake_ids_grow_and_decompose():
    g = shardline.Snowflake(7)
    ids = [g.next(T0), g.next(T0), g.next(T0 + 1)]
    assert ids == sorted(set(ids))
    layout = g.layout
    assert layout.decompose(ids[0]) == (T0, 7, 0)
    assert layout.decompose(ids[1]) == (T0, 7, 1)
    assert layout.decompose(ids[2]) == (T0 + 1, 7, 0)


def test_snowflake_waits_and_refuses():
    g = shardline.Snowflake(1, shardline.SnowflakeLayout(sequence_bits=1))
    assert g.next(T0) is not None and g.next(T0) is not None
    assert g.next(T0) is None and g.wait_until_ms == T0 + 1, "sequence exhausted: wait"
    with pytest.raises(shardline.InvalidStateError, match="backwards"):
        g.next(T0 - 60_000)
    fenced = shardline.Snowflake.fenced(3, floor_ms=T0)
    with pytest.raises(shardline.InvalidStateError, match="budget"):
        fenced.next(T0 + 5)
    fenced.extend_budget(T0 + 100)
    assert fenced.next(T0 + 5) is not None
    assert fenced.next(T0 - 10) is None, "at or below the floor: wait for it"
    with pytest.raises(shardline.InvalidArgumentError, match="worker id 1024"):
        shardline.Snowflake(1024)


def test_worker_ids_are_exclusive_and_ids_unique():
    registry = shardline.WorkerIdRegistry()
    clock = shardline.SimClock(T0)
    holders = [shardline.WorkerIdHolder.acquire(registry, f"node{i}", 1, clock=clock) for i in range(3)]
    assert sorted(h.worker_id for h in holders) == [0, 1, 2]
    assert sorted(c[0] for c in registry.live_claims()) == [0, 1, 2]
    seen = set()
    for _ in range(500):
        for h in holders:
            seen.add(h.next_id())
        clock.advance(1)
    assert len(seen) == 1500
    holders[1].release()
    holders[1].release()  # idempotent
    with pytest.raises(shardline.InvalidStateError, match="released"):
        holders[1].next_id()
    again = shardline.WorkerIdHolder.acquire(registry, "node9", 1, clock=clock)
    assert again.worker_id == 1 and again.epoch == 2
    assert again.floor_ms >= max(holders[0].layout.decompose(i)[0] for i in seen if
                                 holders[0].layout.decompose(i)[1] == 1)
    assert again.next_id() not in seen


def test_clock_exceptions_come_out_unchanged():
    err = OSError("clock unplugged")

    class Broken(shardline.SimClock):
        def wall_ms(self):
            raise err

    with pytest.raises(OSError) as info:
        shardline.WorkerIdHolder.acquire(shardline.WorkerIdRegistry(), "n", 1, clock=Broken(T0))
    assert info.value is err


def test_a_full_worker_id_pool_is_no_candidates():
    # As in every language: every id taken is NO_CANDIDATES, not INVALID_STATE.
    registry = shardline.WorkerIdRegistry()
    clock = shardline.SimClock(T0)
    # Kept alive: a holder that is dropped gives its id back.
    holders = [
        shardline.WorkerIdHolder.acquire(registry, f"n{i}", 1, clock=clock, worker_bits=1)
        for i in range(2)
    ]
    with pytest.raises(shardline.NoCandidatesError):
        shardline.WorkerIdHolder.acquire(registry, "n2", 1, clock=clock, worker_bits=1)
    holders[0].release()
    assert shardline.WorkerIdHolder.acquire(registry, "n2", 1, clock=clock, worker_bits=1).worker_id == 0


def test_ids_above_two_to_the_53_stay_exact():
    layout = shardline.SnowflakeLayout()
    g = shardline.Snowflake(1023, layout)
    wall = layout.epoch_ms + (1 << 40)
    big = g.next(wall)
    assert big > 2**53
    assert layout.decompose(big) == (wall, 1023, 0)
    assert layout.decompose(big + 1) == (wall, 1023, 1)
    assert g.last_timestamp_ms == wall
