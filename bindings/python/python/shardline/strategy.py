"""Allocation strategies: the built-in ones from a configuration, and your own in Python."""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional, Union

from . import _native
from .errors import InvalidArgumentError
from .hosts import CustomStrategy
from .state import AllocationState


class Strategy(_native.Strategy):
    """An allocation strategy: where new shards go, and which shards to move.

    ``Strategy("least-shard", absolute_limit=10)``, ``Strategy({"kind": ...})``,
    ``Strategy('{"kind": ...}')``, or ``Strategy(obj)`` for a custom strategy object."""

    __slots__ = ()

    @classmethod
    def custom(cls, obj: CustomStrategy, name: Optional[str] = None) -> Strategy:
        """A custom strategy from any object with ``allocate(state, shard, requester)``
        (returning a region id, or None for "not now") and optionally ``rebalance(state,
        in_progress)``."""
        if not hasattr(obj, "allocate"):
            raise InvalidArgumentError(
                "a custom strategy needs an allocate(state, shard, requester) method"
            )
        return cls(obj, name=name)

    @property
    def name(self) -> str:
        return self._op("name")

    @property
    def kind(self) -> str:
        """The configuration kind, or "custom"."""
        return self._op("kind")

    @property
    def config(self) -> Optional[dict[str, Any]]:
        """The full configuration with defaults filled in; None for a custom strategy."""
        return self._op("config")

    # allocate(state, shard, requester=None) is the native class's own (typed, the hot path).

    def explain_allocate(
        self, state: AllocationState, shard: str, requester: Optional[str] = None
    ) -> tuple[Optional[str], dict[str, Any]]:
        """``allocate``, plus a structured explanation (a dict)."""
        r = self._op("explain_allocate", state, shard, requester)
        return r["region"], r["explanation"]

    def rebalance(
        self, state: AllocationState, in_progress: Optional[Iterable[str]] = None
    ) -> list[str]:
        """Shards to hand off, in decision order. ``in_progress``: shards already being
        handed off."""
        return self._op("rebalance", state, _listed(in_progress))

    def explain_rebalance(
        self, state: AllocationState, in_progress: Optional[Iterable[str]] = None
    ) -> tuple[list[str], dict[str, Any]]:
        r = self._op("explain_rebalance", state, _listed(in_progress))
        return r["shards"], r["explanation"]

    def __repr__(self) -> str:
        config = self.config
        if config is None:
            return f"Strategy.custom(name={json.dumps(self.name)})"
        return f"Strategy({json.dumps(config, separators=(',', ':'))})"


def _listed(items: Optional[Iterable[str]]) -> Union[list[str], None]:
    return None if items is None else list(items)
