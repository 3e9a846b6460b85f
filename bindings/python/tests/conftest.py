import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
VECTORS = ROOT / "tests" / "vectors"


def load_vectors(name):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def root():
    return ROOT
