"""The hand-written stubs cover the native module exactly."""

import ast
import pathlib

import shardline
from shardline import _native


def stub_names():
    path = pathlib.Path(shardline.__file__).with_name("_native.pyi")
    tree = ast.parse(path.read_text())
    names, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        if isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    return names, members


def test_stubs_match_the_native_module():
    names, members = stub_names()
    native = {n for n in dir(_native) if not n.startswith("__")}
    optional = set() if _native.HAS_ETCD else {"Etcd", "EtcdLease", "EtcdStore"}
    assert native == names - optional
    for name in optional:
        members.pop(name)
    for cls, declared in members.items():
        actual = {n for n in dir(getattr(_native, cls)) if not n.startswith("_")}
        assert actual == {d for d in declared if not d.startswith("_")}, cls


def test_package_reexports_everything_public():
    public = {n for n in dir(_native) if not n.startswith("_")}
    assert public <= set(shardline.__all__)
    for name in shardline.__all__:
        assert hasattr(shardline, name), name
    assert (pathlib.Path(shardline.__file__).with_name("py.typed")).exists()
