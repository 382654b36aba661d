"""Every option of every command, fed hostile values: one line naming it, exit 2, nothing written.

The fuzzer walks every ``lshsim`` sub-parser and the launcher's (the same walk as the
vocabulary page, :func:`lshsim.cli.vocabulary_doc.parsers`) and, for each option, replaces or
adds it in a valid command line of that command (:data:`BASE`) with hostile values:
:data:`HOSTILE` for every option (a deterministic pass), and strings that hypothesis draws
(derandomised, so CI sees the same cases). Each case runs in process inside
:func:`lshsim.cli.work.checks_only`, so a command stops where its checks end and no work is
done. A case passes when the command

- stops at :func:`~lshsim.cli.work.start_work` (every check passed), or exits 0, or exits 2
  with exactly one line on stderr that names the option (``--input-length``,
  ``input-length`` or ``input_length``) or the value's file;
- never exits 70 (an internal error: a bug) or raises;
- leaves the test's folder as it found it (no half-made ``--out``).

``LSHSIM_FUZZ_EXAMPLES=N`` draws ``N`` hypothesis cases per command instead of CI's few (a
longer profile for a hand run).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lshsim.cli.environment import check_environment
from lshsim.cli.errors import run_command
from lshsim.cli.vocabulary_doc import parsers
from lshsim.cli.work import ChecksPassed, checks_only
from lshsim.t5.checkpoint import TOKENIZER_FILE, write_run
from lshsim.t5.configs import get_config
from lshsim.t5.data.tokenizer import train_tokenizer
from lshsim.t5.options import TrainOptions
from tests.fuzz_budget import examples
from tests.t5.finetune.formats import write_glue

#: Valid command lines per command, one per mode whose options the others refuse.
#: ``{tmp}``: the test's folder, ``{run}``: a run folder with its ``run.json``, ``{spec}``: a
#: sweep spec, ``{fig}``: the committed results file, ``{data}``: an RTE data folder.
BASE = {
    "simulate": (
        "simulate --family simhash -n 16 --cosine 0.5 --samples 200",
        "simulate --family voronoi -n 16 --overlap 0.5 --samples 200",
        "simulate --family voronoi -n 16 --cosine 0.5 --topk 2 --samples 200",
    ),
    "theory": (
        "theory --family simhash -n 16 --cosine 0.5",
        "theory --family simhash -n 16 --overlap 0.5 --cosines 64",
        "theory --family voronoi -n 16 --cosine 0.5 --topk 2",
    ),
    "check": ("check --claim T1.a1",),
    "calibrate": ("calibrate --quick --out {tmp}/out",),
    "reproduce": ("reproduce --quick --out {tmp}/out",),
    "compare": ("compare {fig} {fig}",),
    "families": ("families",),
    "params": ("params --config tiny",),
    "cost": ("cost --config tiny",),
    "train": ("train --config tiny --steps 2 --out {tmp}/out",),
    "eval": ("eval --run {run}",),
    "finetune": ("finetune --run {run} --task rte --data {data} --out {tmp}/out --steps 2",),
    "probe": (
        "probe --config tiny --lookup softmax",
        "probe --tap tests.probe.factories:make_tap --samples 8",
    ),
    "plan": ("plan --config tiny", "plan --config tiny --minimal"),
    "sweep": ("sweep {spec} --out {tmp}/out --workers 0",),
    "tune": (
        "tune --family minhash --threshold 0.5",
        "tune --family simhash -n 16 --near 0.9 --far 0.5 --recall 0.9 --false-positive 0.1",
    ),
    "memory_studies": ("--study table1 --variant smoke --dry-run --results {tmp}/out/r.json",),
}

#: Values every option is given, whatever it takes: empty and blank text, unicode digits and
#: superscripts, full-width digits, non-finite and signed zeros, huge and negative numbers,
#: floats where integers go, a long string, a comma list, paths that are a file, a folder, a
#: missing folder's child and an unwritable place.
HOSTILE = (
    "",
    " ",
    "\u0663",  # ARABIC-INDIC DIGIT THREE: int() takes it
    "\u00b2",  # SUPERSCRIPT TWO: isdigit() takes it, int() does not
    "\uff11\uff12",  # FULLWIDTH 12
    "nan",
    "-inf",
    "-0",
    "0",
    "-1",
    "1e400",
    "99999999999999999999999",
    "0.5",
    "x" * 4000,
    "1,,2",
    "{tmp}/afile",
    "{tmp}/adir",
    "{tmp}/missing/child",
    "/proc/lshsim",
)

#: Exit statuses a checked command may end with before its work (1: a command's verdict).
ALLOWED = (0, 1, 2)


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """The test's folder: a file, an empty folder, a run folder, a sweep spec."""
    tmp = tmp_path_factory.mktemp("fuzz")
    (tmp / "afile").write_text("not a folder\n")
    (tmp / "adir").mkdir()
    run = tmp / "run"
    run.mkdir()
    config = get_config("tiny")
    opts = TrainOptions.from_config(config)
    write_run(run, config, opts.to_dict())
    _tokenizer().save(run / TOKENIZER_FILE)
    (tmp / "spec.toml").write_text(
        '[[grids]]\ncommand = "theory"\nfamily = ["simhash"]\nbuckets = [4]\ncosine = [0.5]\n'
    )
    fig = Path(__file__).resolve().parents[2] / "figures" / "results.json"
    data = write_glue(tmp / "data", "rte")
    return {
        "tmp": str(tmp),
        "run": str(run),
        "spec": str(tmp / "spec.toml"),
        "fig": str(fig),
        "data": str(data),
    }


