#!/usr/bin/env python3
"""One cluster node in Python, through the binding: a drop-in for ``shardline-cluster node``.

A shard region and a standby coordinator run by the asyncio drivers (``AsyncRegionDriver``,
``AsyncCoordinatorDriver``) on one event loop, the coordinator lease and the lease-bound
state store on etcd (``shardline.Etcd``), a worker-id holder issuing a Snowflake id every
50 ms, and entities that record what they receive. It speaks the Rust node's frames, writes
its history lines and registers in etcd the same way, so Rust and Python nodes form one
cluster and the campaign's checker reads both (see ``cluster/src/node.rs``, which this
mirrors piece by piece, and ``cluster/README.md``).

Only the standard library and ``shardline``. The binding has no raw etcd key-value API, so
membership talks to etcd's v3 JSON gateway over HTTP, on a thread of its own. Everything that
blocks (membership, worker ids, the etcd lease and store calls) runs off the loop.

    python cluster/python/node.py --name p --etcd http://127.0.0.1:2379 --history /tmp/demo
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import ctypes
import ipaddress
import json
import logging
import os
import platform
import queue
import socket
import sys
import threading
import time
import urllib.request
from typing import Any, Callable, Optional

import shardline

# ---- time ------------------------------------------------------------------------------------


def mono_ms() -> int:
    """This process's monotonic clock (which runs on while the process is stopped, so a paused
    process sees the pause when it wakes). The drivers, the leases and the fence all use it."""
    return time.monotonic_ns() // 1_000_000


def nap(seconds: float) -> None:
    """Sleeps. Not ``time.sleep``: under libfaketime (the campaign's clock skew) it fails with
    EINVAL, since it waits with clock_nanosleep on an absolute monotonic deadline, which
    libfaketime 0.9.10 mangles; a timed wait on an event sleeps correctly."""
    if seconds > 0:
        threading.Event().wait(seconds)


_SYS_CLOCK_GETTIME = {"x86_64": 228, "aarch64": 113, "riscv64": 113, "ppc64le": 246}.get(
    platform.machine()
)
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def true_us() -> int:
    """The machine's real time in microseconds, read with the system call itself rather than
    through the C library: a process whose clock the campaign skews (libfaketime replaces the
    library call) still stamps its history with true time, so the checker can order
    everything."""
    if _SYS_CLOCK_GETTIME is not None:
        ts = _Timespec()
        clock_realtime = 0
        r = _libc.syscall(
            ctypes.c_long(_SYS_CLOCK_GETTIME), ctypes.c_long(clock_realtime), ctypes.byref(ts)
        )
        if r == 0:
            return ts.tv_sec * 1_000_000 + ts.tv_nsec // 1_000
    return time.time_ns() // 1_000


def wall_ms() -> int:
    """The process's own idea of the time (skewed when the campaign skews it)."""
    return time.time_ns() // 1_000_000


# ---- history -----------------------------------------------------------------------------------


class History:
    """The node's history file: one JSON line per thing it saw or did, each one unbuffered
    ``write`` on a file opened for appending, so a line that returned survives ``kill -9``."""

    def __init__(self, path: str, by: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        self.by = by
        self.lock = threading.Lock()

    def record(self, kind: str, fields: Optional[dict[str, Any]] = None) -> None:
        line = {"t": true_us(), "by": self.by, "k": kind, **(fields or {})}
        data = (json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        with self.lock:
            try:
                if os.write(self.fd, data) != len(data):
                    raise OSError("short write")
            except OSError as e:
                # The history would be incomplete, which the checker cannot tell from a
                # fault: say so where the campaign log shows it.
                print(f"history: cannot append to the history of {self.by}: {e}", file=sys.stderr)


# ---- membership on etcd ------------------------------------------------------------------------

POLL_S = 0.25
OP_TIMEOUT_S = 1.5
# Requests go straight to the etcd members, whatever proxy the environment names.
_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def deadline(sent: int, ttl_s: int) -> int:
    """The local deadline for a renewal sent at ``sent`` that etcd granted ``ttl_s`` seconds:
    the TTL less a margin (10%, 0.5-1 s) and 1% for clock rate (``membership.rs``)."""
    ttl = max(ttl_s, 0) * 1_000
    margin = min(max(ttl // 10, 500), 1_000)
    drift = ttl // 100
    return sent + max(ttl - (margin + drift), 0)


def members_prefix(namespace: str) -> str:
    return namespace.rstrip("/") + "/members/"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _prefix_end(prefix: str) -> str:
    raw = bytearray(prefix.encode())
    raw[-1] += 1  # the prefix ends in '/', never in 0xff
    return base64.b64encode(bytes(raw)).decode()


class Rotation:
    """The etcd members, used one at a time, moving on to the next after a failure: a member
    cut off from the network costs one request timeout, not a renewal missed again and
    again."""

    def __init__(self, endpoints: list[str]) -> None:
        self.endpoints = [e if "://" in e else "http://" + e for e in endpoints]
        self.at = 0

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = self.endpoints[self.at].rstrip("/") + path
        request = urllib.request.Request(
            url, json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with _HTTP.open(request, timeout=OP_TIMEOUT_S) as response:
            answer = json.loads(response.read())
        if not isinstance(answer, dict):
            raise ValueError(f"etcd answered {answer!r}")
        return answer

    def next(self) -> None:
        self.at = (self.at + 1) % len(self.endpoints)


class Membership:
    """The node's member key, ``<namespace>/members/<region>``, under a lease of its own kept
    alive on a thread of its own, and the members as etcd has them (polled every 250 ms).

    ``valid_until`` is a deadline on the monotonic clock, from when the last successful
    renewal was *sent*: past it the node may already be removed and must fence itself."""

    def __init__(self, endpoints: list[str], namespace: str, me: dict[str, str], ttl_ms: int):
        self.rotation = Rotation(endpoints)
        self.prefix = members_prefix(namespace)
        self.me = me
        self.ttl_ms = ttl_ms
        self.lock = threading.Lock()
        self.gen = 0
        self.members: dict[str, tuple[dict[str, str], int]] = {}
        self.valid_until = 0
        self.lease: Optional[str] = None

    def join(self) -> None:
        """Registers and starts keeping the key; returns once the key is in etcd and read
        back."""
        ready: queue.Queue[Optional[str]] = queue.Queue()
        threading.Thread(target=self._keep, args=(ready,), name="membership", daemon=True).start()
        try:
            failure = ready.get(timeout=15)
        except queue.Empty:
            raise RuntimeError("could not join through etcd within 15 s") from None
        if failure is not None:
            raise RuntimeError(failure)

    def generation(self) -> int:
        with self.lock:
            return self.gen

    def view(self) -> tuple[int, dict[str, tuple[dict[str, str], int]]]:
        """The view's generation (bumped by every successful poll) and the members by region
        id, each with its key's create revision (Pekko's upNumber)."""
        with self.lock:
            return self.gen, dict(self.members)

    def _register(self, key: str, value: str, ttl_s: int) -> str:
        give_up = mono_ms() + int(2 * OP_TIMEOUT_S * 1_000)
        while True:
            sent = mono_ms()
            try:
                grant = self.rotation.call("/v3/lease/grant", {"TTL": ttl_s})
                lease = str(grant["ID"])
                self.rotation.call(
                    "/v3/kv/put", {"key": _b64(key), "value": _b64(value), "lease": lease}
                )
                self.valid_until = deadline(sent, int(grant.get("TTL", 0)))
                return lease
            except Exception as e:  # noqa: BLE001 - any failure: try the next member
                self.rotation.next()
                if mono_ms() >= give_up:
                    raise RuntimeError(f"cannot register in etcd: {e}") from None

    def _read(self) -> dict[str, tuple[dict[str, str], int]]:
        answer = self.rotation.call(
            "/v3/kv/range", {"key": _b64(self.prefix), "range_end": _prefix_end(self.prefix)}
        )
        members = {}
        for kv in answer.get("kvs", []):
            try:
                m = json.loads(base64.b64decode(kv.get("value", "")))
                info = {k: m[k] for k in ("node", "region", "address", "listen")}
                if not all(isinstance(v, str) for v in info.values()):
                    raise ValueError("a field is not a string")
                members[info["region"]] = (info, int(kv["create_revision"]))
            except (ValueError, KeyError, TypeError) as e:
                print(f"membership: ignoring a malformed member record: {e}", file=sys.stderr)
        return dict(sorted(members.items()))

    def _keep(self, ready: queue.Queue[Optional[str]]) -> None:
        key = self.prefix + self.me["region"]
        value = json.dumps(self.me, separators=(",", ":"))
        try:
            lease = self.lease = self._register(key, value, max(-(-self.ttl_ms // 1_000), 1))
        except RuntimeError as e:
            ready.put(str(e))
            return
        renew_every = max(self.ttl_ms // 5, 200)
        next_renew = mono_ms() + renew_every
        announced = lost = False
        while True:
            if not lost and mono_ms() >= next_renew:
                sent = mono_ms()
                next_renew = sent + renew_every
                try:
                    result = self.rotation.call("/v3/lease/keepalive", {"ID": lease})["result"]
                    ttl = int(result.get("TTL", 0))  # left out when 0: the lease is gone
                    if ttl > 0:
                        self.valid_until = deadline(sent, ttl)
                    else:
                        # This incarnation is over; the deadline runs out.
                        lost = True
                except Exception:  # noqa: BLE001 - an unreachable or failing member
                    self.rotation.next()
                    # Try the next member at once rather than a renewal period later.
                    next_renew = mono_ms()
            try:
                members = self._read()
            except Exception:  # noqa: BLE001
                self.rotation.next()
            else:
                with self.lock:
                    self.gen += 1
                    self.members = members
                if not announced:
                    announced = True
                    ready.put(None)
            nap(POLL_S)


# ---- frames ------------------------------------------------------------------------------------

MAX_FRAME = 16 << 20


def frame_bytes(frame: dict[str, Any]) -> bytes:
    """A frame as ``wire.rs`` writes it: a 4-byte big-endian length, then the JSON value."""
    kind = frame["frame"]
    if kind == "envelope":
        body = '{"frame":"envelope","envelope":%s}' % shardline.encode_envelope(frame["envelope"])
    elif kind == "bounce":
        body = json.dumps(
            {"frame": "bounce", "shard": frame["shard"], "entity": frame["entity"],
             "payload": base64.b64encode(frame["payload"]).decode()},
            separators=(",", ":"),
        )
    else:
        body = json.dumps(frame, separators=(",", ":"))
    data = body.encode()
    return len(data).to_bytes(4, "big") + data


def _field(obj: dict[str, Any], name: str, kind: type) -> Any:
    v = obj.get(name)
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise ValueError(f"bad frame: {name!r} is missing or not a {kind.__name__}")
    return v


def parse_frame(body: bytes) -> dict[str, Any]:
    """A frame's JSON body, checked; the envelope of an ``envelope`` frame and the payload of
    a ``bounce`` decoded. ValueError names what is wrong."""
    try:
        obj = json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"bad frame: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError("bad frame: not a JSON object")
    kind = _field(obj, "frame", str)
    if kind == "envelope":
        try:
            env = shardline.decode_envelope(json.dumps(_field(obj, "envelope", dict)))
        except shardline.ShardlineError as e:
            raise ValueError(f"bad frame: {e}") from None
        return {"frame": kind, "envelope": env}
    if kind == "coordinatorChanged":
        return {"frame": kind}
    if kind == "bounce":
        try:
            payload = base64.b64decode(_field(obj, "payload", str), validate=True)
        except ValueError as e:
            raise ValueError(f"bad frame: payload: {e}") from None
        return {"frame": kind, "shard": _field(obj, "shard", str),
                "entity": _field(obj, "entity", str), "payload": payload}
    if kind == "route":
        message = _field(obj, "message", int)
        if not 0 <= message < 1 << 64:
            raise ValueError(f"bad frame: message {message} is not a u64")
        return {"frame": kind, "entity": _field(obj, "entity", str), "message": message}
    if kind == "ack":
        return {"frame": kind, "message": _field(obj, "message", int),
                "accepted": _field(obj, "accepted", bool), "region": _field(obj, "region", str)}
    raise ValueError(f"bad frame: unknown frame kind {kind!r}")


async def read_frame(reader: asyncio.StreamReader) -> Optional[dict[str, Any]]:
    """The next frame, or None when the peer closed the connection between frames."""
    try:
        head = await reader.readexactly(4)
    except asyncio.IncompleteReadError:
        return None
    n = int.from_bytes(head, "big")
    if n > MAX_FRAME:
        raise ValueError(f"frame of {n} bytes is over the {MAX_FRAME}-byte limit")
    return parse_frame(await reader.readexactly(n))


def message_id(payload: bytes) -> Optional[int]:
    """The payload of a client message is its number in decimal (a u64, as Rust parses it)."""
    digits = payload[1:] if payload.startswith(b"+") else payload
    if not digits or not digits.isdigit():  # bytes.isdigit: ASCII digits only
        return None
    m = int(digits)
    return m if m < 1 << 64 else None


def forward_id(env: dict[str, Any]) -> Optional[int]:
    forward = env["message"].get("forward")
    return None if forward is None else message_id(forward["payload"])


def host_port(addr: str) -> tuple[str, int]:
    """``127.0.0.1:7000`` or ``[::1]:7000``; ValueError otherwise."""
    host, sep, port = addr.rpartition(":")
    if not sep:
        raise ValueError("no port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    ipaddress.ip_address(host)
    if not port.isdigit() or int(port) > 65535:
        raise ValueError(f"bad port {port!r}")
    return host, int(port)


# ---- the node ----------------------------------------------------------------------------------


class Fence:
    """Exits the process once the membership deadline has passed: from then on other nodes
    may already have taken this node's shards."""

    def __init__(self, membership: Membership, history: History) -> None:
        self.membership = membership
        self.history = history

    def check(self) -> None:
        until = self.membership.valid_until
        now = mono_ms()
        if now >= until:
            self.history.record("fenced", {"lateMs": now - until})
            os._exit(3)


class Router:
    """Where frames go: to this node's own queue, or to a peer's writer task."""

    def __init__(self, me: str, events: asyncio.Queue[Any]) -> None:
        self.me = me
        self.events = events
        self.members: dict[str, dict[str, str]] = {}
        self.writers: dict[str, asyncio.Queue[Optional[bytes]]] = {}
        # The loop keeps only weak references to tasks.
        self.tasks: set[asyncio.Task[None]] = set()

    def send_to(self, region: str, frame: dict[str, Any], data: Optional[bytes] = None) -> bool:
        if region == self.me:
            # Handled after the call that sent it: a callback must not re-enter its driver.
            self.events.put_nowait((frame, None))
            return True
        info = self.members.get(region)
        if info is None:
            return False
        out = self.writers.get(region)
        if out is None:
            out = self.writers[region] = asyncio.Queue()
            task = asyncio.ensure_future(write_to(info["listen"], out))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        out.put_nowait(data if data is not None else frame_bytes(frame))
        return True

    def broadcast(self, frame: dict[str, Any]) -> None:
        data = frame_bytes(frame)
        for region in list(self.members):
            self.send_to(region, frame, data)

    def drop(self, region: str) -> None:
        """Closes the peer's writer once it has tried what is queued."""
        out = self.writers.pop(region, None)
        if out is not None:
            out.put_nowait(None)


async def write_to(addr: str, out: asyncio.Queue[Optional[bytes]]) -> None:
    """One connection per peer, in send order; a frame that cannot be written after a
    reconnect is dropped (the peer is dead or cut off, which the protocol and the checker
    account for)."""
    try:
        host, port = host_port(addr)
    except ValueError:
        print(f"node: peer address {addr!r} does not parse; dropping its frames", file=sys.stderr)
        return
    conn: Optional[asyncio.StreamWriter] = None
    while (data := await out.get()) is not None:
        for _ in range(2):
            if conn is None:
                try:
                    _, conn = await asyncio.wait_for(asyncio.open_connection(host, port), 1)
                    conn.get_extra_info("socket").setsockopt(
                        socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
                    )
                except (OSError, asyncio.TimeoutError):
                    conn = None
                    break
            try:
                conn.write(data)
                await conn.drain()
                break
            except OSError:
                conn.close()
                conn = None
    if conn is not None:
        conn.close()


class Wire:
    """The drivers' transport: coordinator-bound envelopes go to every member's coordinator
    (the standby ones ignore them), region-bound ones to that region."""

    def __init__(self, router: Router, history: History) -> None:
        self.router = router
        self.history = history

    def send(self, envelope: dict[str, Any]) -> None:
        frame = {"frame": "envelope", "envelope": envelope}
        to = envelope["to"]
        if to == "coordinator":
            self.router.broadcast(frame)
            return
        m = forward_id(envelope)
        if m is not None:
            self.history.record("fwd", {"m": m, "to": to["region"]})
        if not self.router.send_to(to["region"], frame) and m is not None:
            self.history.record("fwd-nowhere", {"m": m, "to": to["region"]})


def stop_delay_ms(path: Optional[str]) -> int:
    """What the stop-delay file asks for now; unreadable or malformed reads as no delay, as
    in the Rust node."""
    if path is None:
        return 0
    try:
        with open(path) as f:
            ms = int(f.read().strip())
    except (OSError, ValueError):
        return 0
    return max(ms, 0)


class Entities:
    """The region's entity host: entities are the history. Nothing touches an entity once
    the membership deadline has passed. Entities may take a while to stop
    (``--stop-delay-file``), long enough for a hand-off to time out."""

    def __init__(self, history: History, fence: Fence, router: Router,
                 stop_delay_file: Optional[str]) -> None:
        self.history = history
        self.fence = fence
        self.router = router
        self.stop_delay_file = stop_delay_file
        # The region whose message is being handled, for sending back what cannot be kept.
        self.origin: Optional[str] = None

    def start_shard(self, shard: str, entities: list[str]) -> None:
        self.fence.check()
        self.history.record("start", {"s": shard, "entities": len(entities)})

    def deliver(self, shard: str, entity: str, payload: bytes) -> None:
        self.fence.check()
        self.history.record("deliver", {"s": shard, "e": entity, "m": message_id(payload)})

    def stop_shard(self, shard: str) -> Any:
        ms = stop_delay_ms(self.stop_delay_file)
        if ms == 0:
            self.history.record("stop", {"s": shard})
            return True
        self.history.record("stop", {"s": shard, "ms": ms})

        async def stopping() -> None:
            # The driver reports the stop to the region when this finishes.
            await asyncio.sleep(ms / 1_000)
            self.fence.check()
            self.history.record("stopped", {"s": shard})

        return stopping()

    def undeliverable(self, shard: str, entity: str, payload: bytes, reason: str) -> None:
        origin = self.origin if self.origin in self.router.members else self.router.me
        self.history.record(
            "bounce", {"m": message_id(payload), "s": shard, "to": origin, "why": reason}
        )
        frame = {"frame": "bounce", "shard": shard, "entity": entity, "payload": payload}
        if not self.router.send_to(origin, frame):
            self.history.record("bounce-nowhere", {"to": origin, "me": self.router.me})


def log_err(what: str, f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        f(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - reported, as the Rust node reports a failed input
        print(f"node: {what}: {e}", file=sys.stderr)


class Node:
    def __init__(self, cfg: argparse.Namespace, me: str, address: str, history: History,
                 membership: Membership, listener: socket.socket, etcd: Any) -> None:
        self.cfg = cfg
        self.me = me
        self.address = address
        self.history = history
        self.membership = membership
        self.fence = Fence(membership, history)
        self.listener = listener
        self.etcd = etcd
        self.known: dict[str, tuple[dict[str, str], int]] = {}
        self.view_gen = 0
        self.quarantined: set[str] = set()
        # After an activation: the restored regions to check once the view is this new.
        self.watch: Optional[tuple[int, list[str]]] = None

    async def run(self) -> None:
        self.events: asyncio.Queue[Any] = asyncio.Queue()
        self.router = Router(self.me, self.events)
        wire = Wire(self.router, self.history)
        self.entities = Entities(self.history, self.fence, self.router, self.cfg.stop_delay_file)
        self.coordinator = shardline.AsyncCoordinatorDriver(
            {"kind": "least-shard"},
            self.address,
            transport=wire,
            lease=self.etcd.lease("coordinator", self.me, self.cfg.ttl_ms),
            store=self.etcd.store("coordinator", bound_to_lease="coordinator"),
            clock=mono_ms,
            config={
                "rebalance_interval_ms": self.cfg.rebalance_interval_ms,
                "handoff_timeout_ms": 10_000,
                "handoff_timeout_policy": self.cfg.handoff_timeout_policy,
                "lease_retry_interval_ms": 1_000,
            },
        )
        self.region = shardline.AsyncRegionDriver(
            self.me,
            self.address,
            {"kind": "pekko", "number_of_shards": self.cfg.shards},
            transport=wire,
            host=self.entities,
            clock=mono_ms,
            config={"retry_interval_ms": 500},
        )
        server = await asyncio.start_server(self.serve, sock=self.listener)
        self.sync_members()
        log_err("coordinator start", self.coordinator.start)
        self.coordinator_notices()
        # The region's run() starts it (registers with the coordinator).
        await asyncio.gather(
            self.coordinator.run(), self.region.run(), self.handle_events(), self.tick(),
            server.serve_forever(),
        )

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A peer's or a client's connection: its frames go to the node's queue, in order;
        a client's ``route`` carries the connection to answer on."""
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer = writer.get_extra_info("peername")
        try:
            while (frame := await read_frame(reader)) is not None:
                reply = writer if frame["frame"] == "route" else None
                self.events.put_nowait((frame, reply))
        except ConnectionResetError:
            pass
        except (OSError, ValueError, asyncio.IncompleteReadError) as e:
            print(f"node: connection from {peer}: {e}", file=sys.stderr)
        finally:
            writer.close()

    async def handle_events(self) -> None:
        while True:
            frame, reply = await self.events.get()
            self.between_frames()
            self.handle(frame, reply)

    async def tick(self) -> None:
        """What happens between frames, at least every 50 ms, as in the Rust node's loop;
        also the notices the drivers' own timers and etcd calls produced meanwhile."""
        while True:
            self.between_frames()
            self.coordinator_notices()
            self.region_notices()
            await asyncio.sleep(0.05)

    def between_frames(self) -> None:
        self.fence.check()
        if self.membership.generation() != self.view_gen:
            self.sync_members()
        self.run_watch()

    def handle(self, frame: dict[str, Any], reply: Optional[asyncio.StreamWriter]) -> None:
        kind = frame["frame"]
        if kind == "envelope":
            self.envelope(frame["envelope"])
        elif kind == "coordinatorChanged":
            log_err("coordinator changed", self.region.coordinator_changed)
            self.region_notices()
        elif kind == "bounce":
            payload = frame["payload"]
            try:
                self.region.route(frame["entity"], payload, shard=frame["shard"])
            except Exception as e:  # noqa: BLE001
                self.history.record("bounce-refused", {"m": message_id(payload), "why": str(e)})
            self.region_notices()
        elif kind == "route":
            self.route(frame["entity"], frame["message"], reply)

    def route(self, entity: str, m: int, reply: Optional[asyncio.StreamWriter]) -> None:
        try:
            shard: Optional[str] = self.region.shard_of(entity)
        except shardline.ShardlineError:
            shard = None
        self.history.record("accept", {"m": m, "s": shard, "e": entity})
        accepted = True
        try:
            self.region.route(entity, str(m).encode())
        except shardline.InvalidStateError as e:
            reason = getattr(e, "reason", None)
            if reason is None:
                print(f"node: route: {e}", file=sys.stderr)
            else:
                self.history.record("reject", {"m": m, "why": reason})
                accepted = False
        except Exception as e:  # noqa: BLE001 - taken, but an output failed
            print(f"node: route: {e}", file=sys.stderr)
        self.region_notices()
        if reply is not None:
            ack = {"frame": "ack", "message": m, "accepted": accepted, "region": self.me}
            reply.write(frame_bytes(ack))

    def envelope(self, env: dict[str, Any]) -> None:
        sender = env["from"]
        if isinstance(sender, dict) and sender["region"] in self.quarantined:
            m = forward_id(env)
            if m is not None:
                self.history.record("quarantined", {"m": m, "from": sender["region"]})
            return
        to = env["to"]
        if to == "coordinator":
            log_err("coordinator receive", self.coordinator.receive, env)
            self.coordinator_notices()
        elif to["region"] == self.me:
            self.entities.origin = sender["region"] if isinstance(sender, dict) else None
            try:
                log_err("region receive", self.region.receive, env)
            finally:
                self.entities.origin = None
            self.region_notices()
        else:
            # For an earlier incarnation of this node.
            m = forward_id(env)
            if m is not None:
                self.history.record("stale", {"m": m, "to": to["region"]})

    def coordinator_notices(self) -> None:
        for n in self.coordinator.take_notices():
            if n["type"] == "active":
                self.history.record("active", {"token": n["token"]})
                self.router.broadcast({"frame": "coordinatorChanged"})
                restored = list(self.coordinator.allocations())
                self.watch = (self.membership.generation() + 2, restored)
            elif n["type"] == "steppedDown":
                self.history.record("stepped-down", {"token": n["token"], "why": n["reason"]})
            elif n["type"] == "handOffTimedOut":
                # Where the shard went tells the checker whether the move was forced.
                self.history.record("handoff-timeout", {
                    "s": n["shard"], "from": n["from"], "to": self.coordinator.home_of(n["shard"]),
                    "policy": n["policy"],
                })

    def region_notices(self) -> None:
        for n in self.region.take_notices():
            if n["type"] == "directiveRefused":
                self.history.record("directive-refused", {})

    def run_watch(self) -> None:
        """Death watch for a restored state, once the membership view postdates the
        activation (Pekko's ``watchStateActors``)."""
        if self.watch is None or self.membership.generation() < self.watch[0]:
            return
        members = self.membership.view()[1]
        restored, self.watch = self.watch[1], None
        if not self.coordinator.is_active:
            return
        for region in restored:
            if region not in members:
                self.history.record("watch-dead", {"r": region})
                log_err("region terminated", self.coordinator.region_terminated, region)
        self.coordinator_notices()

    def sync_members(self) -> None:
        gen, members = self.membership.view()
        if gen == self.view_gen:
            return
        self.view_gen = gen
        added = [m for r, m in members.items() if r not in self.known]
        removed = [info for r, (info, _) in self.known.items() if r not in members]
        self.router.members = {r: info for r, (info, _) in members.items()}
        for info in removed:
            self.router.drop(info["region"])
        for info, revision in added:
            try:
                self.coordinator.member(info["address"], up_number=min(revision, 2**31 - 1))
            except shardline.ShardlineError as e:
                print(f"node: member {info['region']} has a bad address {info['address']!r}: {e}",
                      file=sys.stderr)
        for info in removed:
            region = info["region"]
            self.history.record("removed", {"r": region})
            self.quarantined.add(region)
            log_err("member removed", self.coordinator.member_removed, info["address"])
            log_err("region terminated", self.coordinator.region_terminated, region)
            log_err("region terminated", self.region.region_terminated, region)
            self.region_notices()
        self.coordinator_notices()
        self.known = members


# ---- worker ids --------------------------------------------------------------------------------


class IdClock:
    """Real time for the worker-id holder: the wall clock the campaign may skew, this
    process's monotonic clock, and a sleep that works under libfaketime (see ``nap``)."""

    def wall_ms(self) -> int:
        return wall_ms()

    def monotonic_ms(self) -> int:
        return mono_ms()

    def sleep_until(self, at: int) -> None:
        nap((at - mono_ms()) / 1_000)


def keep_worker_ids(cfg: argparse.Namespace, me: str, history: History, etcd: Any) -> None:
    """Holds a worker id and issues a Snowflake id every 50 ms, recording each; when the id
    is lost it records that and reserves again."""
    clock = IdClock()
    attempt = 0
    while True:
        attempt += 1
        try:
            holder = shardline.WorkerIdHolder.acquire(
                etcd,
                me,
                (cfg.incarnation * 1_000 + attempt) % (1 << 64),
                clock=clock,
                ttl_ms=cfg.ttl_ms,
                worker_bits=cfg.worker_bits,
                policy="lowest",
                seed=cfg.incarnation ^ attempt,
            )
        except Exception as e:  # noqa: BLE001 - recorded; reserving again is the remedy
            history.record("worker-failed", {"why": str(e)})
            nap(1)
            continue
        w = holder.worker_id
        history.record("worker", {"w": w, "epoch": holder.epoch})
        while True:
            nap(0.05)
            try:
                history.record("id", {"w": w, "id": holder.next_id()})
            except Exception as e:  # noqa: BLE001
                history.record("worker-lost", {"w": w, "why": str(e)})
                # Whatever the cause, back off before reserving again rather than churn the
                # registry.
                nap(1)
                break


# ---- the command line --------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="node.py",
        description="Run one node until it is killed (or fences itself, exit code 3): the "
        "Python twin of `shardline-cluster node`.",
    )
    p.add_argument("--name", required=True, help="the node's name; its region id is "
                   "<name>-<incarnation>")
    p.add_argument("--incarnation", type=int, help="tells this process from earlier ones of "
                   "the same node (default: the time now, ms)")
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--etcd", action="append", required=True,
                   help="etcd client URLs, comma-separated")
    p.add_argument("--namespace", default="/shardline-cluster")
    p.add_argument("--history", required=True, help="directory for the node's history file")
    p.add_argument("--shards", type=int, default=30)
    p.add_argument("--ttl-ms", type=int, default=5_000, help="membership session, "
                   "coordinator lease and worker-id tenure time-to-live")
    p.add_argument("--worker-bits", type=int, default=3)
    p.add_argument("--rebalance-interval-ms", type=int, default=2_000)
    p.add_argument("--handoff-timeout-policy", default="keep-owner",
                   choices=["keep-owner", "force-reallocate"],
                   help="what the coordinator does with a hand-off that outlasts its 10 s timeout")
    p.add_argument("--stop-delay-file", help="a file holding how many ms entities take to stop, "
                   "read at every shard stop (absent or 0: at once)")
    cfg = p.parse_args(argv)
    cfg.etcd = [e for arg in cfg.etcd for e in arg.split(",")]
    return cfg


def check_args(cfg: argparse.Namespace) -> Optional[str]:
    """What is wrong with the flags, in the Rust node's words, or None."""
    if not cfg.name or any(c in cfg.name for c in "/@:#? "):
        return f"--name {json.dumps(cfg.name)}: use letters, digits, '-' and '_'"
    if not 1 <= cfg.shards <= 100_000:
        return f"--shards {cfg.shards}: must be in 1..=100000"
    if cfg.ttl_ms < 2_000:
        return f"--ttl-ms {cfg.ttl_ms}: must be at least 2000"
    if not 1 <= cfg.worker_bits <= 10:
        return f"--worker-bits {cfg.worker_bits}: must be in 1..=10"
    if cfg.incarnation is not None and not 0 <= cfg.incarnation < 1 << 64:
        return f"--incarnation {cfg.incarnation}: must be in 0..2^64"
    if not 0 <= cfg.rebalance_interval_ms < 1 << 64:
        return f"--rebalance-interval-ms {cfg.rebalance_interval_ms}: must be in 0..2^64"
    if not all(cfg.etcd):
        return f"--etcd {','.join(cfg.etcd)!r}: an empty endpoint"
    try:
        host_port(cfg.listen)
    except ValueError as e:
        return f"--listen {cfg.listen}: not an address like 127.0.0.1:7000 ({e})"
    return None


def start(cfg: argparse.Namespace) -> None:
    """Starts the node and runs it until the process is killed or fences itself."""
    if cfg.incarnation is None:
        cfg.incarnation = wall_ms()
    me = f"{cfg.name}-{cfg.incarnation}"
    try:
        os.makedirs(cfg.history, exist_ok=True)
        history = History(os.path.join(cfg.history, f"{me}.jsonl"), me)
    except OSError as e:
        raise RuntimeError(f"--history {cfg.history}: {e}") from None
    host, port = host_port(cfg.listen)
    try:
        listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(128)
    except OSError as e:
        raise RuntimeError(f"--listen {cfg.listen}: {e}") from None
    host, port = listener.getsockname()[:2]
    listen = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    # The system name carries the incarnation, so a restarted node is a new member even on
    # the same port, as Pekko's unique address is.
    address = f"pekko://{me}@{host}:{port}"
    info = {"node": cfg.name, "region": me, "address": address, "listen": listen}
    history.record("boot", {"address": address, "listen": listen, "pid": os.getpid(),
                            "policy": cfg.handoff_timeout_policy})
    membership = Membership(cfg.etcd, cfg.namespace, info, cfg.ttl_ms)
    membership.join()
    try:
        id_etcd = shardline.Etcd(cfg.etcd, cfg.namespace, timeout_ms=2_000)
        etcd = shardline.Etcd(cfg.etcd, cfg.namespace, timeout_ms=2_000)
    except shardline.ShardlineError as e:
        raise RuntimeError(str(e)) from None
    threading.Thread(
        target=keep_worker_ids, args=(cfg, me, history, id_etcd), name="worker-id", daemon=True
    ).start()
    node = Node(cfg, me, address, history, membership, listener, etcd)
    asyncio.run(node.run())


def main(argv: list[str]) -> int:
    cfg = parse_args(argv)
    wrong = check_args(cfg)
    if wrong is not None:
        print(f"node.py: {wrong}", file=sys.stderr)
        return 2
    if not shardline.HAS_ETCD:
        print("node.py: this shardline was built without etcd", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, format="%(message)s")
    try:
        start(cfg)
    except RuntimeError as e:
        print(f"node.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
