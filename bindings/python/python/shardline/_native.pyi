# Type stubs for the native module. Kept by hand next to src/*.rs; tests/test_stubs.py checks
# that every public native name is declared here and vice versa. The JSON forms (outputs,
# notices, records, snapshots) are the TypedDicts of .wire, generated from the wire contract.

from typing import Any, Callable, Optional, Union

from .hosts import Clock, CustomStrategy, EntityHost, Envelope, Lease, Store, Transport
from .wire import (
    CoordinatorConfig,
    CoordinatorInput,
    CoordinatorNotice,
    CoordinatorOutput,
    CoordinatorPhase,
    Metric,
    RegionInput,
    RegionNotice,
    RegionOutput,
    Snapshot,
    StoredRecord,
    StoredState,
)

Json = dict[str, Any]
Config = Union[Json, str, None]
StrategyLike = Union["Strategy", str, Json, CustomStrategy]
Extractor = Union[Json, str, Callable[[str], Union[str, int]]]

VERSION: str
HAS_ETCD: bool

def _op(op: str, *args: Any) -> Any:
    """The library's functions by name; ``shardline.hashing`` and ``shardline.conformance``
    name them."""

def _panic_for_test() -> None: ...

class ConsistentHashRing:
    """Operations named by ``shardline.ConsistentHashRing``."""
    def __init__(self, nodes: list[str], virtual_nodes_factor: int = 10) -> None: ...
    def _op(self, op: str, *args: Any) -> Any: ...

class AllocationState:
    """Operations named by ``shardline.AllocationState``."""
    def __init__(self, self_address: Optional[str] = None) -> None: ...
    def _op(self, op: str, *args: Any) -> Any: ...
    def _region_count(self) -> int: ...

class Strategy:
    """Operations named by ``shardline.Strategy``; a decision takes the state first."""
    def __init__(self, config: Union[str, Json, CustomStrategy, None] = None, /, **kwargs: Any) -> None: ...
    def _op(self, op: str, *args: Any) -> Any: ...
    def allocate(
        self, state: AllocationState, shard: str, requester: Optional[str] = None
    ) -> Optional[str]:
        """The region for ``shard``, or None when the strategy defers ("pending"). Raises
        NoCandidatesError when no region can take it."""

class Coordinator:
    def __init__(self, strategy: StrategyLike, self_address: str, config: Config = None) -> None: ...
    def start(self, now_ms: int) -> None: ...
    def receive(self, now_ms: int, envelope: Envelope) -> None: ...
    def handle(self, now_ms: int, input: CoordinatorInput) -> None:
        """One input as the step API's document, e.g. {"type": "leaseGranted", "token": 1,
        "validUntilMs": 60000}; ``shardline.Coordinator`` has a named method for each."""
    def on_timeout(self, now_ms: int) -> None: ...
    def next_deadline(self) -> Optional[int]: ...
    def poll_output(self) -> Optional[CoordinatorOutput]:
        """{"type": "send", "envelope"} | {"type": "persist", "token", "record"} |
        {"type": "saveSnapshot", "token", "snapshot"} | {"type": "lease", "request":
        {"type": "acquire"} | {"type": "renew" | "release", "token"}} | {"type": "loadState", "token"} |
        {"type": "notice", "notice"}"""
    def drain_outputs(self) -> list[CoordinatorOutput]: ...
    def _op(self, op: str, *args: Any) -> Any:
        """The queries (phase, token, home_of, ...), named in ``shardline.CoordinatorQueries``."""

class Region:
    def __init__(self, region_id: str, node: str, shards: Extractor, config: Config = None) -> None: ...
    def start(self, now_ms: int) -> None: ...
    def route(self, now_ms: int, entity: str, payload: bytes, shard: Optional[str] = None) -> None: ...
    def receive(self, now_ms: int, envelope: Envelope) -> None: ...
    def handle(self, now_ms: int, input: RegionInput) -> None:
        """One input as the step API's document, e.g. {"type": "shardStopped", "shard": "7"};
        ``shardline.Region`` has a named method for each."""
    def on_timeout(self, now_ms: int) -> None: ...
    def next_deadline(self) -> Optional[int]: ...
    def poll_output(self) -> Optional[RegionOutput]:
        """{"type": "send", "envelope"} | {"type": "startShard", "shard", "entities"} |
        {"type": "startEntities", ...} | {"type": "deliver", "shard", "entity", "payload"} |
        {"type": "stopShard", "shard"} | {"type": "undeliverable", ...} | {"type": "stopped"} |
        {"type": "notice", "notice"}"""
    def drain_outputs(self) -> list[RegionOutput]: ...
    def _op(self, op: str, *args: Any) -> Any:
        """The queries (id, home_of, metrics, ...), named in ``shardline.RegionQueries``."""
    def shard_of(self, entity: str) -> str: ...

class ManualClock:
    def __init__(self, now_ms: int = 0) -> None: ...
    def _op(self, op: str, *args: Any) -> Any:
        """``shardline_bind::ops::backends::clock``; ``shardline.ManualClock`` names them."""

class InMemoryLease:
    def __init__(
        self,
        owner: Optional[str] = None,
        ttl_ms: int = 30000,
        *,
        share: Optional[InMemoryLease] = None,
        margin_ms: Optional[int] = None,
        drift_ppm: Optional[int] = None,
    ) -> None: ...
    def _op(self, op: str, *args: Any) -> Any:
        """``shardline_bind::ops::backends::lease``; ``shardline.InMemoryLease`` names them."""

