"""Entity id -> shard id, and the hash functions placement must agree on bit for bit."""

from __future__ import annotations

from typing import Optional

from . import _native


def pekko_shard_id(entity_id: str, number_of_shards: int) -> str:
    """Pekko ``HashCodeMessageExtractor``: ``abs(entityId.hashCode % n)`` as a decimal
    string."""
    return _native._op("pekko_shard_id", entity_id, number_of_shards)


def actor_ts_shard_id(entity_id: str, num_shards: int) -> int:
    """actor-ts ``hashShardId``: ``abs(fnv1a32(entityId)) % n`` over UTF-16 units."""
    return _native._op("actor_ts_shard_id", entity_id, num_shards)


def murmur_string_hash(s: str) -> int:
    """Pekko ``MurmurHash.stringHash`` (signed 32-bit)."""
    return _native._op("murmur_string_hash", s)


def murmur_vnode_hash(node_hash: int, replica: int) -> int:
    """Position of virtual node ``replica`` (1-based) of a node whose ``murmur_string_hash``
    is ``node_hash`` on Pekko's ring."""
    return _native._op("murmur_vnode_hash", node_hash, replica)


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode`` (signed 32-bit, over UTF-16 units)."""
    return _native._op("java_string_hash", s)


class ConsistentHashRing(_native.ConsistentHashRing):
    """Pekko's ``ConsistentHash`` ring. Node order matters where virtual nodes collide (the
    later node keeps the position); the consistent-hashing strategy passes nodes sorted by
    address."""

    __slots__ = ()

    def node_for(self, key: str) -> Optional[str]:
        """The node owning ``key``, or None for an empty ring."""
        return self._op("node_for", key)

    def positions(self) -> list[tuple[int, str]]:
        """``(position, node)`` pairs in ascending position order."""
        return [(p, n) for p, n in self._op("positions")]

    @property
    def nodes(self) -> list[str]:
        return self._op("nodes")

    def __len__(self) -> int:
        return self._op("len")
