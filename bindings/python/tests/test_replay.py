"""Replays every recorded state-machine trace in tests/traces (tests/traces/README.md)."""

import json

import pytest

import shardline
from conftest import ROOT

TRACES = sorted((ROOT / "tests" / "traces").glob("*.jsonl"))


def test_there_are_traces():
    assert len(TRACES) >= 4


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_trace_replays_identically(path):
    result = shardline.replay(path.read_text(encoding="utf-8"))
    assert result["mismatches"] == 0, result["first"]
    assert result["first"] is None
    assert result["steps"] > 100


def test_a_changed_output_is_the_first_mismatch():
    lines = TRACES[0].read_text(encoding="utf-8").splitlines()
    step = 0
    for i, line in enumerate(lines):
        record = json.loads(line)
        if "input" not in record:
            continue
        step += 1
        if record["outputs"]:
            record["outputs"][0] = {"type": "stopped"}
            lines[i] = json.dumps(record)
            break
    result = shardline.replay("\n".join(lines))
    assert result["mismatches"] == 1
    first = result["first"]
    assert (first["step"], first["line"]) == (step, i + 1)
    assert first["expected"]["outputs"][0] == {"type": "stopped"}
    assert first["actual"]["outputs"][0] != {"type": "stopped"}


def test_a_broken_trace_names_the_line_and_field():
    header = TRACES[0].read_text(encoding="utf-8").splitlines()[0]
    with pytest.raises(shardline.InvalidArgumentError, match="line 1: not valid JSON"):
        shardline.replay("not json")
    with pytest.raises(shardline.InvalidArgumentError, match="line 2: field machine: unknown machine"):
        shardline.replay(header + '\n{"machine":"c9","now":0,"input":{"type":"start"},"outputs":[]}')
    with pytest.raises(shardline.InvalidArgumentError, match="line 1: field version"):
        shardline.replay(header.replace('"version":1', '"version":2'))