class InMemoryStore:
    def __init__(self, state: Optional[StoredState] = None) -> None: ...
    def _op(self, op: str, *args: Any) -> Any:
        """``shardline_bind::ops::backends::store``; ``shardline.InMemoryStore`` names them."""

ClockLike = Union[ManualClock, Clock, Callable[[], int]]
TransportLike = Union[Transport, Callable[[Envelope], None]]

class CoordinatorDriver:
    def __init__(
        self,
        strategy: StrategyLike,
        self_address: str,
        *,
        transport: TransportLike,
        clock: ClockLike,
        lease: Union[InMemoryLease, Lease],
        store: Union[InMemoryStore, Store],
        config: Config = None,
    ) -> None: ...
    def start(self) -> None: ...
    def receive(self, envelope: Envelope) -> None: ...
    def handle(self, input: CoordinatorInput) -> None:
        """One input, at the clock's time; ``shardline.CoordinatorDriver`` names each."""
    def lease_lost(self) -> None: ...
    def poll(self) -> Optional[int]: ...
    def next_deadline(self) -> Optional[int]: ...
    def take_notices(self) -> list[CoordinatorNotice]: ...
    def _op(self, op: str, *args: Any) -> Any: ...

class CoordinatorPipeline:
    """The coordinator for an asynchronous host; ``shardline.aio`` drives it."""
    def __init__(self, strategy: StrategyLike, self_address: str, config: Config = None) -> None: ...
    @staticmethod
    def check_hosts(transport: Any, lease: Any, store: Any) -> None: ...
    def start(self, now_ms: int) -> None: ...
    def on_timeout(self, now_ms: int) -> None: ...
    def handle(self, now_ms: int, input: CoordinatorInput) -> None: ...
    def next_call(self, now_ms: int) -> Optional[tuple[int, str, str, list[Any]]]:
        """``(ticket, role, method, args)``: call ``role``'s ``method(*args)``, then
        ``answer`` or ``fail`` with the ticket."""
    def answer(self, now_ms: int, ticket: int, value: Any) -> None: ...
    def fail(self, now_ms: int, ticket: int) -> None: ...
    def next_deadline(self) -> Optional[int]: ...
    @property
    def in_flight(self) -> int: ...
    def take_notices(self) -> list[CoordinatorNotice]: ...
    def _op(self, op: str, *args: Any) -> Any: ...

class RegionDriver:
    def __init__(
        self,
        region_id: str,
        node: str,
        shards: Extractor,
        *,
        transport: TransportLike,
        clock: ClockLike,
        host: EntityHost,
        config: Config = None,
    ) -> None: ...
    def start(self) -> None: ...
    def route(self, entity: str, payload: bytes, shard: Optional[str] = None) -> None: ...
    def receive(self, envelope: Envelope) -> None: ...
    def handle(self, input: RegionInput) -> None:
        """One input, at the clock's time; ``shardline.RegionDriver`` names each."""
    def poll(self) -> Optional[int]: ...
    def next_deadline(self) -> Optional[int]: ...
    def take_notices(self) -> list[RegionNotice]: ...
    def _op(self, op: str, *args: Any) -> Any: ...
    def shard_of(self, entity: str) -> str: ...

class SnowflakeLayout:
    def __init__(
        self,
        timestamp_bits: Optional[int] = None,
        worker_bits: Optional[int] = None,
        sequence_bits: Optional[int] = None,
        epoch_ms: Optional[int] = None,
    ) -> None: ...
    def _op(self, op: str, *args: Any) -> Any:
        """``shardline_bind::ops::ids::layout``; ``shardline.SnowflakeLayout`` names them."""

class Snowflake:
    def __init__(
        self,
        worker: int,
        layout: Optional[SnowflakeLayout] = None,
        *,
        fenced: bool = False,
        floor_ms: Optional[int] = None,
    ) -> None: ...
    def next(self, wall_ms: int) -> Optional[int]: ...
    def _op(self, op: str, *args: Any) -> Any:
        """``shardline_bind::ops::ids::snowflake``; ``shardline.Snowflake`` names them."""

class WorkerIdRegistry:
    def __init__(self) -> None: ...
    def _op(self, op: str, *args: Any) -> Any:
        """``shardline_bind::ops::ids::registry``; ``shardline.WorkerIdRegistry`` names them."""

class WorkerIdHolder:
    def __init__(self, registry: Any, clock: Any, options: Json) -> None:
        """``shardline.WorkerIdHolder.acquire`` is the way in."""
    def next_id(self) -> int: ...
    def _op(self, op: str, *args: Any) -> Any:
        """``shardline_bind::ops::ids::holder``; ``shardline.WorkerIdHolder`` names them."""

# Only in builds with the `etcd` feature (HAS_ETCD).
class Etcd:
    def __init__(self, endpoints: list[str], namespace: str, timeout_ms: int = 5000) -> None: ...
    @property
    def namespace(self) -> str: ...
    def lease(self, name: str, owner: str, ttl_ms: int = 30000) -> EtcdLease:
        """A lease handle for one driver."""
    def store(self, name: str, bound_to_lease: Optional[str] = None) -> EtcdStore:
        """A store handle for one driver."""

class EtcdLease:
    def holder(self) -> Optional[tuple[str, int]]: ...
    def _op(self, op: str, *args: Any) -> Any: ...

class EtcdStore:
    def _op(self, op: str, *args: Any) -> Any: ...
