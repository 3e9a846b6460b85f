"""The allocation state strategies decide on, and its regions as they see them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Union

from . import _native

#: A load, capacity or budget: a number, or a number per dimension.
Amount = Union[float, dict[str, float]]


@dataclass(frozen=True)
class RegionInfo:
    """One region as the strategies see it."""

    id: str
    #: The region's own address.
    address: str
    #: The node it runs on (the self address for a local region).
    node: str
    local: bool
    eligible: bool
    #: Oldest first.
    shards: list[str]
    #: Of the member on ``node``, when the cluster view knows it.
    status: Optional[str] = None
    app_version: Optional[str] = None

    @property
    def shard_count(self) -> int:
        return len(self.shards)

    @classmethod
    def _of(cls, row: dict[str, Any]) -> RegionInfo:
        return cls(
            row["id"],
            row["address"],
            row["node"],
            row["local"],
            row["eligible"],
            row["shards"],
            row["status"],
            row["appVersion"],
        )

    def __repr__(self) -> str:
        return (
            f"RegionInfo(id={json.dumps(self.id)}, node={json.dumps(self.node)}, "
            f"shards={len(self.shards)}, eligible={self.eligible})"
        )


class AllocationState(_native.AllocationState):
    """The allocation map (regions in map order, each with its shards oldest first) and the
    cluster membership that strategies decide on. A strategy callback gets a read-only view
    (``is_view``) that works only while the callback runs."""

    __slots__ = ()

    @property
    def is_view(self) -> bool:
        return self._op("is_view")

    def add_member(
        self,
        address: str,
        status: str = "Up",
        app_version: str = "0.0.0",
        data_center: str = "default",
        up_number: Optional[int] = None,
    ) -> None:
        member = {
            "address": address,
            "status": status,
            "appVersion": app_version,
            "dataCenter": data_center,
            "upNumber": up_number,
        }
        self._op("upsert_member", member)

    def remove_member(self, address: str) -> bool:
        """True if the member was known."""
        return self._op("remove_member", address)

    def set_reachable(self, address: str, reachable: bool) -> None:
        self._op("set_reachable", address, reachable)

    def add_region(self, region: str, address: str, local: bool = False) -> None:
        """Registers a region at the end of map order (the order ties are broken by)."""
        self._op("add_region", region, address, local)

    def remove_region(self, region: str) -> list[str]:
        """Removes a region; returns its shards (now unallocated), oldest first."""
        return self._op("remove_region", region)

    def set_eligible(self, region: str, eligible: bool) -> None:
        self._op("set_eligible", region, eligible)

    def add_shard(self, region: str, shard: str) -> None:
        self._op("add_shard", region, shard)

    def remove_shard(self, shard: str) -> str:
        """Deallocates a shard; returns the region that held it."""
        return self._op("remove_shard", shard)

    # least-load's inputs. An amount is a number, or a number per dimension
    # (``{"cpu": 2, "memory": 4}``); utilisation is load / capacity, the maximum over dimensions.

    def set_shard_load(self, shard: str, load: Amount) -> None:
        """A shard's load (default 1), allocated or not."""
        self._op("set_shard_load", shard, load)

    def set_shard_rule(
        self, shard: str, tags: Iterable[str] = (), pin: Optional[str] = None
    ) -> None:
        """The tags a shard's region must have and the one region it may live on; neither
        removes the rule."""
        self._op("set_shard_rule", shard, {"tags": list(tags), "pin": pin})

    def set_region_capacity(self, region: str, capacity: Amount) -> None:
        """A region's capacity (default 1)."""
        self._op("set_region_capacity", region, capacity)

    def set_region_tags(self, region: str, tags: Iterable[str]) -> None:
        self._op("set_region_tags", region, list(tags))

    def set_region_max_shards(self, region: str, max_shards: Optional[int]) -> None:
        """At most ``max_shards`` shards on the region (None: no cap)."""
        self._op("set_region_max_shards", region, max_shards)

    def set_region_draining(self, region: str, draining: bool) -> None:
        """A draining region receives no shards and gives all of its shards away."""
        self._op("set_region_draining", region, draining)

    @property
    def self_address(self) -> str:
        return self._op("self_address")

    def regions(self) -> list[RegionInfo]:
        """Regions in map order."""
        return [RegionInfo._of(r) for r in self._op("regions")]

    def region(self, region: str) -> Optional[RegionInfo]:
        row = self._op("region", region)
        return None if row is None else RegionInfo._of(row)

    def home_of(self, shard: str) -> Optional[str]:
        return self._op("home_of", shard)

    @property
    def region_count(self) -> int:
        return self._region_count()

    @property
    def shard_count(self) -> int:
        return self._op("shard_count")

    def member(self, address: str) -> Optional[tuple[str, str, str, int]]:
        """``(status, app_version, data_center, up_number)`` of a member, or None."""
        m = self._op("member", address)
        if m is None:
            return None
        return (m["status"], m["appVersion"], m["dataCenter"], m["upNumber"])

    def is_unreachable(self, address: str) -> bool:
        return self._op("is_unreachable", address)

    def rank(self, tie_break_by_age: bool = False) -> list[str]:
        """Region ids in Pekko's ``ShardSuitabilityOrdering`` (best home first); raises
        InvalidStateError where Pekko's sort would throw."""
        return self._op("rank", tie_break_by_age)

    def __repr__(self) -> str:
        try:
            view = ", view" if self.is_view else ""
            return f"AllocationState(regions={self.region_count}, shards={self.shard_count}{view})"
        except Exception:
            return "AllocationState(<unavailable>)"
