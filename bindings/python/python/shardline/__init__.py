"""shardline: the placement brain for sharded actor systems.

Pekko/Akka and actor-ts compatible allocation strategies (plus your own, in Python), entity ->
shard functions, and the coordinator and region state machines, either stepped by hand or run
by drivers that call your transport, clock, lease, store and entity host.

Every object may be shared between threads; calls on one object run one at a time. Errors are
``ShardlineError`` subclasses, one per status code of the C ABI (see ``shardline.errors``);
exceptions raised by your callbacks come out unchanged.
"""

from __future__ import annotations

from .errors import (
    CallbackFailedError,
    InternalError,
    InvalidArgumentError,
    InvalidStateError,
    NoCandidatesError,
    NullPointerError,
    PanicError,
    ReentrantCallError,
    ShardlineError,
    error_class,
)
from ._native import HAS_ETCD, VERSION, CoordinatorPipeline
from .aio import AsyncCoordinatorDriver, AsyncRegionDriver
from .backends import InMemoryLease, InMemoryStore, ManualClock
from .clocks import SimClock, SystemClock
from .conformance import decide, decode_envelope, encode_envelope, replay
from .hashing import (
    ConsistentHashRing,
    actor_ts_shard_id,
    java_string_hash,
    murmur_string_hash,
    murmur_vnode_hash,
    pekko_shard_id,
)
from .ids import Snowflake, SnowflakeLayout, WorkerIdHolder, WorkerIdRegistry
from .machines import Coordinator, CoordinatorDriver, Region, RegionDriver
from .state import AllocationState, RegionInfo
from .strategy import Strategy

if HAS_ETCD:
    from ._native import Etcd, EtcdLease, EtcdStore  # noqa: F401

__version__ = VERSION.split("/", 1)[1]

__all__ = [
    "HAS_ETCD",
    "VERSION",
    "AllocationState",
    "AsyncCoordinatorDriver",
    "AsyncRegionDriver",
    "CallbackFailedError",
    "ConsistentHashRing",
    "Coordinator",
    "CoordinatorPipeline",
    "CoordinatorDriver",
    "InMemoryLease",
    "InMemoryStore",
    "InternalError",
    "InvalidArgumentError",
    "InvalidStateError",
    "ManualClock",
    "NoCandidatesError",
    "NullPointerError",
    "PanicError",
    "ReentrantCallError",
    "Region",
    "RegionDriver",
    "RegionInfo",
    "ShardlineError",
    "SimClock",
    "Snowflake",
    "SnowflakeLayout",
    "Strategy",
    "SystemClock",
    "WorkerIdHolder",
    "WorkerIdRegistry",
    "actor_ts_shard_id",
    "decide",
    "decode_envelope",
    "encode_envelope",
    "error_class",
    "java_string_hash",
    "murmur_string_hash",
    "murmur_vnode_hash",
    "pekko_shard_id",
    "replay",
]
if HAS_ETCD:
    __all__ += ["Etcd", "EtcdLease", "EtcdStore"]
