"""Every example of README.md and docs/ is in docs/examples.toml, and each is run or checked.

Run as shown where it takes seconds (the shown output checked line by line, every number to
the digits shown); otherwise its options are parsed by the real parsers, with the reason in
the manifest. A renamed option, a renamed output key or a changed number fails here.
"""

from __future__ import annotations

import contextlib
import io
import runpy
import sys

import pytest

from tests.docs.examples import (
    HOWS,
    ROOT,
    all_examples,
    commands,
    manifest,
    output_mismatches,
)

EXAMPLES = {ex.id: ex for ex in all_examples()}
MANIFEST = manifest()


def test_every_example_is_in_the_manifest():
    missing = [f"{ex.file}:{ex.line}: {ex.id}" for ex in EXAMPLES.values() if ex.id not in MANIFEST]
    assert not missing, "examples missing from docs/examples.toml:\n" + "\n".join(missing)


def test_the_manifest_names_only_examples_that_exist():
    stale = sorted(set(MANIFEST) - set(EXAMPLES))
    assert not stale, "docs/examples.toml names examples that no page has:\n" + "\n".join(stale)


def test_every_entry_says_how_and_why():
    for key, entry in MANIFEST.items():
        assert entry.get("how") in HOWS, key
        if entry["how"] in ("parse", "none"):
            assert entry.get("reason", "").strip(), (
                f"{key}: a '{entry['how']}' entry needs a reason"
            )
        if entry["how"] == "quick":
            assert entry.get("quick"), f"{key}: a 'quick' entry names its quick flag"


def _ids(how):
    return sorted(k for k, e in MANIFEST.items() if e["how"] == how and k in EXAMPLES)


def _run_lshsim(argv):
    from lshsim.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("key", _ids("run") + _ids("quick"), ids=lambda k: k[:70])
def test_run_examples(key, tmp_path, monkeypatch):
    ex, entry = EXAMPLES[key], MANIFEST[key]
    monkeypatch.chdir(tmp_path)
    if ex.lang == "python":
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(ex.text, ex.id, "exec"), {"__name__": "__example__"})
        return
    ran = 0
    for cmd in commands(ex):
        assert cmd.argv[0] == "lshsim", f"{key}: only lshsim commands run here: {cmd.argv}"
        argv = cmd.argv[1:] + list(entry.get("quick", []))
        code, out, err = _run_lshsim(argv)
        assert code == 0, f"{key}: lshsim {' '.join(argv)} exited {code}: {err.strip()}"
        volatile = entry.get("volatile", [])
        bad = output_mismatches(cmd.shown, out, volatile)
        assert not bad, f"{key}: shown lines not in the output:\n" + "\n".join(bad) + "\n--\n" + out
        shown = [ln for ln in cmd.shown if ln.strip()]
        if shown and not any(ln.strip() == "..." for ln in shown):
            # output shown without an elision is the whole output: no line may be missing
            unshown = output_mismatches(out.splitlines(), "\n".join(shown), volatile)
            missing = "\n".join(unshown)
            assert not unshown, f"{key}: output lines the page does not show:\n{missing}"
        ran += 1
    assert ran, key


def _subparser(command):
    import argparse

    from lshsim.cli.main import build_parser

    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[command]


def _script_help(script):
    out = io.StringIO()
    argv = sys.argv
    sys.argv = [script, "--help"]
    try:
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            runpy.run_path(str(ROOT / script), run_name="__main__")
    finally:
        sys.argv = argv
    return out.getvalue()


@pytest.mark.parametrize("key", _ids("parse"), ids=lambda k: k[:70])
def test_parse_examples(key):
    from lshsim.cli.main import build_parser

    ex = EXAMPLES[key]
    if ex.lang == "python":
        compile(ex.text, ex.id, "exec")
        return
    checked = 0
    for cmd in commands(ex):
        argv = [a for a in cmd.argv if a != "..."]
        if "lshsim" in argv:  # also under srun / bash -c
            argv = argv[argv.index("lshsim") :]
        if argv[0] == "lshsim" and "..." in cmd.argv:  # elided: its options must exist
            sub = _subparser(argv[1])
            for opt in (a.split("=")[0] for a in argv[2:] if a.startswith("-")):
                assert opt in sub._option_string_actions, f"{key}: lshsim {argv[1]} has no {opt}"
            checked += 1
        elif argv[0] == "lshsim":
            with contextlib.redirect_stderr(io.StringIO()) as err:
                try:
                    build_parser().parse_args(argv[1:])
                except SystemExit as exc:
                    pytest.fail(f"{key}: {' '.join(argv)}: exit {exc.code}: {err.getvalue()}")
            checked += 1
        elif argv[0] == "python" and argv[1].startswith("experiments/"):
            text = _script_help(argv[1])
            for opt in (a.split("=")[0] for a in argv[2:] if a.startswith("--")):
                assert opt in text, f"{key}: {argv[1]} has no option {opt}"
            checked += 1
    assert checked, f"{key}: no lshsim or experiments command to parse (use how = 'none')"
