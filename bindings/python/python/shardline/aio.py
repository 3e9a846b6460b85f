"""The coordinator on an asyncio event loop, with host objects whose methods may be
coroutines.

Nothing here blocks the loop. An input steps the state machine (microseconds) and starts the
host calls it needs: a plain method runs at once, a coroutine (or any awaitable it returns)
runs as a task, and its answer goes back to the coordinator when it arrives. Store writes
are ordered for you: nothing the coordinator does after a write starts before the write has
completed, while calls started earlier may still be running. What each call is and how its
answer is read is decided in the shared core, exactly as for the synchronous
``CoordinatorDriver``; the host objects have the same methods (see ``shardline.hosts``).
shardline's own ``EtcdLease`` and ``EtcdStore`` are taken as they are: their calls go over
the network, so they run on a worker thread (``asyncio.to_thread``) and the loop keeps
running while etcd is slow or unreachable.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from typing import Any, Callable, Optional, Union

from . import _native
from .errors import ShardlineError
from .machines import CoordinatorInputs, CoordinatorQueries, RegionDriver

log = logging.getLogger("shardline")

ClockLike = Union[Callable[[], int], Any]


def monotonic_ms() -> int:
    """The default clock: this process's monotonic milliseconds."""
    return time.monotonic_ns() // 1_000_000


class _OnAThread:
    """An etcd lease or store for the asyncio driver: each call of the driver (``acquire``,
    ``append``, ...) is the native operation run on a worker thread. Like the synchronous
    driver, it should be the only driver the handle serves."""

    __slots__ = ("_backend",)

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    def __getattr__(self, method: str) -> Callable[..., Any]:
        async def call(*args: Any) -> Any:
            return await asyncio.to_thread(self._backend._op, method, *args)

        return call


def _off_the_loop(host: Any) -> Any:
    if _native.HAS_ETCD and isinstance(host, (_native.EtcdLease, _native.EtcdStore)):
        return _OnAThread(host)
    return host


