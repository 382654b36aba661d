"""The lookup and memory-method registries (issue 29): one object each, every list derived.

JAX-free: the registries, the config's choices, the CLI's flag table and the closed-form
counts read them without importing JAX; no module outside a lookup's own compares the
config's ``lookup`` with that lookup's name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lshsim.cli.checks import NEEDS
from lshsim.cli.model_flags import MEMORY_FIELDS
from lshsim.t5 import configs
from lshsim.t5.budget import param_count
from lshsim.t5.lookups import LOOKUPS, Lookup, get_lookup, lookup_of
from lshsim.t5.memory_methods import METHODS, get_method

ROOT = Path(__file__).resolve().parents[2]
TINY = configs.CONFIGS["tiny"]


def test_each_lookup_is_one_named_object():
    """Keys are names; labels, help and flags are set; the flags are memory flags."""
    assert list(LOOKUPS) == ["tokenid", "softmax", "lsh", "productkey", "ngram", "engram"]
    for name, lookup in LOOKUPS.items():
        assert isinstance(lookup, Lookup) and lookup.name == name
        assert lookup.label and lookup.help and lookup.cost_example[0]
        assert "buckets" in lookup.flags and set(lookup.flags) <= set(MEMORY_FIELDS)
        assert ("rank" in lookup.flags) == (name != "engram")  # Engram has no rank experts
    for name, method in METHODS.items():
        assert method.name == name and method.label
        assert set(method.flags) <= set(MEMORY_FIELDS)


def test_the_configs_choices_and_the_cli_table_come_from_the_registries():
    assert configs.LOOKUPS == ("none", *LOOKUPS)
    assert configs.MEMORY_METHODS == ("none", *METHODS)
    lookup_rows = {dests[0]: set(allowed) for dests, field, allowed in NEEDS if field == "lookup"}
    for flag, allowed in lookup_rows.items():
        assert allowed == {n for n, lk in LOOKUPS.items() if flag in lk.flags}
    assert set(lookup_rows) == {f for lk in LOOKUPS.values() for f in lk.flags}
    memory_rows = {dests[0]: set(allowed) for dests, field, allowed in NEEDS if field == "memory"}
    assert memory_rows == {
        "K": {"sum", "sameup", "altup", "gemma3n"},
        "extra": {"sum", "sameup", "altup"},
        "cross": {"sameup", "altup"},
        "output": {"sameup", "altup"},
    }


def test_an_unknown_lookup_or_method_is_a_clear_error():
    with pytest.raises(ValueError, match="lookup: unknown lookup 'bogus'; choose one of tokenid"):
        get_lookup("bogus")
    with pytest.raises(ValueError, match="unknown lookup 'none'"):
        get_lookup("none")
    with pytest.raises(ValueError, match="memory: unknown method 'wide'; choose one of sum"):
        get_method("wide")
    with pytest.raises(ValueError, match="lookup: unknown value 'bogus'; choose one of none, "):
        TINY.replace(lookup="bogus")
    assert lookup_of(TINY) is None
    assert lookup_of(TINY.replace(lookup="lsh")) is LOOKUPS["lsh"]


def test_memory_methods_own_their_block_rule():
    assert [get_method("altup").compute_block(i, 3) for i in range(5)] == [0, 1, 2, 0, 1]
    assert [get_method("sameup").compute_block(i, 3) for i in range(3)] == [0, 0, 0]
    assert [get_method("gemma3n").compute_block(i, 3) for i in range(3)] == [0, 0, 0]
    assert [m for m, method in METHODS.items() if method.widened] == ["sameup", "altup", "gemma3n"]
    assert not TINY.widened and TINY.replace(memory="altup").widened


@pytest.mark.parametrize(
    ("changes", "expert"),
    [
        ({"lookup": "tokenid"}, 2176 * 128),
        ({"lookup": "softmax", "buckets": 64, "expert_rank": 2}, 128 * 64 + 2 * 64 * 128 * 2),
        ({"lookup": "lsh", "buckets": 32}, 32 * 128),
        (
            {"lookup": "productkey", "buckets": 64, "lookup_heads": 2},
            128 * 2 * 128 + 2 * 128 + 2 * 2 * 8 * 64 + 64 * 128,
        ),
        ({"lookup": "ngram", "buckets": 10, "lookup_heads": 2}, (11 + 13) * 128 + 2 * 128),
    ],
)
def test_each_lookup_counts_its_parameters(changes, expert):
    """The closed form per layer, written out here (tiny: d = 128, vocabulary 2176)."""
    cfg = TINY.replace(**changes)
    layers = cfg.num_encoder_layers + cfg.num_decoder_layers
    assert param_count(cfg)["expert"] == layers * expert


def test_no_module_compares_the_lookup_with_a_lookups_name():
    """``cfg.lookup == "softmax"`` and the like live only in the lookup's own module."""
    offenders = []
    for path in sorted((ROOT / "lshsim").rglob("*.py")):
        if path.parent.name == "lookups" and path.parent.parent.name == "t5":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            reads_lookup = any(isinstance(s, ast.Attribute) and s.attr == "lookup" for s in sides)
            names = {
                s.value
                for s in ast.walk(node)
                if isinstance(s, ast.Constant) and isinstance(s.value, str)
            }
            if reads_lookup and names & set(LOOKUPS):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
