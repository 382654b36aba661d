"""Plug-in families that are imported first, fail to load, lack kernels or lack optional laws.

Issue 48: a plug-in imported before lshsim registers its family once (subprocesses: the import
order is the point); an entry point that cannot be loaded is one warning line naming it while
every other family works; a family without kernels is one error line when simulated; a family
with only its law at a cosine gets everything else from ``lshsim theory`` (a law it lacks is
null in ``--json``, "not available" in the table); names that are not CLI words are refused.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import lshsim
from lshsim.cli.main import main
from lshsim.hashing import (
    ENTRY_POINT_GROUP,
    FAMILIES,
    MissingMethod,
    PluginWarning,
    load_entry_points,
    make_family,
    register_family,
    unregister_family,
)
from tests.plugins.bad_names import BAD_NAMES, bad_family
from tests.plugins.minimal_family import Kernelless, Minimal
from tests.plugins.toy_family import ToyCoin

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def minimal():
    """Register ``toyminimal`` and ``toykernelless`` for one test, then remove them."""
    register_family(Minimal)
    register_family(Kernelless)
    yield
    unregister_family(Minimal.name)
    unregister_family(Kernelless.name)


def _run(argv: str, capsys) -> tuple[int, str, str]:
    status = main(argv.split())
    out, err = capsys.readouterr()
    return status, out, err


# -- 1. a plug-in imported before lshsim ---------------------------------------------------------


def _fresh_interpreter(tmp_path: Path, entry_point: str, code: str) -> dict:
    """Run ``code`` in a new interpreter that sees ``entry_point`` in the group; its JSON line."""
    dist = tmp_path / "site" / "lshsim_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lshsim-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry_point}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(dist.parent), str(ROOT)])}
    script = textwrap.dedent(code)
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Warning" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


REPORT = """
    from lshsim.hashing import FAMILIES, load_deferred, load_entry_points
    fam = FAMILIES.get("toycoin")
    again = load_entry_points() + load_deferred()
    print(json.dumps({"registered": fam is plugin.ToyCoin, "last": list(FAMILIES)[-1],
                      "again": again, "same": FAMILIES["toycoin"] is plugin.ToyCoin}))
"""


@pytest.mark.parametrize(
    "imports",
    [
        "import tests.plugins.toy_family as plugin\nimport lshsim.hashing",
        "import lshsim.hashing\nimport tests.plugins.toy_family as plugin",
    ],
    ids=["plugin-first", "lshsim-first"],
)
def test_the_family_is_registered_once_whichever_is_imported_first(tmp_path, imports):
    """Plug-in first, its entry point is met mid-import; it is registered as its class is made."""
    got = _fresh_interpreter(
        tmp_path,
        "toycoin = tests.plugins.toy_family:ToyCoin",
        "import json\n" + imports + textwrap.dedent(REPORT),
    )
    assert got == {"registered": True, "last": "toycoin", "again": ["toycoin"], "same": True}


def test_an_entry_point_naming_a_re_export_registers_at_the_first_lookup(tmp_path):
    got = _fresh_interpreter(
        tmp_path,
        "toyminimal = tests.plugins.reexport_family:Minimal",
        """
        import json
        import tests.plugins.reexport_family as plugin
        from lshsim.hashing import FAMILIES, family_names, get_family
        print(json.dumps({"looked_up": get_family("toyminimal") is plugin.Minimal,
                          "listed": family_names().count("toyminimal"),
                          "registered": FAMILIES["toyminimal"] is plugin.Minimal}))
        """,
    )
    assert got == {"looked_up": True, "listed": 1, "registered": True}


# -- 2. an entry point that cannot be loaded -----------------------------------------------------

#: entry point -> what its warning says
BROKEN = {
    "raises = tests.plugins.broken_family:Anything": "RuntimeError: this plug-in needs a service",
    "missing = tests.plugins.no_such_module:Family": "ModuleNotFoundError: No module named",
    "noattr = tests.plugins.toy_family:NoSuchClass": "AttributeError:",
    "notfamily = tests.plugins.toy_family:math": "must be a subclass of lshsim.hashing.HashFamily",
    "dashed = tests.plugins.bad_names:Dashed": "got '--cosine'",
}


@pytest.fixture
def entry_points(monkeypatch):
    """The broken entry points and ``toycoin``'s, loaded as :mod:`lshsim.hashing` would."""
    lines = [*BROKEN, "toycoin = tests.plugins.toy_family:ToyCoin"]
    eps = importlib.metadata.EntryPoints(
        importlib.metadata.EntryPoint(*(s.strip() for s in line.split("=")), ENTRY_POINT_GROUP)
        for line in lines
    )
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps.select(group=group))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = load_entry_points()
    yield names, [w for w in caught if issubclass(w.category, PluginWarning)]
    unregister_family(ToyCoin.name)


