"""What the binding hands out has the forms of shardline.wire, the TypedDicts generated from the
wire contract (schema/shardline.schema.json): every output, notice, envelope, record and
snapshot of a run, checked key by key, with payloads as bytes."""

import ast
import pathlib
import typing

import pytest

import shardline
from shardline import wire
from test_coordination import StepCluster


def conforms(value, tp, at="value"):
    """Raises AssertionError naming the first place `value` is not a `tp`."""
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        errors = []
        for option in typing.get_args(tp):
            try:
                return conforms(value, option, at)
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(f"{at}: {value!r} matches no option: {errors}")
    if origin is typing.Literal:
        assert value in typing.get_args(tp), f"{at}: {value!r} is not one of {typing.get_args(tp)}"
        return
    if origin is list:
        assert isinstance(value, list), f"{at}: {value!r} is not a list"
        for i, item in enumerate(value):
            conforms(item, typing.get_args(tp)[0], f"{at}[{i}]")
        return
    if origin is dict:
        assert isinstance(value, dict), f"{at}: {value!r} is not a dict"
        for k, item in value.items():
            assert isinstance(k, str), f"{at}: key {k!r}"
            conforms(item, typing.get_args(tp)[1], f"{at}.{k}")
        return
    if typing.is_typeddict(tp):
        assert isinstance(value, dict), f"{at}: {value!r} is not a dict"
        hints = typing.get_type_hints(tp)
        missing = tp.__required_keys__ - value.keys()
        extra = value.keys() - hints.keys()
        assert not missing and not extra, f"{at}: {tp.__name__} missing {missing}, extra {extra}"
        for k, item in value.items():
            conforms(item, hints[k], f"{at}.{k}")
        return
    if tp is type(None):
        assert value is None, f"{at}: {value!r} is not None"
        return
    # bool is an int in Python; an int field must not hold one.
    assert isinstance(value, tp) and not (tp is int and isinstance(value, bool)), (
        f"{at}: {value!r} is not {tp.__name__}"
    )


class Tap:
    """A machine whose polled outputs are also kept in `seen`."""

    def __init__(self, machine, seen):
        self._machine, self._seen = machine, seen

    def __getattr__(self, name):
        return getattr(self._machine, name)

    def poll_output(self):
        o = self._machine.poll_output()
        if o is not None:
            self._seen.append(o)
        return o


class Recorded(StepCluster):
    """A StepCluster that keeps every output it polls."""

    def __init__(self):
        self.coordinator_outputs, self.region_outputs = [], []
        super().__init__()
        self.coordinator = Tap(self.coordinator, self.coordinator_outputs)

    def add_region(self, name, node):
        super().add_region(name, node)
        self.regions[name] = Tap(self.regions[name], self.region_outputs)


@pytest.fixture(scope="module")
def run():
    c = Recorded()
    c.settle()
    c.add_region("a", 1)
    c.add_region("b", 2)
    c.settle()
    for i in range(20):
        c.regions["ab"[i % 2]].route(c.now, f"user-{i}", bytes([i, 0, 255]))
    c.settle()
    c.add_region("n", 3)
    c.settle()
    c.advance(3_000)
    return c


def test_coordinator_outputs_have_the_wire_forms(run):
    kinds = {o["type"] for o in run.coordinator_outputs}
    assert {"send", "lease", "loadState", "persist", "notice"} <= kinds, kinds
    for i, o in enumerate(run.coordinator_outputs):
        conforms(o, wire.CoordinatorOutput, f"coordinator output {i}")


def test_region_outputs_have_the_wire_forms_with_bytes_payloads(run):
    delivers = [o for o in run.region_outputs if o["type"] == "deliver"]
    assert delivers and all(isinstance(o["payload"], bytes) for o in delivers)
    for i, o in enumerate(run.region_outputs):
        conforms(o, wire.RegionOutput, f"region output {i}")


def test_stored_state_and_snapshot_have_the_wire_forms(run):
    conforms(run.store.contents(), wire.StoredState, "store contents")
    conforms(run.coordinator.snapshot(), wire.Snapshot, "coordinator snapshot")
    conforms(run.coordinator.config, wire.CoordinatorConfig, "coordinator config")
    conforms(run.coordinator.phase, wire.CoordinatorPhase, "coordinator phase")


def test_the_checker_refuses_a_wrong_form():
    with pytest.raises(AssertionError, match="payload"):
        conforms(
            {"type": "deliver", "shard": "1", "entity": "e", "payload": "aGk="},
            wire.RegionOutput,
        )
    with pytest.raises(AssertionError, match="extra"):
        conforms({"type": "stopped", "x": 1}, wire.RegionOutput)


def test_the_stubs_import_only_generated_forms():
    stubs = [pathlib.Path(shardline.__file__).with_name(n) for n in ("_native.pyi", "hosts.py")]
    found = 0
    for stub in stubs:
        for node in ast.parse(stub.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module == "wire":
                names = {a.name for a in node.names}
                assert names <= set(wire.__all__), (stub.name, names - set(wire.__all__))
                found += len(names)
    assert found > 0
