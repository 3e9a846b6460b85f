"""The coordinator and region state machines, step API, with one named method per input.

Each named method builds the input document the native ``handle(now_ms, input)`` reads: the
step API's form, ``{"type": "leaseGranted", "token": 1, "validUntilMs": 60000}``, the same the C
ABI and Node take. ``receive``, the step loop's hot path, goes to the native method directly.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Union

from . import _native

# A load or capacity: one number, or a number per dimension ({"cpu": 2.0, "mem": 0.5}).
Amount = Union[float, Mapping[str, float]]


def member_input(
    address: str, status: str, app_version: str, data_center: str, up_number: Optional[int]
) -> dict[str, Any]:
    """The ``member`` input document."""
    member: dict[str, Any] = {
        "address": address,
        "status": status,
        "appVersion": app_version,
        "dataCenter": data_center,
    }
    if up_number is not None:
        member["upNumber"] = up_number
    return {"type": "member", "member": member}


def offer_document(
    capacity: Optional[Amount], tags: Iterable[str], max_shards: Optional[int]
) -> dict[str, Any]:
    """A region's offer as the wire carries it; defaults are left out."""
    offer: dict[str, Any] = {}
    if capacity is not None:
        offer["capacity"] = capacity
    tags = list(tags)
    if tags:
        offer["tags"] = tags
    if max_shards is not None:
        offer["maxShards"] = max_shards
    return offer


class CoordinatorQueries:
    """What a coordinator answers, the step machine and the driver alike; each is one native
    operation (``_op``), decided once for every language."""

    __slots__ = ()

    def _op(self, op: str, *args: Any) -> Any:  # pragma: no cover - native
        raise NotImplementedError

    @property
    def phase(self) -> str:
        """One of "idle", "acquiringLease", "loading", "active", "stopped"."""
        return self._op("phase")

    @property
    def is_active(self) -> bool:
        return self._op("is_active")

    @property
    def token(self) -> Optional[int]:
        """The fencing token of the lease held, if any."""
        return self._op("token")

    @property
    def config(self) -> dict[str, Any]:
        return self._op("config")

    def handoffs_in_progress(self) -> list[str]:
        return self._op("handoffs_in_progress")

    def is_alive(self, region: str) -> bool:
        return self._op("is_alive", region)

    def home_of(self, shard: str) -> Optional[str]:
        return self._op("home_of", shard)

    def shards_of(self, region: str) -> list[str]:
        return self._op("shards_of", region)

    def unallocated(self) -> list[str]:
        return self._op("unallocated")

    def allocations(self) -> dict[str, list[str]]:
        """``{region: [shards, oldest first]}`` in registration order."""
        return {a["region"]: a["shards"] for a in self._op("allocations")}

    def snapshot(self) -> dict[str, Any]:
        """The persistent state as a snapshot dict."""
        return self._op("snapshot")

    def metrics(self) -> list[dict[str, Any]]:
        """Gauges and counters under OpenTelemetry-style names (``shardline.coordinator.*``)."""
        return self._op("metrics")


class RegionQueries:
    """What a region answers, the step machine and the driver alike; each is one native
    operation (``_op``), decided once for every language."""

    __slots__ = ()

    def _op(self, op: str, *args: Any) -> Any:  # pragma: no cover - native
        raise NotImplementedError

    @property
    def id(self) -> str:
        return self._op("id")

    @property
    def is_registered(self) -> bool:
        return self._op("is_registered")

    def local_shards(self) -> list[str]:
        """Shards hosted here (in any state), sorted."""
        return self._op("local_shards")

    def running_shards(self) -> list[str]:
        """Shards hosted here and accepting messages, sorted."""
        return self._op("running_shards")

    def home_of(self, shard: str) -> Optional[str]:
        return self._op("home_of", shard)

    @property
    def buffered(self) -> int:
        """Messages waiting for shard homes."""
        return self._op("buffered")

    def buffered_for(self, shard: str) -> int:
        return self._op("buffered_for", shard)

    def latest_stamp(self, shard: str) -> Optional[tuple[int, int]]:
        """``(token, version)`` of the newest directive seen for ``shard``."""
        stamp = self._op("latest_stamp", shard)
        return None if stamp is None else (stamp["token"], stamp["version"])

    def metrics(self) -> list[dict[str, Any]]:
        """Gauges and counters under OpenTelemetry-style names (``shardline.region.*``)."""
        return self._op("metrics")


class CoordinatorInputs:
    """A driver's named inputs, the synchronous one and the asyncio one alike: each builds the
    step API's input document for ``_input``, which feeds it at the clock's time."""

    __slots__ = ()

    def _input(self, doc: dict[str, Any]) -> None:  # pragma: no cover - each driver's own
        raise NotImplementedError

    def member(
        self,
        address: str,
        status: str = "Up",
        app_version: str = "0.0.0",
        data_center: str = "default",
        up_number: Optional[int] = None,
    ) -> None:
        """A cluster member joined or changed."""
        self._input(member_input(address, status, app_version, data_center, up_number))

    def member_removed(self, address: str) -> None:
        self._input({"type": "memberRemoved", "address": address})

    def reachability(self, address: str, reachable: bool) -> None:
        self._input({"type": "reachability", "address": address, "reachable": reachable})

    def region_terminated(self, region: str) -> None:
        self._input({"type": "regionTerminated", "region": region})

    def preparing_for_shutdown(self) -> None:
        self._input({"type": "preparingForShutdown"})

    def stop(self) -> None:
        self._input({"type": "stop"})


