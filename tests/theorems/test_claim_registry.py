"""The claim registry, the mutations and ``lshsim check``: every check can fail, none is written.

* every claim of the registry has a mutation under which its check fails, and the check's
  evidence changes under it (so the evidence is computed from the library), in one quick run
  of every claim (``check(quick=True, mutate=True)``, module-scoped);
* no check writes a literal into its evidence or returns a literal verdict (source, AST);
* the registry merges part modules (tuple or dict of claims) and refuses a duplicate id;
* ``lshsim check --mutate`` exits 0 only when every claim holds and fails under its mutation.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import json
import math
import sys
import types
from pathlib import Path

import pytest

from lshsim import theory
from lshsim.cli.main import main
from lshsim.theorems import claims
from lshsim.theorems.claim_types import Mutation
from lshsim.theorems.theorem1 import mutations
from tests import once_per_run
from tests.theorems import test_claims

#: Theorem 1's claim ids, in order
IDS = tuple(f"T1.{p}" for p in ("a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "d3", "d4"))
IDS += ("T1.e1", "T1.f1", "T1.f2", "T1.g1")
#: the LSH-view claims of lshsim.theorems.lsh_exponent, registered after Theorem 1's
LSH_IDS = ("T1.h1", "T1.h2")
#: the hashed n-gram claims of lshsim.theorems.ngram (issue 19)
NGRAM_IDS = ("B.ng1", "B.ng2", "B.ng3", "B.ng4")
#: the claims on the lookups beyond the paper (lshsim.theorems.productkey, lshsim.theorems.topk)
BEYOND_IDS = ("B.pk1", "B.pk2", "B.tk1", "B.tk2", "B.tk3", "B.tk4")
#: the claim on lshsim tune (lshsim.theorems.tune, issue 45)
TUNE_IDS = ("B.tn1",)
CHECK_MODULES = ("routing", "rates", "ordering", "sentence")


@pytest.fixture(scope="module")
def quick_verdicts(tmp_path_factory):
    """Every claim, quick, with its mutation: the slowest test input here (~20 s), computed
    once per run (:func:`tests.once_per_run`)."""
    verdicts = once_per_run(
        tmp_path_factory, "claims-quick-mutate", lambda: claims.check(quick=True, mutate=True)
    )
    return {v.id: v for v in verdicts}


@pytest.mark.slow
def test_every_claim_holds_and_fails_under_its_mutation(quick_verdicts):
    """Quick checks hold; under its named mutation each returns holds=False (not an error)."""
    assert set(IDS) <= set(quick_verdicts)
    for cid, v in quick_verdicts.items():
        claim = claims.CLAIMS[cid]
        assert claim.mutation is not None and claim.mutation.name == v.mutation
        assert v.holds, (cid, v.evidence)
        assert v.fails_under_mutation, (cid, v.mutation_evidence)
        assert "error" not in v.mutation_evidence, (cid, v.mutation_evidence)


def test_evidence_changes_under_the_mutation(quick_verdicts):
    """The evidence is computed from the library: the broken library changes it."""
    for cid, v in quick_verdicts.items():
        assert json.dumps(v.evidence, default=float) != json.dumps(
            v.mutation_evidence, default=float
        ), cid


def test_every_kinds_pattern_matches_its_evidence(quick_verdicts):
    """Each claim's kinds (``lshsim compare``'s promises) cover some number of its evidence.

    A pattern that matches nothing (evidence renamed after its kinds were written) leaves its
    numbers under the claim's broader rule, and ``compare`` would judge them by that.
    """
    from lshsim.studies.compare import _leaves
    from lshsim.studies.kinds import compile_rules, kind_of

    idle = {}
    for cid, v in quick_verdicts.items():
        compiled = compile_rules(claims.CLAIMS[cid].kinds or {})
        used = {kind_of(path, compiled)[0] for path, _ in _leaves(v.evidence)}
        idle[cid] = sorted(p for _, p, _ in compiled if p and p not in used)
    assert idle == {cid: [] for cid in quick_verdicts}


def test_mutations_are_named_and_distinct():
    """One mutation per Theorem 1 claim, each named once, with a one-sentence description."""
    names = [claims.CLAIMS[cid].mutation.name for cid in IDS]
    assert len(set(names)) == len(names)
    assert set(names) == set(mutations.MUTATIONS)
    for m in mutations.MUTATIONS.values():
        assert m.description.endswith(".") and len(m.description) > 20


def test_a_mutation_restores_the_library():
    """Inside the context the library is broken wherever it is bound; after it, restored."""
    before = theory.probability("voronoi", 16, 0.5)
    function = theory.rho
    with mutations.MUTATIONS["voronoi-probability-x1.01"].apply():
        assert math.isclose(theory.probability("voronoi", 16, 0.5), 1.01 * before, rel_tol=1e-12)
        assert math.isclose(theory.rho("voronoi", 16, 0.0), 1 - math.log(1.01) / math.log(16))
    assert theory.probability("voronoi", 16, 0.5) == before
    assert theory.rho is function
    with pytest.raises(ZeroDivisionError), mutations.MUTATIONS["simhash-extra-bit"].apply():
        raise ZeroDivisionError  # an error inside the context still restores
    assert theory.rho("simhash", 2, 0.0) == 1.0


def _literal(node: ast.AST) -> bool:
    """A constant, or a list/tuple of constants."""
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.List | ast.Tuple) and all(map(_literal, node.elts))


def _offences(tree: ast.AST) -> list[str]:
    found = []
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("check_")):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Dict):
                found += [f"{fn.name}:{v.lineno}" for v in node.values if _literal(v)]
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
                if _literal(node.value):
                    found.append(f"{fn.name}:{node.lineno}")
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
                if _literal(node.value.elts[0]):
                    found.append(f"{fn.name}:{node.lineno} (verdict)")
    return found


def test_no_check_writes_a_literal():
    """In every check function, no evidence value and no verdict is a literal (AST)."""
    root = Path(claims.__file__).parent / "theorem1"
    offences = {m: _offences(ast.parse((root / f"{m}.py").read_text())) for m in CHECK_MODULES}
    assert offences == {m: [] for m in CHECK_MODULES}
    for cid in IDS:
        module = inspect.getmodule(claims.CLAIMS[cid].check)
        assert module.__name__.rsplit(".", 1)[1] in CHECK_MODULES


def test_the_literal_scan_catches_a_written_result():
    """Control for the scan above: the defect of issue 22 (a written count) is found."""
    bad = 'def check_x():\n    m = 3\n    return m == 0, {"vectors": m, "mismatches": 0}\n'
    assert _offences(ast.parse(bad)) == ["check_x:3"]
    assert _offences(ast.parse("def check_y():\n    return True, {}\n")) == ["check_y:2 (verdict)"]


def test_registry_merges_parts(monkeypatch):
    """PARTS is a list of modules; each may give a tuple or a dict of claims; ids are unique."""
    extra = claims.CLAIMS["T1.c1"]
    fake = types.ModuleType("lshsim_fake_part")
    fake.CLAIMS = {"X.a1": dataclasses.replace(extra, id="X.a1")}
    monkeypatch.setitem(sys.modules, "lshsim_fake_part", fake)
    merged = claims._collect((*claims.PARTS, "lshsim_fake_part"))
    assert tuple(merged) == (*claims.CLAIMS, "X.a1")
    fake.CLAIMS = (dataclasses.replace(extra, id="T1.c1"),)
    with pytest.raises(ValueError, match=r"T1\.c1 is defined twice"):
        claims._collect((*claims.PARTS, "lshsim_fake_part"))


def test_claim_ids_are_stable_and_unique():
    assert tuple(claims.CLAIMS) == IDS + LSH_IDS + NGRAM_IDS + BEYOND_IDS + TUNE_IDS
    for cid, claim in claims.CLAIMS.items():
        assert claim.id == cid
        assert claim.statement and claim.part


def test_every_claim_names_a_test_here():
    import tests.theorems.test_claims_beyond as test_claims_beyond
    import tests.theorems.test_claims_lsh as test_claims_lsh

    for cid in BEYOND_IDS:
        path, _, name = claims.CLAIMS[cid].test.partition("::")
        assert path == "tests/theorems/test_claims_beyond.py"
        assert callable(getattr(test_claims_beyond, name, None)), f"{cid}: {path}::{name}"

    for cid in LSH_IDS:
        path, _, name = claims.CLAIMS[cid].test.partition("::")
        assert path == "tests/theorems/test_claims_lsh.py"
        assert callable(getattr(test_claims_lsh, name, None)), f"{cid}: {path}::{name}"
    for cid in IDS:
        claim = claims.CLAIMS[cid]
        path, _, name = claim.test.partition("::")
        assert path == "tests/theorems/test_claims.py"
        assert name == f"test_{cid.split('.')[1]}"
        func = getattr(test_claims, name, None)
        assert callable(func), f"{cid}: {claim.test} does not exist"
        doc = inspect.getdoc(func) or ""
        assert doc.startswith(cid + ":"), f"{name}'s docstring must start with '{cid}:'"


def test_check_one_claim():
    verdicts = claims.check(["T1.c1"])
    assert len(verdicts) == 1
    (v,) = verdicts
    assert isinstance(v, claims.Verdict)
    assert v.id == "T1.c1" and v.holds is True
    assert v.statement == claims.CLAIMS["T1.c1"].statement
    assert v.test == "tests/theorems/test_claims.py::test_c1"
    d = v.to_dict()
    assert set(d) == {"id", "statement", "holds", "evidence", "seconds", "test", "kinds"}
    assert d["kinds"] == claims.CLAIMS["T1.c1"].kinds  # what its evidence promises
    json.dumps(d)


def test_check_unknown_ids():
    with pytest.raises(ValueError, match=r"T9\.z") as info:
        claims.check(["T1.c1", "T9.z", "bogus"])
    assert "bogus" in str(info.value)
    assert "T1.c1," not in str(info.value).split("known:")[0]


def _run(argv):
    try:
        return main(argv)
    except SystemExit as exc:  # argparse usage errors exit rather than return
        return exc.code


def test_cli_check_json(capsys):
    code = _run(["check", "--json", "--claim", "T1.b2", "--claim", "T1.c1"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["holds"] is True
    assert [c["id"] for c in out["claims"]] == ["T1.b2", "T1.c1"]
    for c in out["claims"]:
        assert {"id", "statement", "holds"} <= set(c) and "fails_under_mutation" not in c
        assert c["holds"] is True
        assert c["statement"] == claims.CLAIMS[c["id"]].statement


def test_cli_check_mutate(capsys):
    """--mutate --json: fails_under_mutation and the mutation's name per claim; exit 0."""
    code = _run(["check", "--mutate", "--json", "--claim", "T1.b2", "--claim", "T1.c2"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["holds"] is True and out["all_fail_under_mutation"] is True
    for c in out["claims"]:
        assert c["fails_under_mutation"] is True and c["holds"] is True
        assert c["mutation"] == claims.CLAIMS[c["id"]].mutation.name
    assert _run(["check", "--mutate", "--claim", "T1.b2"]) == 0
    text = capsys.readouterr().out
    assert "under mutation jaccard-over-2l: fails, as it must" in text
    assert "1/1 claims fail under their mutation" in text


def test_cli_check_mutate_exits_1_when_a_check_cannot_fail(monkeypatch, capsys):
    """A claim whose check still holds under its mutation makes --mutate exit 1."""
    harmless = Mutation("nothing", "Breaks nothing.", contextlib.nullcontext)
    monkeypatch.setitem(
        claims.CLAIMS, "T1.b2", dataclasses.replace(claims.CLAIMS["T1.b2"], mutation=harmless)
    )
    code = _run(["check", "--mutate", "--json", "--claim", "T1.b2"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["holds"] is True and out["all_fail_under_mutation"] is False
    assert out["claims"][0]["fails_under_mutation"] is False
    assert _run(["check", "--claim", "T1.b2"]) == 0  # without --mutate it still passes


def test_cli_check_unknown_claim(capsys):
    code = _run(["check", "--claim", "T9.z"])
    err = capsys.readouterr().err
    assert code == 2
    assert "lshsim: error:" in err and "T9.z" in err