def test_each_broken_entry_point_is_one_warning_line(entry_points):
    names, caught = entry_points
    assert names == ["toycoin"] and FAMILIES["toycoin"] is ToyCoin
    assert len(caught) == len(BROKEN)
    for w, (line, error) in zip(caught, BROKEN.items(), strict=True):
        name, value = (s.strip() for s in line.split("="))
        text = str(w.message)
        assert text.startswith(f"family entry point {name!r} ({value}) not loaded: "), text
        assert error in text
        shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
        assert len(shown.strip().splitlines()) == 1, shown


def test_every_other_family_works_after_a_broken_entry_point(entry_points, capsys):
    status, out, _ = _run("families", capsys)
    assert status == 0 and "toycoin" in out and "simhash" in out
    status, out, _ = _run("theory --family toycoin -n 8 --cosine 0.5 --json", capsys)
    assert status == 0 and json.loads(out)["probability"] == pytest.approx(0.125)
    assert _run("theory --family simhash -n 8 --cosine 0.5", capsys)[0] == 0


# -- 3. a family without kernels -----------------------------------------------------------------


@pytest.mark.parametrize("where", ["--cosine 0.5", "--overlap 0.5 --threads 2"])
def test_simulating_a_family_without_kernels_is_one_error_line(minimal, where, capsys):
    status, _, err = _run(f"simulate --family toykernelless -n 16 {where} --samples 50", capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("lshsim: error: family 'toykernelless'")
    assert "_draw (draw one hash function) and _hash (hash a batch)" in err
    with pytest.raises(MissingMethod, match="toykernelless") as caught:
        make_family("toykernelless", 16, 4)
    assert isinstance(caught.value, NotImplementedError)
    assert _run("theory --family toykernelless -n 16 --cosine 0.5", capsys)[0] == 0


# -- 4. optional laws, and names -----------------------------------------------------------------


def test_theory_prints_everything_but_the_laws_a_family_lacks(minimal, capsys):
    status, out, _ = _run("theory --family toyminimal --cosine 0.5 -n 16", capsys)
    rows = dict(line.split(None, 1) for line in out.strip().splitlines())
    assert status == 0 and rows["limit_rho"] == "not available"
    assert rows["probability"] == "0.0625" and rows["rho"] == "1" and rows["rho_lsh"] == "1"
    argv = "theory --family toyminimal --cosine 0.5 -n 16 --far 0.2 --tables 3 --concat 2 --json"
    status, out, _ = _run(argv, capsys)
    got = json.loads(out)
    assert status == 0
    assert got["limit_rho"] is None and got["hash_cost"] is None and got["query_cost"] is None
    assert got["amplified"] == pytest.approx(1 - (1 - 0.0625**2) ** 3)
    assert got["amplified_far"] == got["amplified"] and got["rho_lsh"] == 1.0


def test_the_other_commands_take_a_family_with_only_its_law(minimal, capsys):
    status, out, _ = _run("families --json", capsys)
    rows = {r["name"]: r for r in json.loads(out)["families"]}
    assert status == 0
    assert rows["toyminimal"]["laws"] == ["log_probability", "overlap_law", "amplification_law"]
    for argv in (
        "theory --family toyminimal -n 16 --overlap 0.5 --cosines 64",
        "simulate --family toyminimal -n 16 --cosine 0.5 --samples 50",
        "tune --family toyminimal -n 16 --threshold 0.5",
    ):
        assert _run(argv, capsys)[0] == 0, argv


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_name_that_is_not_a_cli_word_is_refused(name):
    with pytest.raises(ValueError, match="family name must be") as err:
        register_family(bad_family(name))
    assert "\n" not in str(err.value) and repr(name) in str(err.value)
    assert name not in FAMILIES
    assert lshsim.FAMILIES is FAMILIES
