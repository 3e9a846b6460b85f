"""Clocks for `WorkerIdHolder` (which needs a wall clock, a monotonic clock and a way to wait)."""

from __future__ import annotations

import time


class SystemClock:
    """The machine's clocks; `sleep_until` really sleeps (the GIL is released meanwhile)."""

    def wall_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def sleep_until(self, monotonic_ms: int) -> None:
        delay = monotonic_ms - self.monotonic_ms()
        if delay > 0:
            time.sleep(delay / 1000)


class SimClock:
    """Simulated time: nothing moves unless told to, and `sleep_until` jumps ahead at once.
    The wall clock is `wall_start_ms` plus the monotonic time."""

    def __init__(self, wall_start_ms: int, monotonic_ms: int = 0) -> None:
        self.wall_start_ms = wall_start_ms
        self.now = monotonic_ms

    def wall_ms(self) -> int:
        return self.wall_start_ms + self.now

    def monotonic_ms(self) -> int:
        return self.now

    def sleep_until(self, monotonic_ms: int) -> None:
        self.now = max(self.now, monotonic_ms)

    def advance(self, ms: int) -> None:
        self.now += ms