class _OnTheLoop:
    """What both drivers do on the loop: their host's tasks, the errors those raise, and the
    timer loop of ``run()``."""

    def __init__(self, clock: Optional[ClockLike]) -> None:
        now = getattr(clock, "now_ms", clock) if clock is not None else monotonic_ms
        self._now: Callable[[], int] = now
        self._tasks: set[asyncio.Task[None]] = set()
        self._errors: list[BaseException] = []
        self._changed: Optional[asyncio.Event] = None

    async def settle(self) -> None:
        """Waits until no host call is in flight."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def take_errors(self) -> list[BaseException]:
        """Exceptions host calls raised since the last call, in order."""
        errors, self._errors = self._errors, []
        return errors

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _: self._wake())

    def _wake(self) -> None:
        """Something may have set a new deadline: ``run()`` looks again."""
        if self._changed is not None:
            self._changed.set()

    def _keep(self, role: str, method: str, error: BaseException) -> None:
        log.error("shardline: the %s's %s failed: %r", role, method, error)
        self._errors.append(error)

    async def _run_timers(
        self,
        done: Callable[[], bool],
        next_deadline: Callable[[], Optional[int]],
        poll: Callable[[], Any],
    ) -> None:
        if self._changed is None:
            self._changed = asyncio.Event()
        while not (done() and not self._tasks):
            deadline = next_deadline()
            self._changed.clear()
            if deadline is not None and deadline <= self._now():
                poll()
                continue
            delay = None if deadline is None else (deadline - self._now()) / 1000
            try:
                await asyncio.wait_for(self._changed.wait(), delay)
            except asyncio.TimeoutError:
                pass


class AsyncCoordinatorDriver(_OnTheLoop, CoordinatorQueries, CoordinatorInputs):
    """A coordinator that contends for ``lease``, keeps its state in ``store`` and talks to
    the regions through ``transport``, scheduled on the running event loop.

    Feed it cluster events and received envelopes with the input methods (they return at
    once), and keep ``run()`` running: it fires the coordinator's timers and returns once
    the coordinator has stopped and no call is in flight. A host call that raises is logged
    on the ``shardline`` logger and kept for ``take_errors()``; the coordinator carries on as
    for any failed call (a failed write is not retried; the lease is contended again).

    ``on_notice``, when given, is called on the loop with each notice (decision events
    included, with ``decisionEvents`` on) as the coordinator makes it, in order; one that
    raises is logged and kept for ``take_errors()``. Without it, notices wait for
    ``take_notices()``.
    """

    def __init__(
        self,
        strategy: Any,
        self_address: str,
        *,
        transport: Any,
        lease: Any,
        store: Any,
        clock: Optional[ClockLike] = None,
        config: Any = None,
        on_notice: Optional[Callable[[dict[str, Any]], Any]] = None,
    ) -> None:
        lease, store = _off_the_loop(lease), _off_the_loop(store)
        _native.CoordinatorPipeline.check_hosts(transport, lease, store)
        super().__init__(clock)
        self._pipeline = _native.CoordinatorPipeline(strategy, self_address, config)
        self._hosts = {"transport": transport, "lease": lease, "store": store}
        self._notices: list[Any] = []
        self._on_notice = on_notice

    # ---- inputs: each steps the coordinator and starts the calls it needs ------------------

    def start(self) -> None:
        """Starts contending for the lease."""
        self._pipeline.start(self._now())
        self._pump()

    def receive(self, envelope: Any) -> None:
        self._input({"type": "receive", "envelope": envelope})

    def lease_lost(self) -> None:
        """The lease backend reports the current grant lost."""
        token = self.token
        if token is not None:
            self._input({"type": "leaseLost", "token": token})

    def poll(self) -> Optional[int]:
        """Runs the timers that are due now; returns the next deadline. ``run()`` does this
        for you; call it yourself only when you drive time by hand."""
        self._pipeline.on_timeout(self._now())
        self._pump()
        return self._pipeline.next_deadline()

    # ---- running ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Fires the timers at their deadlines until the coordinator has stopped and no call
        is in flight. Starts the coordinator first if ``start()`` was not called."""
        if self.phase == "idle":
            self.start()
        await self._run_timers(
            lambda: self.phase == "stopped", self._pipeline.next_deadline, self.poll
        )

    def next_deadline(self) -> Optional[int]:
        return self._pipeline.next_deadline()

    @property
    def in_flight(self) -> int:
        """Host calls started and not answered yet."""
        return self._pipeline.in_flight

    def take_notices(self) -> list[Any]:
        """Notices since the last call, as dicts with a "type"."""
        notices, self._notices = self._notices, []
        return notices

    def _op(self, op: str, *args: Any) -> Any:
        return self._pipeline._op(op, *args)

    # ---- the calls ---------------------------------------------------------------------------

    def _input(self, doc: dict[str, Any]) -> None:
        self._pipeline.handle(self._now(), doc)
        self._pump()

    def _pump(self) -> None:
        while (call := self._pipeline.next_call(self._now())) is not None:
            ticket, role, method, args = call
            host = self._hosts[role]
            target = getattr(host, method, None) or host  # a plain callable transport
            try:
                answer = target(*args)
            except Exception as e:  # noqa: BLE001 - a host call's failure is reported, not raised
                self._failed(ticket, role, method, e)
                continue
            if inspect.isawaitable(answer):
                self._spawn(self._await(ticket, role, method, answer))
            else:
                self._answer(ticket, role, method, answer)
        for notice in self._pipeline.take_notices():
            self._notice(notice)
        self._wake()

    def _notice(self, notice: Any) -> None:
        if self._on_notice is None:
            self._notices.append(notice)
            return
        try:
            self._on_notice(notice)
        except Exception as e:  # noqa: BLE001 - the sink's failure is reported, not raised
            self._keep("notice sink", "on_notice", e)

    async def _await(self, ticket: int, role: str, method: str, pending: Any) -> None:
        try:
            answer = await pending
        except Exception as e:  # noqa: BLE001
            self._failed(ticket, role, method, e)
        else:
            self._answer(ticket, role, method, answer)
        self._pump()

    def _answer(self, ticket: int, role: str, method: str, answer: Any) -> None:
        try:
            self._pipeline.answer(self._now(), ticket, answer)
        except ShardlineError as e:  # the answer did not fit; the call counted as failed
            self._keep(role, method, e)

    def _failed(self, ticket: int, role: str, method: str, error: BaseException) -> None:
        self._keep(role, method, error)
        self._pipeline.fail(self._now(), ticket)


