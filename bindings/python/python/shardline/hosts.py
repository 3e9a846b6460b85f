"""What shardline calls back into: the shapes your objects need, as typing Protocols.

Nothing here has to be subclassed; any object with these methods works (a plain function
works as a Transport or a Clock). Callbacks run on the calling thread, during the shardline
call that needs them, and must not call back into the object that is running them (they get
``ReentrantCallError``): return a value, or schedule the call for later.
"""

from __future__ import annotations

from typing import Iterable, Optional, Protocol, Union, runtime_checkable

from .state import AllocationState
from .wire import Envelope, Snapshot, StoredRecord, StoredState


@runtime_checkable
class CustomStrategy(Protocol):
    """A placement policy written in Python. ``state`` is a read-only view, valid only during
    the call."""

    def allocate(
        self, state: AllocationState, shard: str, requester: Optional[str]
    ) -> Optional[str]:
        """The region for ``shard``, or None to decide later."""
        ...


@runtime_checkable
class RebalancingStrategy(CustomStrategy, Protocol):
    def rebalance(self, state: AllocationState, in_progress: frozenset[str]) -> Iterable[str]:
        """Shards to hand off, in decision order, no duplicates."""
        ...


@runtime_checkable
class Transport(Protocol):
    def send(self, envelope: Envelope) -> None:
        """Carry ``envelope`` to ``envelope["to"]``; loss and reordering are tolerated."""
        ...


@runtime_checkable
class Clock(Protocol):
    def now_ms(self) -> int:
        """Monotonic milliseconds."""
        ...


@runtime_checkable
class Lease(Protocol):
    def acquire(self, now_ms: int) -> Optional[tuple[int, int]]:
        """``(fencing_token, valid_until_ms)``, or None while someone else holds it. Tokens
        must grow across every grant."""
        ...

    def renew(self, token: int, now_ms: int) -> Optional[int]:
        """The new local deadline, or None when the grant is gone."""
        ...

    def release(self, token: int) -> None: ...


@runtime_checkable
class Store(Protocol):
    def append(self, token: int, record: StoredRecord) -> Union[bool, None]:
        """True or None: written; False: fenced by a larger token."""
        ...

    def save_snapshot(self, token: int, snapshot: Snapshot) -> Union[bool, None]: ...

    def load(self, token: int) -> Optional[StoredState]:
        """``{"snapshot": ..., "events": [...]}``, fencing tokens below ``token``; None when
        ``token`` itself is fenced."""
        ...


@runtime_checkable
class EntityHost(Protocol):
    def start_shard(self, shard: str, entities: list[str]) -> None: ...

    def deliver(self, shard: str, entity: str, payload: bytes) -> None: ...

    def stop_shard(self, shard: str) -> Optional[bool]:
        """True or None: stopped already; False: call ``RegionDriver.shard_stopped(shard)``
        once the entities have stopped (not from inside this callback)."""
        ...
