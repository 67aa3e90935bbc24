"""Kubernetes $(VAR) expansion (compiler/kube.py, which the emulator runs with): cases from the
kubelet's own expansion tests."""

from collections import ChainMap

import pytest

from trainspec.compiler.kube import expand_env, expand_references
from trainspec.emulator.engine.podenv import command_and_args
from trainspec.emulator.model.job import Container

CTX = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}


@pytest.mark.parametrize("text,want", [
    ("$(VAR_A)", "A"),
    ("___$(VAR_B)___", "___B___"),
    ("$(VAR_A)-$(VAR_A)", "A-A"),
    ("$(VAR_A)-1", "A-1"),
    ("$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
    ("$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
    ("$$(VAR_B)_$$(VAR_A)", "$(VAR_B)_$(VAR_A)"),
    ("f000-$$VAR_A", "f000-$VAR_A"),
    ("foo\\$(VAR_C)bar", "foo\\Cbar"),
    ("foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
    ("$(VAR_EMPTY)", ""),
    ("$(VAR_REF)", "$(VAR_A)"),          # values are not expanded twice
    ("$(UNKNOWN)", "$(UNKNOWN)"),        # unknown names stay as written
    ("$(VAR_A", "$(VAR_A"),              # unterminated
    ("$(", "$("),
    ("$$", "$"),
    ("$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
    ("$VAR_A", "$VAR_A"),                # only the $(...) form is a reference
    ("$", "$"),
    ("$)", "$)"),
    ("$()", "$()"),                      # an empty name is a reference to nothing defined
])
def test_kubernetes_expansion(text, want):
    assert expand_references(text, CTX) == want
    assert expand_references(text, ChainMap({}, CTX)) == want  # any Mapping


def test_env_sees_only_earlier_variables_and_valuefrom_is_literal():
    env = expand_env([
        ("LATER_REF", "$(B)", True),        # B is defined later: stays
        ("A", "a", True),
        ("B", "$(A)-b", True),
        ("FROM_CM", "$(A)", False),         # configMapKeyRef values are not expanded
        ("TF_CONFIG", '{"cluster":$(CLUSTER),"task":{}}', True),
        ("CLUSTER", '{"ps":["x:1"]}', False),
        ("TF2", '{"cluster":$(CLUSTER)}', True),
        ("A", "again", True),               # a later duplicate replaces the earlier value
    ])
    assert env["LATER_REF"] == "$(B)"
    assert env["B"] == "a-b"
    assert env["FROM_CM"] == "$(A)"
    assert env["TF_CONFIG"] == '{"cluster":$(CLUSTER),"task":{}}'
    assert env["TF2"] == '{"cluster":{"ps":["x:1"]}}'
    assert env["A"] == "again"


def test_command_sees_the_whole_environment():
    c = Container("c", "img", ["echo", "$(A)"], ["$$(A)", "$(NOPE)"], None, [], [], None, None, {}, [])
    assert command_and_args(c, {"A": "1"}) == (["echo", "1"], ["$(A)", "$(NOPE)"])
    c.command = None
    assert command_and_args(c, {})[0] is None