class AsyncRegionDriver(_OnTheLoop):
    """A region on the running event loop: the ``RegionDriver``, whose transport and entity
    host are called during each call, with its timers fired by ``run()``.

    Inputs and queries are the ``RegionDriver``'s (``route``, ``receive``, ``home_of``, ...).
    A transport or entity-host method may be a coroutine: it is started as a task and the
    call returns at once; a coroutine ``stop_shard`` counts as "not stopped yet" and the
    region is told the shard stopped when it finishes (unless it returned False, which keeps
    ``shard_stopped`` yours to call). Failures of such tasks are logged on the ``shardline``
    logger and kept for ``take_errors()``.
    """

    def __init__(
        self,
        region_id: str,
        node: str,
        shards: Any,
        *,
        transport: Any,
        host: Any,
        clock: Optional[ClockLike] = None,
        config: Any = None,
    ) -> None:
        super().__init__(clock)
        self._stopped = False
        self._driver = RegionDriver(
            region_id,
            node,
            shards,
            transport=_Awaiting(self, transport, "transport"),
            clock=clock if clock is not None else monotonic_ms,
            host=_Awaiting(self, host, "entity host"),
            config=config,
        )

    #: The driver's inputs: each may set a new deadline, so ``run()`` looks again after it.
    _INPUTS = frozenset(
        {"start", "route", "receive", "shard_stopped", "entity_passivated",
         "coordinator_changed", "region_terminated", "graceful_shutdown"}
    )

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._driver, name)
        if name not in self._INPUTS:
            return attr

        def input(*args: Any, **kwargs: Any) -> Any:
            try:
                return attr(*args, **kwargs)
            finally:
                self._wake()

        return input

    async def run(self) -> None:
        """Fires the region's timers at their deadlines until it has stopped (after
        ``graceful_shutdown``) and no task of its host is running. Starts the region first if
        it is not registered yet."""
        if not self._driver.is_registered:
            self._driver.start()
        await self._run_timers(
            lambda: self._stopped, self._driver.next_deadline, self._driver.poll
        )

    def _schedule(self, role: str, method: str, pending: Any, then: Callable[[Any], None]) -> None:
        async def finish() -> None:
            try:
                answer = await pending
            except Exception as e:  # noqa: BLE001 - reported, not raised
                self._keep(role, method, e)
                return
            then(answer)

        self._spawn(finish())


class _Awaiting:
    """A host object as the synchronous driver sees it: awaitables its methods return run
    as tasks."""

    def __init__(self, owner: AsyncRegionDriver, host: Any, role: str) -> None:
        self._owner = owner
        self._host = host
        self._role = role

    def __call__(self, *args: Any) -> Any:  # a plain callable transport
        return self._run("send", self._host, args)

    def __getattr__(self, method: str) -> Any:
        if method == "stopped":
            return self._stopped
        target = getattr(self._host, method)
        return lambda *args: self._run(method, target, args)

    def _stopped(self) -> Any:
        self._owner._stopped = True
        target = getattr(self._host, "stopped", None)
        return None if target is None else self._run("stopped", target, ())

    def _run(self, method: str, target: Any, args: tuple[Any, ...]) -> Any:
        answer = target(*args)
        if not inspect.isawaitable(answer):
            return answer
        if method == "stop_shard":
            shard = args[0]

            def stopped(done: Any) -> None:
                if done is not False:
                    self._owner.shard_stopped(shard)

            self._owner._schedule(self._role, method, answer, stopped)
            return False
        self._owner._schedule(self._role, method, answer, lambda _: None)
        return None
