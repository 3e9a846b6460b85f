"""Snowflake ids and worker ids: the layout, the sans-IO generator, the embedded worker-id
registry and the holder that reserves a worker id and issues ids under it.

Each class is its native class with the operations named: ``next`` and ``next_id``, one call
per id, are native methods; the rest are native operations (``_op``), decided once for every
language.
"""

from __future__ import annotations

from typing import Any, Optional

from . import _native

Json = dict[str, Any]


class SnowflakeLayout(_native.SnowflakeLayout):
    """Bit widths and epoch of Snowflake ids: 41 timestamp bits, 10 worker bits, 12 sequence
    bits and an epoch of 2024-01-01 unless given."""

    __slots__ = ()

    @classmethod
    def _of(cls, spec: Json) -> SnowflakeLayout:
        return cls(spec["timestampBits"], spec["workerBits"], spec["sequenceBits"], spec["epochMs"])

    def _spec(self) -> Json:
        spec: Json = self._op("spec")
        return spec

    @property
    def timestamp_bits(self) -> int:
        return int(self._spec()["timestampBits"])

    @property
    def worker_bits(self) -> int:
        return int(self._spec()["workerBits"])

    @property
    def sequence_bits(self) -> int:
        return int(self._spec()["sequenceBits"])

    @property
    def epoch_ms(self) -> int:
        return int(self._spec()["epochMs"])

    @property
    def worker_count(self) -> int:
        return int(self._op("worker_count"))

    def decompose(self, id: int) -> tuple[int, int, int]:
        """``(unix_ms, worker, sequence)`` of an id."""
        p = self._op("decompose", id)
        return (p["unixMs"], p["worker"], p["sequence"])

    def __repr__(self) -> str:
        s = self._spec()
        return (
            f"SnowflakeLayout(timestamp_bits={s['timestampBits']}, worker_bits={s['workerBits']}, "
            f"sequence_bits={s['sequenceBits']}, epoch_ms={s['epochMs']})"
        )


class Snowflake(_native.Snowflake):
    """One worker's Snowflake generator. Sans-IO: ``next(wall_ms)`` never reads a clock or
    sleeps. ``Snowflake(worker, layout)`` is for a worker id made unique by other means
    (configuration): no fence, unlimited budget. For reserved ids use ``Snowflake.fenced`` (or
    ``WorkerIdHolder``)."""

    __slots__ = ()

    @classmethod
    def fenced(
        cls, worker: int, floor_ms: Optional[int] = None, layout: Optional[SnowflakeLayout] = None
    ) -> Snowflake:
        """Issues only timestamps above ``floor_ms``, and nothing before ``extend_budget``."""
        return cls(worker, layout, fenced=True, floor_ms=floor_ms)

    @property
    def wait_until_ms(self) -> Optional[int]:
        """After ``next`` returned None: the wall time to ask again at."""
        return self._op("wait_until_ms")

    def extend_budget(self, ceiling_ms: int) -> None:
        """Raises the ceiling to an acknowledged budget (never lowers it)."""
        self._op("extend_budget", ceiling_ms)

    def revoke(self) -> None:
        """Stops issuing ids at once."""
        self._op("revoke")

    @property
    def worker(self) -> int:
        return int(self._op("worker"))

    @property
    def budget_ms(self) -> Optional[int]:
        return self._op("budget_ms")

    @property
    def floor_ms(self) -> Optional[int]:
        return self._op("floor_ms")

    @property
    def last_timestamp_ms(self) -> Optional[int]:
        return self._op("last_timestamp_ms")

    @property
    def layout(self) -> SnowflakeLayout:
        return SnowflakeLayout._of(self._op("layout"))


class WorkerIdRegistry(_native.WorkerIdRegistry):
    """The embedded worker-id registry; sessions from one registry compete for the same ids.
    Its time only moves with ``advance_to``, so simulations control expiry."""

    __slots__ = ()

    def advance_to(self, now_ms: int) -> None:
        """Moves server time forward; sessions past their expiry end, with their claims."""
        self._op("advance_to", now_ms)

    @property
    def now_ms(self) -> int:
        return int(self._op("now_ms"))

    def live_claims(self) -> list[tuple[int, str, int, int]]:
        """``[(worker_id, owner, incarnation, epoch)]`` of the live claims."""
        return [
            (c["workerId"], c["owner"], c["incarnation"], c["epoch"])
            for c in self._op("live_claims")
        ]

    def fence(self, worker_id: int) -> Optional[Json]:
        """The fence of a worker id (``{"epoch", "floorMs", "hwmMs"}``), if one was ever
        written."""
        return self._op("fence", worker_id)


class WorkerIdHolder(_native.WorkerIdHolder):
    """A reserved worker id, kept alive, with its fenced Snowflake generator. Every call does
    the upkeep that is due (keep-alive, budget) through the clock, sleeping with
    ``sleep_until`` only when the generator must wait."""

    __slots__ = ()

    @classmethod
    def acquire(
        cls,
        registry: Any,
        owner: str,
        incarnation: int,
        *,
        clock: Any,
        ttl_ms: int = 10_000,
        worker_bits: int = 10,
        layout: Optional[SnowflakeLayout] = None,
        policy: str = "lowest",
        seed: int = 0,
    ) -> WorkerIdHolder:
        """Reserves the lowest free worker id in ``registry`` (a WorkerIdRegistry, or an Etcd
        when built with etcd) as ``owner`` (``incarnation``: new on every process start) and
        confirms it. ``policy``: "lowest", or "spread:N" to pick among the lowest N free ids at
        random (seeded by ``seed``)."""
        options: Json = {
            "owner": owner,
            "incarnation": incarnation,
            "ttlMs": ttl_ms,
            "workerBits": worker_bits,
            "policy": policy,
            "seed": seed,
        }
        if layout is not None:
            options["layout"] = layout._op("spec")
        return cls(registry, clock, options)

    @property
    def worker_id(self) -> int:
        return int(self._op("worker_id"))

    @property
    def epoch(self) -> int:
        """Grows on every acquisition of this worker id, by anyone."""
        return int(self._op("epoch"))

    @property
    def floor_ms(self) -> int:
        """Timestamps at or below this were (or may have been) used by earlier holders."""
        return int(self._op("floor_ms"))

    @property
    def budget_ms(self) -> int:
        """The acknowledged timestamp budget."""
        return int(self._op("budget_ms"))

    @property
    def valid_until_ms(self) -> Optional[int]:
        """The local (monotonic) deadline of the reservation."""
        return self._op("valid_until_ms")

    @property
    def layout(self) -> SnowflakeLayout:
        return SnowflakeLayout._of(self._op("layout"))

    def maintain(self) -> int:
        """Does the upkeep that is due; returns the monotonic time of the next."""
        return int(self._op("maintain"))

    def release(self) -> None:
        """Stops the generator, hands back its unused budget and deletes the claim.
        Idempotent."""
        self._op("release")