class RegionDriver(_native.RegionDriver, RegionQueries):
    """The region run for you: its outputs are carried out through the transport, clock and
    entity host given, during each call."""

    __slots__ = ()

    def shard_stopped(self, shard: str) -> None:
        """The host finished stopping a shard whose ``stop_shard`` returned False."""
        self.handle({"type": "shardStopped", "shard": shard})

    def entity_passivated(self, shard: str, entity: str) -> None:
        self.handle({"type": "entityPassivated", "shard": shard, "entity": entity})

    def coordinator_changed(self) -> None:
        self.handle({"type": "coordinatorChanged"})

    def region_terminated(self, region: str) -> None:
        self.handle({"type": "regionTerminated", "region": region})

    def graceful_shutdown(self) -> None:
        """Hands every shard off, then reports ``stopped`` to the host."""
        self.handle({"type": "gracefulShutdown"})


class CoordinatorDriver(_native.CoordinatorDriver, CoordinatorQueries, CoordinatorInputs):
    """The coordinator run for you: its outputs are carried out through the transport, clock,
    lease and store given, during each call."""

    __slots__ = ()

    _input = _native.CoordinatorDriver.handle


class Coordinator(_native.Coordinator, CoordinatorQueries):
    """Feed inputs with the host's monotonic time, carry out ``poll_output()`` in order, call
    ``on_timeout`` at ``next_deadline()``."""

    __slots__ = ()

    def member(
        self,
        now_ms: int,
        address: str,
        status: str = "Up",
        app_version: str = "0.0.0",
        data_center: str = "default",
        up_number: Optional[int] = None,
    ) -> None:
        """A cluster member joined or changed."""
        self.handle(now_ms, member_input(address, status, app_version, data_center, up_number))

    def member_removed(self, now_ms: int, address: str) -> None:
        self.handle(now_ms, {"type": "memberRemoved", "address": address})

    def reachability(self, now_ms: int, address: str, reachable: bool) -> None:
        self.handle(now_ms, {"type": "reachability", "address": address, "reachable": reachable})

    def region_terminated(self, now_ms: int, region: str) -> None:
        self.handle(now_ms, {"type": "regionTerminated", "region": region})

    def lease_granted(self, now_ms: int, token: int, valid_until_ms: int) -> None:
        self.handle(now_ms, {"type": "leaseGranted", "token": token, "validUntilMs": valid_until_ms})

    def lease_denied(self, now_ms: int) -> None:
        self.handle(now_ms, {"type": "leaseDenied"})

    def lease_renewed(self, now_ms: int, token: int, valid_until_ms: int) -> None:
        self.handle(now_ms, {"type": "leaseRenewed", "token": token, "validUntilMs": valid_until_ms})

    def lease_renew_failed(self, now_ms: int, token: int) -> None:
        self.handle(now_ms, {"type": "leaseRenewFailed", "token": token})

    def lease_lost(self, now_ms: int, token: int) -> None:
        self.handle(now_ms, {"type": "leaseLost", "token": token})

    def state_loaded(self, now_ms: int, stored: Any) -> None:
        """The stored state, ``{"snapshot": ... or None, "events": [...]}``, after a
        ``loadState``."""
        self.handle(now_ms, {"type": "stateLoaded", "state": stored})

    def state_load_failed(self, now_ms: int, fenced: bool = False) -> None:
        self.handle(now_ms, {"type": "stateLoadFailed", "fenced": fenced})

    def store_failed(self, now_ms: int, fenced: bool = False) -> None:
        """A ``persist`` or ``saveSnapshot`` failed: drop the rest of the queued outputs first."""
        self.handle(now_ms, {"type": "storeFailed", "fenced": fenced})

    def preparing_for_shutdown(self, now_ms: int) -> None:
        self.handle(now_ms, {"type": "preparingForShutdown"})

    def stop(self, now_ms: int) -> None:
        self.handle(now_ms, {"type": "stop"})

    def drain(self, now_ms: int, region: str) -> None:
        """A planned shutdown of ``region`` is coming: least-load moves its shards away
        within its movement budget; other strategies raise ``InvalidStateError``."""
        self.handle(now_ms, {"type": "drain", "region": region})

    def undrain(self, now_ms: int, region: str) -> None:
        self.handle(now_ms, {"type": "undrain", "region": region})


class Region(_native.Region, RegionQueries):
    """Feed inputs with the host's monotonic time, carry out ``poll_output()`` in order, call
    ``on_timeout`` at ``next_deadline()``."""

    __slots__ = ()

    def coordinator_changed(self, now_ms: int) -> None:
        self.handle(now_ms, {"type": "coordinatorChanged"})

    def region_terminated(self, now_ms: int, region: str) -> None:
        self.handle(now_ms, {"type": "regionTerminated", "region": region})

    def shard_stopped(self, now_ms: int, shard: str) -> None:
        """The host finished stopping a shard's entities after a ``stopShard`` output."""
        self.handle(now_ms, {"type": "shardStopped", "shard": shard})

    def entity_passivated(self, now_ms: int, shard: str, entity: str) -> None:
        self.handle(now_ms, {"type": "entityPassivated", "shard": shard, "entity": entity})

    def graceful_shutdown(self, now_ms: int) -> None:
        self.handle(now_ms, {"type": "gracefulShutdown"})

    def report_loads(self, now_ms: int, loads: Mapping[str, Amount]) -> None:
        """What the host measured of its shards, shard id to a number or to a number per
        dimension (all the same way), each finite and >= 0; the coordinator smooths them."""
        self.handle(now_ms, {"type": "reportLoads", "loads": dict(loads)})

    def update_offer(
        self,
        now_ms: int,
        capacity: Optional[Amount] = None,
        tags: Iterable[str] = (),
        max_shards: Optional[int] = None,
    ) -> None:
        """The region's capacity, tags or shard cap changed (the whole offer; omitted parts
        take their defaults)."""
        offer = offer_document(capacity, tags, max_shards)
        self.handle(now_ms, {"type": "updateOffer", "offer": offer})
