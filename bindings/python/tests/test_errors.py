"""One exception class per C status code, and each core error kind arrives as its class."""

import re

import pytest

import shardline
from shardline import errors


def test_one_class_per_status_code(root):
    status_rs = (root / "ffi" / "src" / "status.rs").read_text()
    codes = {int(n): name for name, n in re.findall(r"^\s*(\w+) = (\d+),", status_rs, re.M)}
    assert codes[0] == "Ok"
    for code, name in codes.items():
        if code == 0:
            continue
        cls = errors.error_class(code)
        assert cls.__name__ == f"{name}Error", (code, name)
        assert issubclass(cls, shardline.ShardlineError)
        assert cls.code == code
        screaming = re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()
        assert cls.status == f"SHARDLINE_STATUS_{screaming}"
    assert len({errors.error_class(c) for c in codes if c}) == len(codes) - 1


def small_state(regions=2):
    st = shardline.AllocationState("pekko://sys@h0:1")
    for i in range(regions):
        st.add_member(f"pekko://sys@h{i}:1")
        st.add_region(f"r{i}", f"pekko://sys@h{i}:1")
    return st


def test_invalid_argument():
    with pytest.raises(shardline.InvalidArgumentError, match="relativeLimit"):
        shardline.Strategy("least-shard", relative_limit=7.0)
    with pytest.raises(shardline.InvalidArgumentError, match="unknown variant"):
        shardline.Strategy("most-shard")
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError too
        shardline.AllocationState("no address")
    with pytest.raises(shardline.InvalidArgumentError, match="handoffTimeoutMs"):
        shardline.Coordinator("least-shard", "pekko://s@h:1", {"handoff_timeout_ms": 0})
    # The constructors name the argument that is wrong, as Node's name their options.
    with pytest.raises(shardline.InvalidArgumentError, match="^self_address: "):
        shardline.Coordinator("least-shard", "no address")
    with pytest.raises(shardline.InvalidArgumentError, match="^node: "):
        shardline.Region("r1", "no address", {"kind": "pekko", "numberOfShards": 4})
    with pytest.raises(shardline.InvalidArgumentError, match="^shard extractor: "):
        shardline.Region("r1", "pekko://s@h:1", {"kind": "pekko"})
    with pytest.raises(shardline.InvalidArgumentError, match="numberOfShards must be >= 1"):
        shardline.Region("r1", "pekko://s@h:1", {"kind": "pekko", "numberOfShards": 0})
    # Something that is not a configuration object names the argument it was passed as.
    with pytest.raises(shardline.InvalidArgumentError, match="^shard extractor: expected a configuration"):
        shardline.Region("r1", "pekko://s@h:1", 5)
    with pytest.raises(shardline.InvalidArgumentError, match="^config: expected a configuration"):
        shardline.Coordinator("least-shard", "pekko://s@h:1", [1])
    with pytest.raises(shardline.InvalidArgumentError, match="^strategy: expected a configuration"):
        shardline.Coordinator(42, "pekko://s@h:1")


def test_invalid_state():
    st = small_state()
    st.add_shard("r0", "s")
    with pytest.raises(shardline.InvalidStateError, match="already allocated"):
        st.add_shard("r1", "s")
    with pytest.raises(shardline.InvalidStateError, match="not allocated"):
        st.remove_shard("nope")


def test_no_candidates():
    with pytest.raises(shardline.NoCandidatesError):
        shardline.Strategy("actor-ts-hash").allocate(shardline.AllocationState(), "s")


def test_null_pointer():
    with pytest.raises(shardline.NullPointerError, match="strategy"):
        shardline.Coordinator(None, "pekko://s@h:1")
    with pytest.raises(TypeError):  # NullPointerError is a TypeError too
        shardline.RegionDriver("r", "pekko://s@h:1", {"kind": "pekko", "numberOfShards": 4},
                               transport=print, clock=shardline.ManualClock(), host=None)


def test_callback_failed_on_a_wrong_return_type():
    class Bad:
        def allocate(self, state, shard, requester):
            return 42

    with pytest.raises(shardline.CallbackFailedError, match="returned int"):
        shardline.Strategy(Bad()).allocate(small_state(), "s")

    class Twice:
        def allocate(self, state, shard, requester):
            return None

        def rebalance(self, state, in_progress):
            return ["a", "a"]

    st = small_state()
    st.add_shard("r0", "a")
    with pytest.raises(shardline.InvalidStateError, match="twice"):
        shardline.Strategy(Twice()).rebalance(st)


def test_panic_becomes_panic_error():
    with pytest.raises(shardline.PanicError, match="deliberate panic"):
        shardline._native._panic_for_test()


def test_region_refusal_says_why():
    clock = shardline.ManualClock(0)
    sent = []
    r = shardline.RegionDriver(
        "r1", "pekko://s@h:1", {"kind": "pekko", "number_of_shards": 4},
        transport=sent.append, clock=clock,
        host=type("H", (), {"start_shard": lambda *a: None, "deliver": lambda *a: None,
                            "stop_shard": lambda *a: True})(),
        config={"buffer_capacity": 1},
    )
    r.start()
    r.route("e1", b"1")
    with pytest.raises(shardline.InvalidStateError, match="buffer is full") as info:
        r.route("e2", b"2")
    assert info.value.reason == "buffer-full"
    assert info.value.entity == "e2"
    assert r.buffered == 1