def _tokenizer():
    """A small SentencePiece model, in a tenth of a second (the run's own would take ten)."""
    rng = random.Random(0)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 8))) for _ in range(400)]
    docs = [" ".join(rng.choices(words, k=30)) for _ in range(300)]
    return train_tokenizer(docs, 200, seed=0)


def _snapshot(root: str) -> list[tuple[str, int]]:
    """Every path under ``root`` with its size (folders 0): what a refused command must keep."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out.append((os.path.join(dirpath, d), 0))
        for f in filenames:
            path = os.path.join(dirpath, f)
            out.append((path, os.path.getsize(path)))
    return sorted(out)


@contextlib.contextmanager
def _hang_guard(seconds: int):
    """Fail a case that runs ``seconds`` (a hang detector, not a timing assertion)."""

    def _raise(*_):
        raise AssertionError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_checks(command: str, argv: list[str]) -> tuple[object, str]:
    """Run ``argv`` through the command's parsing and checks; ``(outcome, stderr)``.

    The outcome is ``"checked"`` (stopped at :func:`~lshsim.cli.work.start_work`) or the exit
    status.
    """
    out, err = io.StringIO(), io.StringIO()
    with (
        checks_only(),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        _hang_guard(60),
    ):
        try:
            if command == "memory_studies":
                from lshsim.studies.memory.cli import console

                outcome = console(argv)
            else:
                check_environment()
                outcome = run_command(_PARSER.parse_args(argv))
        except ChecksPassed:
            outcome = "checked"
        except SystemExit as exc:  # argparse: usage errors exit 2
            outcome = exc.code
    return outcome, err.getvalue()


_PARSER = None


def _names(option: str, action: argparse.Action) -> tuple[str, ...]:
    """The spellings a message may name ``option`` by."""
    bare = option.lstrip("-")
    names = {option, bare, bare.replace("-", "_"), action.dest, action.dest.replace("_", "-")}
    names |= {o for o in action.option_strings if o.startswith("--")}
    return tuple(n for n in names if n)


def check_case(command, argv, option, action, value, place) -> None:
    """Run one case and assert what the module docstring says."""
    before = _snapshot(place["tmp"])
    with contextlib.chdir(place["tmp"]):  # a relative value lands where the snapshot looks
        outcome, err = run_checks(command, argv)
    lines = [
        line
        for line in err.splitlines()
        if line.strip() and "is deprecated" not in line and "warning" not in line.lower()
    ]
    case = f"{command} {option} {value[:60]!r}: {outcome}, stderr {err[-400:]!r}"
    assert outcome == "checked" or outcome in ALLOWED, case
    if outcome == 2:
        assert len(lines) == 1, case
        named = _names(option, action)
        if action.nargs == 0:  # a flag refused for its company names that company
            named += tuple(a for a in argv if a.startswith("--"))
        assert any(n in lines[0] for n in named) or (value and value in lines[0]), case
    assert _snapshot(place["tmp"]) == before, f"{case}: wrote into {place['tmp']}"


def _options(command: str) -> list[tuple[str, argparse.Action]]:
    """The command's options (long spelling) with their actions, ``--help`` left out."""
    parser = parsers()[command]
    return [
        (next(o for o in a.option_strings if o.startswith("--")), a)
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction)
    ]


