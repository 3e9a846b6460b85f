"""Exceptions: one class per status code of shardline's C ABI, all under ShardlineError.

Exceptions raised by your own callbacks (strategies, transports, hosts, ...) are not wrapped:
they come out of the shardline call that ran the callback as the very same object.
"""

from __future__ import annotations

__all__ = [
    "ShardlineError",
    "InvalidArgumentError",
    "NullPointerError",
    "InvalidStateError",
    "NoCandidatesError",
    "CallbackFailedError",
    "ReentrantCallError",
    "PanicError",
    "InternalError",
]


class ShardlineError(Exception):
    """Base class. ``code`` is the C ABI's ``shardline_status`` value, ``status`` its name."""

    code: int = -1
    status: str = "SHARDLINE_STATUS_UNKNOWN"


class InvalidArgumentError(ShardlineError, ValueError):
    """A parameter, identifier or document is malformed or out of range."""

    code = 1
    status = "SHARDLINE_STATUS_INVALID_ARGUMENT"


class NullPointerError(ShardlineError, TypeError):
    """A required object (strategy, transport, host, ...) was None."""

    code = 2
    status = "SHARDLINE_STATUS_NULL_POINTER"


class InvalidStateError(ShardlineError):
    """The call does not fit the object's current state (unknown region, shard already
    allocated, a message the region cannot take: see ``reason`` on those)."""

    code = 3
    status = "SHARDLINE_STATUS_INVALID_STATE"


class NoCandidatesError(ShardlineError):
    """A strategy was asked to allocate while no region can take the shard."""

    code = 4
    status = "SHARDLINE_STATUS_NO_CANDIDATES"


class CallbackFailedError(ShardlineError):
    """A callback returned something shardline cannot use (a wrong type, a duplicate shard).
    An exception *raised* by a callback is re-raised as is instead."""

    code = 5
    status = "SHARDLINE_STATUS_CALLBACK_FAILED"


class ReentrantCallError(ShardlineError, RuntimeError):
    """A callback called back into the object running it, tried to change the state it was
    lent, or waited for an object busy on another thread (which could deadlock)."""

    code = 6
    status = "SHARDLINE_STATUS_REENTRANT_CALL"


class PanicError(ShardlineError):
    """shardline panicked (a bug). The object involved refuses further calls."""

    code = 7
    status = "SHARDLINE_STATUS_PANIC"


class InternalError(ShardlineError):
    """An internal invariant failed (a bug)."""

    code = 8
    status = "SHARDLINE_STATUS_INTERNAL"


_BY_CODE = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NullPointerError,
        InvalidStateError,
        NoCandidatesError,
        CallbackFailedError,
        ReentrantCallError,
        PanicError,
        InternalError,
    )
}


def error_class(code: int) -> type[ShardlineError]:
    """The exception class for a C status code."""
    return _BY_CODE.get(code, ShardlineError)
