"""What the option fuzzer found (issue 48), kept as explicit cases: one line, exit 2, at once.

Each case failed before its fix (a traceback, a hang, an error naming no option, or work
started on input no machine can finish); the fuzzer itself is ``test_fuzz_options.py``.
"""

from __future__ import annotations

import json

import pytest

from lshsim.cli.main import main
from lshsim.studies.memory.cli import console

LONG = "x" * 4000
PROBE = "probe --config tiny --lookup softmax"
TAP = "probe --tap tests.probe.factories:make_tap"
STUDIES = "--study table1 --variant smoke --dry-run --results {tmp}/r.json"

#: (command line, text of the one line). ``{tmp}``: the test's folder; ``{long}``: 4000 x's.
FOUND = [
    # a name the system refuses: OSError (ENAMETOOLONG) was an internal error
    ("eval --run {long}", "File name too long"),
    ("train --config tiny --steps 2 --out {long}", "File name too long"),
    # a value holding a line break of str.splitlines (\x1e, \x85, \r) split the one line
    ("eval --run \x1e", "--run: \\x1e does not exist"),
    ("train --config tiny --steps 2 --out {tmp}/r --tokenizer \r", "--tokenizer: \\r is not"),
    (f"{PROBE} --corpus \x850", "--corpus: no such file \\x850"),
    # checked only in the work before
    ("check --claim nope", "--claim: unknown id(s) 'nope'"),
    ("cost --config tiny --target-length 1000000000000", "--target-length: 1000000000000"),
    (f"{PROBE} --corpus {{tmp}}/missing.txt", "--corpus: no such file"),
    (f"{PROBE} --samples 1000000000000", "--samples: 1000000000000 pairs"),
    (f"{PROBE} --router-draws 1000000000000", "--router-draws: 1000000000000 draws take"),
    (f"{PROBE} --length 1000000000000", "--input-length: 1000000000000 tokens"),
    (f"{PROBE} --mesh 12", "mesh: expected data=A,model=B, got '12'"),
    (f"{TAP} --samples 1000000000000", "--samples: 1000000000000 pairs"),
    (f"{TAP} --corpus {{tmp}}/missing.txt", "--corpus: no such file"),
    ("probe --tap ..x:make_tap", "--tap: '..x' is not an absolute module name"),
    ("simulate --family simhash -n 16 --cosine 0.5 --samples 10000000000000", "samples: 1e+13"),
    ("train --config tiny --steps 2 --out {tmp}/r --mesh 12", "mesh: expected"),
    ("train --config tiny --steps 2 --out {tmp}/r --devices 0", "--devices must be an integer"),
    ("train --config tiny --steps 2 --out {tmp}/r --devices 3", "--devices: 3 devices (the data"),
    ("train --config tiny --steps 2 --out {tmp}/r --lr 1e400", "--lr: learning_rate must be"),
    ("train --config tiny --steps 2 --out {tmp}/r --expert-impl gather", "--expert-impl has no"),
]

#: The launcher's (``experiments/memory_studies.py``) cases.
FOUND_LAUNCHER = [
    (f"{STUDIES} --seeds 99999999999999999999999", "--seeds: must be in [1, 1000]"),
    (f"{STUDIES} --finetune nope", "--finetune: task: unknown task 'nope'"),
    (f"{STUDIES} --corpus {{tmp}}/missing.txt", "--corpus: no such file"),
    (f"{STUDIES} --finetune-steps 5", "--finetune-steps has no effect without --finetune"),
]
#: Found by hand while looking for the issue's ``max() arg is an empty sequence``.
FOUND_LAUNCHER_RESULTS = [
    ("--plot --results {tmp}/r.json", "--plot: {tmp}/r.json holds no runs yet"),
]


def _argv(line: str, tmp) -> list[str]:
    return line.format(tmp=tmp, long=LONG).split(" ")


@pytest.mark.parametrize(("line", "message"), FOUND)
def test_found_by_the_fuzzer(line, message, tmp_path, capsys):
    """One line naming the option, exit 2, nothing written."""
    assert main(_argv(line, tmp_path)) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("line", "message"), FOUND_LAUNCHER)
def test_found_in_the_launcher(line, message, tmp_path, capsys):
    """The launcher's options, the same way (its usage errors exit 2 through argparse)."""
    try:
        status = console(_argv(line, tmp_path))
    except SystemExit as exc:
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].count(message) == 1, err


def test_topk_under_auto_falls_back_to_full(capsys):
    """``simulate --family crosspolytope --topk 2`` under the default --mode auto: full mode."""
    argv = "simulate --family crosspolytope -n 16 --cosine 0.5 --topk 2 --samples 50 --json"
    assert main(argv.split()) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["topk"] == 2 and out["pairs"] == 50 and 0.0 <= out["overlap"] <= 1.0


@pytest.mark.parametrize(("line", "message"), FOUND_LAUNCHER_RESULTS)
def test_plotting_no_runs_is_said(line, message, tmp_path, capsys):
    """``--plot`` of a results file without runs printed nothing and exited 0."""
    from lshsim.studies.memory.document import load_doc, save_doc

    save_doc(tmp_path / "r.json", load_doc(tmp_path / "r.json"))
    assert console(_argv(line, tmp_path)) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message.format(tmp=tmp_path) in err, err