def _with(base: list[str], option: str, action: argparse.Action, value: str | None) -> list[str]:
    """``base`` with ``option`` set to ``value`` (replacing its value there), or added."""
    argv = list(base)
    spellings = set(action.option_strings)
    for i, arg in enumerate(argv):
        if arg in spellings:
            if action.nargs == 0:
                return argv
            return [*argv[:i], option, value, *argv[i + 2 :]]
    return [*argv, option] if action.nargs == 0 else [*argv, option, value]


def _bases(command: str, place: dict) -> list[list[str]]:
    """The command's base lines, each split into arguments."""
    return [line.format(**place).split() for line in BASE[command]]


def test_every_command_has_a_base_that_passes_its_checks(place):
    """The base lines are valid: each stops at start_work (so the fuzzer tests the options)."""
    global _PARSER
    from lshsim.cli.parser import build_parser

    _PARSER = build_parser()
    assert set(BASE) == set(parsers()), "a command without a base line for the fuzzer"
    wrong = {}
    for command in BASE:
        for base in _bases(command, place):
            outcome, err = run_checks(command, base)
            if outcome != "checked":
                wrong[" ".join(base)] = f"{outcome} {err[-300:]}"
    assert not wrong, wrong


@pytest.mark.parametrize("command", sorted(BASE))
def test_every_option_refuses_hostile_values_in_one_line(command, place):
    """Each option x :data:`HOSTILE`, and each flag added alone, on each base line."""
    _ensure_parser()
    for base in _bases(command, place):
        for option, action in _options(command):
            if action.nargs == 0:
                check_case(command, _with(base, option, action, None), option, action, "", place)
                continue
            for raw in HOSTILE:
                value = raw.format(**place)
                argv = _with(base, option, action, value)
                check_case(command, argv, option, action, value, place)


def _ensure_parser():
    global _PARSER
    if _PARSER is None:
        from lshsim.cli.parser import build_parser

        _PARSER = build_parser()


_EXAMPLES = examples(25)


@pytest.mark.parametrize("command", sorted(BASE))
def test_drawn_values_are_refused_in_one_line(command, place):
    """Hypothesis draws an option and a value (text, numbers as text) per case."""
    _ensure_parser()
    bases = _bases(command, place)
    options = [(o, a) for o, a in _options(command) if a.nargs != 0]
    if not options:
        pytest.skip(f"{command} has only flags (the deterministic pass adds each)")
    values = st.one_of(
        st.text(max_size=12),
        st.integers().map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.lists(st.integers(-5, 70).map(str), max_size=4).map(",".join),
    )

    @settings(
        max_examples=_EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.sampled_from(bases), st.sampled_from(options), values)
    def case(base, chosen, value):
        option, action = chosen
        if value.startswith("-") and value.lstrip("-")[:1].isalpha():
            value = " " + value  # an option-looking value is the next option: not this case
        check_case(command, _with(base, option, action, value), option, action, value, place)

    case()
