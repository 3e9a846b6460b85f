"""Tests of the Python node (``node.py``): its frames are the Rust node's, its clocks hold under
libfaketime, its membership renews and lapses on etcd as the Rust node's does, and two Python
nodes deliver messages through each other and survive one's death.

    python -m unittest cluster/python/test_node.py

The etcd tests use SHARDLINE_ETCD_ENDPOINTS, or an ``etcd`` on PATH started for them, and are
skipped without either; the clock test needs libfaketime.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import node  # noqa: E402

NODE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node.py")
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def body(frame: dict) -> str:
    data = node.frame_bytes(frame)
    assert int.from_bytes(data[:4], "big") == len(data) - 4
    return data[4:].decode()


class Frames(unittest.TestCase):
    # The texts `wire.rs`'s `frames_have_the_forms_the_python_node_speaks` pins on its side.
    FORMS = [
        ({"frame": "bounce", "shard": "3", "entity": "e1", "payload": b"17"},
         '{"frame":"bounce","shard":"3","entity":"e1","payload":"MTc="}'),
        ({"frame": "coordinatorChanged"}, '{"frame":"coordinatorChanged"}'),
        ({"frame": "route", "entity": "e1", "message": 17},
         '{"frame":"route","entity":"e1","message":17}'),
        ({"frame": "ack", "message": 17, "accepted": True, "region": "n0-1"},
         '{"frame":"ack","message":17,"accepted":true,"region":"n0-1"}'),
        ({"frame": "envelope", "envelope": {
            "from": {"region": "a-1"}, "to": {"region": "b-2"},
            "message": {"forward": {"shard": "3", "entity": "e1", "payload": b"17"}}}},
         '{"frame":"envelope","envelope":{"from":{"region":"a-1"},"to":{"region":"b-2"},'
         '"message":{"forward":{"shard":"3","entity":"e1","payload":"MTc="}}}}'),
    ]

    def test_frames_are_written_and_read_as_the_rust_node_does(self):
        for frame, text in self.FORMS:
            self.assertEqual(body(frame), text)
            self.assertEqual(node.parse_frame(text.encode()), frame)

    def test_bad_frames_are_refused_naming_what_is_wrong(self):
        for text, why in [
            (b'{"x":', "bad frame"),
            (b"[1]", "not a JSON object"),
            (b'{"frame":"nope"}', "unknown frame kind 'nope'"),
            (b'{"frame":"route","entity":"e1"}', "'message' is missing"),
            (b'{"frame":"route","entity":"e1","message":true}', "'message' is missing or not"),
            (b'{"frame":"route","entity":"e1","message":-1}', "not a u64"),
            (b'{"frame":"bounce","shard":"1","entity":"e","payload":"%%"}', "payload"),
            (b'{"frame":"envelope","envelope":{"from":"coordinator"}}', "bad frame"),
        ]:
            with self.assertRaises(ValueError) as e:
                node.parse_frame(text)
            self.assertIn(why, str(e.exception))

    def test_frames_over_the_limit_are_refused_and_a_close_between_frames_ends_the_stream(self):
        async def read(data: bytes):
            reader = asyncio.StreamReader()
            reader.feed_data(data)
            reader.feed_eof()
            return [await node.read_frame(reader), await node.read_frame(reader)]

        ok = node.frame_bytes({"frame": "coordinatorChanged"})
        self.assertEqual(asyncio.run(read(ok)), [{"frame": "coordinatorChanged"}, None])
        with self.assertRaisesRegex(ValueError, "over the 16777216-byte limit"):
            asyncio.run(read((2**32 - 1).to_bytes(4, "big")))

    def test_message_ids_parse_as_rust_parses_a_u64(self):
        for payload, m in [(b"17", 17), (b"+5", 5), (b"", None), (b"x1", None),
                           (b"-1", None), (str(2**64).encode(), None), ("²".encode(), None)]:
            self.assertEqual(node.message_id(payload), m, payload)


class Rules(unittest.TestCase):
    def test_the_local_deadline_ends_before_etcd_can_expire_the_key(self):
        # 5 s granted: 500 ms margin and 50 ms for clock rate, as membership.rs's test.
        self.assertEqual(node.deadline(1_000, 5), 1_000 + 5_000 - 550)
        self.assertEqual(node.deadline(1_000, 60), 1_000 + 60_000 - 1_000 - 600)
        self.assertEqual(node.deadline(1_000, 0), 1_000, "an ended lease gives no time")

    def test_bad_flags_get_the_rust_nodes_messages(self):
        base = ["--etcd", "http://127.0.0.1:1", "--history", "/nonexistent"]
        for extra, message in [
            (["--name", "a/b"], '--name "a/b": use letters, digits'),
            (["--name", "a", "--shards", "0"], "--shards 0: must be in 1..=100000"),
            (["--name", "a", "--ttl-ms", "1999"], "--ttl-ms 1999: must be at least 2000"),
            (["--name", "a", "--worker-bits", "11"], "--worker-bits 11: must be in 1..=10"),
            (["--name", "a", "--listen", "localhost"], "--listen localhost: not an address"),
        ]:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(node.main(base + extra), 2)
            self.assertIn(message, err.getvalue())

    def test_history_lines_are_whole_json_objects_stamped_with_true_time(self):
        with tempfile.TemporaryDirectory() as d:
            h = node.History(os.path.join(d, "r-1.jsonl"), "r-1")
            before = time.time_ns() // 1_000
            h.record("deliver", {"s": "3", "e": "e1", "m": 17})
            h.record("directive-refused", {})
            with open(os.path.join(d, "r-1.jsonl")) as f:
                lines = [json.loads(line) for line in f]
        self.assertEqual([(x["by"], x["k"]) for x in lines],
                         [("r-1", "deliver"), ("r-1", "directive-refused")])
        self.assertEqual((lines[0]["s"], lines[0]["e"], lines[0]["m"]), ("3", "e1", 17))
        self.assertLessEqual(abs(lines[0]["t"] - before), 1_000_000)

    def test_a_stop_takes_as_long_as_the_stop_delay_file_says(self):
        class NoFence:
            def check(self) -> None:
                pass

        with tempfile.TemporaryDirectory() as d:
            h = node.History(os.path.join(d, "r-1.jsonl"), "r-1")
            delay = os.path.join(d, "n.stopdelay")
            entities = node.Entities(h, NoFence(), None, delay)
            self.assertIs(entities.stop_shard("1"), True, "no file: stopped at once")
            with open(delay, "w") as f:
                f.write("150\n")
            stopping = entities.stop_shard("2")
            self.assertIsNot(stopping, True)
            started = time.monotonic()
            asyncio.run(stopping)
            self.assertGreaterEqual(time.monotonic() - started, 0.14)
            with open(delay, "w") as f:
                f.write("0\n")
            self.assertIs(entities.stop_shard("3"), True)
            with open(os.path.join(d, "r-1.jsonl")) as f:
                lines = [json.loads(line) for line in f]
        self.assertEqual([(x["k"], x["s"], x.get("ms")) for x in lines],
                         [("stop", "1", None), ("stop", "2", 150), ("stopped", "2", None),
                          ("stop", "3", None)])


@unittest.skipUnless(os.path.exists(FAKETIME), "no libfaketime")
class UnderFaketime(unittest.TestCase):
    def test_true_time_and_sleeping_hold_while_the_wall_clock_is_skewed(self):
        with tempfile.TemporaryDirectory() as d:
            skew = os.path.join(d, "skew")
            with open(skew, "w") as f:
                f.write("+60s\n")
            env = dict(os.environ, LD_PRELOAD=FAKETIME, FAKETIME_TIMESTAMP_FILE=skew,
                       FAKETIME_DONT_FAKE_MONOTONIC="1", FAKETIME_CACHE_DURATION="1")
            probe = ("import sys, time; sys.path.insert(0, sys.argv[1]); import node; "
                     "t = node.mono_ms(); node.nap(0.2); slept = node.mono_ms() - t; "
                     "print(node.true_us(), node.wall_ms(), slept)")
            out = subprocess.run([sys.executable, "-c", probe, os.path.dirname(NODE)], env=env,
                                 capture_output=True, text=True, check=True).stdout
        true_us, skewed_ms, slept = map(int, out.split())
        now_us = time.time_ns() // 1_000
        self.assertLess(abs(true_us - now_us), 2_000_000, "history stamps stay true")
        self.assertLess(abs(skewed_ms - now_us // 1_000 - 60_000), 2_000, "the skew took")
        self.assertTrue(190 <= slept < 1_000, slept)


@contextlib.contextmanager
def etcd_endpoint():
    if os.environ.get("SHARDLINE_ETCD_ENDPOINTS"):
        yield os.environ["SHARDLINE_ETCD_ENDPOINTS"].split(",")[0]
        return
    if shutil.which("etcd") is None:
        raise unittest.SkipTest("no etcd")
    data = tempfile.mkdtemp(prefix="shardline-pynode-etcd-")
    client, peer = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        ["etcd", "--name=t", f"--data-dir={data}/data", f"--listen-client-urls={client}",
         f"--advertise-client-urls={client}", f"--listen-peer-urls={peer}",
         f"--initial-advertise-peer-urls={peer}", f"--initial-cluster=t={peer}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                node.Rotation([client]).call("/v3/kv/range", {"key": node._b64("probe")})
                break
            except Exception:  # noqa: BLE001 - not up yet
                node.nap(0.1)
        yield client
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)


class OnEtcd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._etcd = etcd_endpoint()
        cls.endpoint = cls._etcd.__enter__()

    @classmethod
    def tearDownClass(cls):
        cls._etcd.__exit__(None, None, None)

    def member(self, ns: str, region: str, endpoints: list[str]) -> node.Membership:
        info = {"node": region, "region": region, "address": f"pekko://{region}@127.0.0.1:1",
                "listen": "127.0.0.1:1"}
        m = node.Membership(endpoints, ns, info, 2_000)
        m.join()
        return m

    def wait_for(self, what, seconds: float = 5):
        give_up = time.monotonic() + seconds
        while not what():
            self.assertLess(time.monotonic(), give_up, "timed out")
            node.nap(0.05)

    def test_members_see_each_other_oldest_first_and_a_lapsed_lease_fences(self):
        ns = f"/pynode-test/{uuid.uuid4()}"
        # A dead endpoint first: registration and polls move on to the live one.
        a = self.member(ns, "a-1", ["http://127.0.0.1:1", self.endpoint])
        b = self.member(ns, "b-2", [self.endpoint])
        self.wait_for(lambda: len(a.view()[1]) == 2 and len(b.view()[1]) == 2)
        members = b.view()[1]
        self.assertLess(members["a-1"][1], members["b-2"][1], "create revisions by age")
        self.assertEqual(members["a-1"][0]["address"], "pekko://a-1@127.0.0.1:1")
        renewed = a.valid_until
        self.assertGreater(renewed, node.mono_ms())
        self.wait_for(lambda: a.valid_until > renewed, 2)
        # etcd ends a's lease: b sees a removed, a's deadline runs out and is not renewed.
        a.rotation.call("/v3/lease/revoke", {"ID": a.lease})
        self.wait_for(lambda: "a-1" not in b.view()[1], 2)
        self.wait_for(lambda: node.mono_ms() >= a.valid_until, 2)
        late = a.valid_until
        node.nap(0.6)
        self.assertEqual(a.valid_until, late)

    def test_two_python_nodes_route_through_each_other_and_survive_a_kill(self):
        ns = f"/pynode-test/{uuid.uuid4()}"
        with tempfile.TemporaryDirectory() as d:
            ports = [free_port(), free_port()]
            procs = []
            for i, port in enumerate(ports):
                with open(os.path.join(d, f"p{i}.log"), "w") as log:
                    procs.append(subprocess.Popen(
                        [sys.executable, NODE, "--name", f"p{i}", "--incarnation", str(i + 1),
                         "--listen", f"127.0.0.1:{port}", "--etcd", self.endpoint,
                         "--namespace", ns, "--history", d, "--shards", "6",
                         "--ttl-ms", "2000", "--rebalance-interval-ms", "300"],
                        stderr=log,
                    ))
            try:
                # Rounds of messages through both nodes until the rebalance has given the
                # second node shards and both have delivered.
                sent, owners = 0, set()
                while owners != {"p0-1", "p1-2"}:
                    self.assertLess(sent, 400, f"only {owners} delivered")
                    acks = self.route(ports, range(sent + 1, sent + 21))
                    self.assertEqual({a["region"] for a in acks}, {"p0-1", "p1-2"})
                    self.assertTrue(all(a["accepted"] for a in acks))
                    sent += 20
                    self.wait_for(lambda: self.delivered(d) >= set(range(1, sent + 1)))
                    owners = {h["by"] for h in self.lines(d) if h["k"] == "deliver"}
                procs[0].kill()
                procs[0].wait()
                self.wait_for(lambda: any(h["k"] == "removed" for h in self.lines(d)), 6)
                acks = self.route(ports[1:], range(1_000, 1_021))
                self.assertTrue(all(a["accepted"] for a in acks))
                self.wait_for(lambda: self.delivered(d) >= set(range(1_000, 1_021)), 10)
                self.assertIsNone(procs[1].poll(), "the survivor runs on")
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
            lines = self.lines(d)
        delivered = [h["m"] for h in lines if h["k"] == "deliver"]
        self.assertEqual(len(delivered), len(set(delivered)), "no message delivered twice")
        ids = [h["id"] for h in lines if h["k"] == "id"]
        self.assertGreater(len(ids), 20)
        self.assertEqual(len(ids), len(set(ids)), "no Snowflake id issued twice")

    def route(self, ports: list[int], messages) -> list[dict]:
        acks = []
        conns = []
        for port in ports:
            for _ in range(100):
                try:
                    conns.append(socket.create_connection(("127.0.0.1", port), timeout=5))
                    break
                except OSError:
                    node.nap(0.1)
        for m in messages:
            c = conns[m % len(conns)]
            c.sendall(node.frame_bytes({"frame": "route", "entity": f"e{m}", "message": m}))
            head = c.recv(4, socket.MSG_WAITALL)
            acks.append(node.parse_frame(c.recv(int.from_bytes(head, "big"), socket.MSG_WAITALL)))
        for c in conns:
            c.close()
        return acks

    @staticmethod
    def lines(d: str) -> list[dict]:
        out = []
        for name in os.listdir(d):
            if name.endswith(".jsonl"):
                with open(os.path.join(d, name)) as f:
                    out += [json.loads(x) for x in f if x.endswith("\n")]
        return out

    def delivered(self, d: str) -> set[int]:
        return {h["m"] for h in self.lines(d) if h["k"] == "deliver"}


if __name__ == "__main__":
    unittest.main()
