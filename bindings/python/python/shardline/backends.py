"""The embedded backends: a manual clock, the in-memory lease and the in-memory store. Each
object is a handle; handles made from one another share one backend, so a driver given one
sees exactly what Python sees. Each class is its native class with the operations (``_op``,
decided once for every language) named."""

from __future__ import annotations

from typing import Optional

from . import _native
from .wire import Snapshot, StoredRecord, StoredState


class ManualClock(_native.ManualClock):
    """A clock the host sets; it never goes backwards. Drivers given the same clock share its
    time."""

    __slots__ = ()

    def set(self, now_ms: int) -> None:
        """Moves the clock to ``now_ms`` (ignored if that is in the past)."""
        self._op("set", now_ms)

    def advance(self, ms: int) -> None:
        self._op("advance", ms)

    def now_ms(self) -> int:
        return int(self._op("now_ms"))

    def __call__(self) -> int:
        return self.now_ms()

    def __repr__(self) -> str:
        return f"ManualClock(now_ms={self.now_ms()})"


class InMemoryLease(_native.InMemoryLease):
    """The coordinator lease, in memory: handles made with ``contender`` compete for one
    lease. ``InMemoryLease(owner, ttl_ms=30000)`` is a new lease nobody holds; this handle
    contends as ``owner``."""

    __slots__ = ()

    def contender(self, owner: str) -> InMemoryLease:
        """Another contender for the same lease."""
        return type(self)(owner, share=self)

    def with_safety(self, margin_ms: int, drift_ppm: int) -> InMemoryLease:
        """A handle with another safety margin and assumed clock drift (parts per million)."""
        return type(self)(share=self, margin_ms=margin_ms, drift_ppm=drift_ppm)

    def holder(self, now_ms: int) -> Optional[tuple[str, int]]:
        """``(owner, token)`` of the holder as the backend sees it at ``now_ms``."""
        h = self._op("holder", now_ms)
        return None if h is None else (h["owner"], h["token"])

    def expire_now(self) -> None:
        """The backend forgets the holder (its session expired before it noticed)."""
        self._op("expire_now")

    def acquire(self, now_ms: int) -> Optional[tuple[int, int]]:
        """``(token, valid_until_ms)``, or None while someone else holds it."""
        g = self._op("acquire", now_ms)
        return None if g is None else (g["token"], g["validUntilMs"])

    def renew(self, token: int, now_ms: int) -> Optional[int]:
        """The new local deadline, or None when the grant is gone."""
        return self._op("renew", token, now_ms)

    def release(self, token: int) -> None:
        self._op("release", token)


class InMemoryStore(_native.InMemoryStore):
    """The coordinator's state store, in memory; handles share one store.
    ``InMemoryStore(state=None)`` is an empty store, or one holding ``state``
    (``{"snapshot": ..., "events": [...]}``)."""

    __slots__ = ()

    def contents(self) -> StoredState:
        """What a load would return now, without fencing anyone."""
        return self._op("contents")

    @property
    def highest_token(self) -> int:
        return int(self._op("highest_token"))

    def append(self, token: int, record: StoredRecord) -> bool:
        """True if written, False if fenced by a larger token."""
        return self._op("append", token, record)["outcome"] == "written"

    def save_snapshot(self, token: int, snapshot: Snapshot) -> bool:
        return self._op("save_snapshot", token, snapshot)["outcome"] == "written"

    def load(self, token: int) -> Optional[StoredState]:
        """The stored state (fencing every token below ``token``), or None if ``token`` is
        fenced."""
        return self._op("load", token)
