"""Conformance decisions, trace replay and envelopes on the wire, exactly as the CLI and
every other binding compute them."""

from __future__ import annotations

from typing import Any, Union

from . import _native
from .wire import Envelope

Json = dict[str, Any]


def decide(vector: Union[Json, list[Json], str], explain: bool = False) -> Any:
    """One vector (a dict or JSON text) gives one result dict in the vector's ``expect``
    shape; a list gives a list."""
    return _native._op("decide", vector, explain)


def replay(text: str) -> Json:
    """Replays a state-machine trace (JSON lines, tests/traces/README.md) on fresh machines
    and checks every output: ``{"steps": N, "mismatches": M, "first": None | {...}}``,
    ``first`` naming the first differing step. Raises InvalidArgumentError for a trace that
    cannot be read, naming line and field."""
    return _native._op("replay", text)


def encode_envelope(envelope: Envelope) -> str:
    """An envelope as JSON text for the wire; payloads travel as base64 text."""
    return _native._op("encode_envelope", envelope)


def decode_envelope(data: Union[str, bytes]) -> Envelope:
    """The inverse of ``encode_envelope`` (also accepts bytes)."""
    return _native._op("decode_envelope", data)
