"""Bad command lines end in one line naming the option and exit 2, before any work (issue 21).

Each case runs through :func:`lshsim.cli.main.main` in this process; only what is read at import
(``NUMBA_NUM_THREADS``) needs a subprocess.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lshsim
from lshsim.cli.main import main

ROOT = Path(lshsim.__file__).resolve().parent.parent

#: (command line, text the one error line must contain). ``{tmp}`` is the test's folder, which
#: holds one file, ``afile``, and an empty folder, ``adir``.
CASES = [
    # output and run folders: checked before anything is computed
    ("train --config tiny --steps 1 --out {tmp}/afile", "--out: {tmp}/afile is an existing file"),
    ("train --config tiny --steps 1 --out {tmp}/afile/run", "--out: {tmp}/afile/run lies under"),
    ("train --config tiny --steps 1 --out {tmp}/afile --resume", "--out: {tmp}/afile is a file"),
    ("train --config tiny --steps 1 --out {tmp}/none --resume", "--out: {tmp}/none does not"),
    ("eval --run {tmp}/afile", "--run: {tmp}/afile is a file"),
    ("eval --run {tmp}/none", "--run: {tmp}/none does not exist"),
    ("probe --run {tmp}/afile", "--run: {tmp}/afile is a file"),
    ("probe --run {tmp}/none", "--run: {tmp}/none does not exist"),
    ("reproduce --quick --out {tmp}/afile", "--out: {tmp}/afile is an existing file"),
    ("reproduce --quick --out {tmp}/afile/figs", "--out: {tmp}/afile/figs lies under"),
    ("reproduce --verify {tmp}/none", "--verify: {tmp}/none is not a folder"),
    ("reproduce --verify {tmp}/adir --seed 3", "--seed"),
    # sizes that cannot fit this machine: refused from an estimate, before allocating
    ("train --config tiny --steps 1 --out {tmp}/r --batch 100000000", "--batch: 100000000"),
    (
        "params --config tiny --memory altup --blocks 1000000000",
        "of blocks = 1000000000 need about",
    ),
    ("cost --config tiny --input-length 100000000", "--input-length: 100000000 tokens need"),
    ("train --config tiny --steps 5 --out {tmp}/r --keep-checkpoints 1", "--keep-checkpoints"),
    # 0 (or below) is an error, never the default
    ("train --config tiny --steps 5 --out {tmp}/r --eval-every 0", "--eval-every must be an"),
    ("train --config tiny --steps 5 --out {tmp}/r --checkpoint-every 0", "--checkpoint-every"),
    ("train --config tiny --steps 5 --out {tmp}/r --checkpoint-every -3", "--checkpoint-every"),
    ("train --config tiny --steps 0 --out {tmp}/r", "steps must be an integer >= 1, got 0"),
    ("train --config tiny --steps 5 --out {tmp}/r --batch 0", "batch must be"),
    ("train --config tiny --steps 5 --out {tmp}/r --input-length 0", "input_length must be"),
    ("train --config tiny --steps 5 --out {tmp}/r --target-length 0", "target_length must"),
    ("train --config tiny --steps 5 --out {tmp}/r --warmup 0", "warmup_steps must be"),
    ("train --config tiny --steps 5 --out {tmp}/r --seed -1", "seed must be an integer in"),
    ("train --config tiny --steps 5 --out {tmp}/r --lr 0", "learning_rate must be in (0, inf)"),
    ("train --config tiny --steps 5 --out {tmp}/r --lr inf", "learning_rate must be in (0, inf),"),
    ("train --config tiny --steps 5 --out {tmp}/r --lr nan", "learning_rate must be in (0, inf)"),
    ("eval --run {tmp}/adir --step -1", "--step must be an integer >= 0, got -1"),
    ("eval --run {tmp}/adir --examples 0", "examples must be an integer >= 1"),
    ("probe --config tiny --lookup softmax --step -1", "--step must be an integer >= 0"),
    ("probe --config tiny --lookup softmax --samples 0", "samples must be"),
    ("probe --config tiny --lookup softmax --router-draws -1", "router_draws must be"),
    ("cost --config tiny --input-length 0", "--input-length must be an integer >= 1, got 0"),
    ("cost --config tiny --target-length 0", "--target-length must be an integer >= 1, got 0"),
    ("cost --config tiny --target-length -1", "--target-length must be an integer >= 1"),
    ("params --config tiny --memory altup --blocks 0", "K (memory_k) must be an integer >= 1"),
    ("params --config tiny --memory altup --extra 0", "--extra must be an integer >= 1, got 0"),
    (
        "params --config tiny --lookup softmax --buckets 0",
        "--buckets must be an integer in [1, 2147483647]",
    ),
    ("params --config tiny --lookup softmax --rank -1", "rank (expert_rank) must be"),
    ("params --config tiny --lookup lsh --lookup-seed -1", "lookup_seed must be"),
    ("params --config tiny --lookup softmax --router-jitter 1", "router_jitter must be in [0, 1)"),
    # options with no effect in the given combination
    ("params --config tiny --blocks 4", "--blocks has no effect without --memory sum|sameup|altup"),
    ("params --config tiny --memory none --blocks 3", "--blocks has no effect without --memory"),
    (
        "train --config tiny --steps 1 --out {tmp}/r --memory none --blocks 3",
        "--blocks has no effect",
    ),
    ("params --config tiny --extra 128", "--extra has no effect without --memory"),
    ("params --config tiny --cross sum", "--cross has no effect without --memory sameup|altup"),
    ("params --config tiny --memory sum --output sum", "--output has no effect without --memory"),
    ("params --config tiny --rank 4", "--rank has no effect without --lookup tokenid|softmax|lsh"),
    ("params --config tiny --buckets 64", "--buckets has no effect without --lookup"),
    ("params --config tiny --lsh-family crosspolytope", "--lsh-family has no effect without"),
    ("cost --config tiny --lookup softmax --lsh-family simhash", "--lsh-family has no effect"),
    ("params --config tiny --lookup tokenid --lookup-seed 1", "--lookup-seed has no effect"),
    ("params --config tiny --router-jitter 0.1", "--router-jitter has no effect without --lookup"),
    ("params --config tiny --lookup lsh --router-z-loss 1", "--router-z-loss has no effect"),
    ("probe --config tiny --lookup lsh --router-balance-loss 1", "--router-balance-loss has no"),
    ("cost --config tiny --compare --blocks 2", "--blocks has no effect without --memory"),
    ("simulate --family voronoi --buckets 16 --cosine 0.5 --length 8", "--length has no effect"),
    ("simulate --family voronoi --buckets 16 --cosine 0.5 --vocab 500", "--vocab has no effect"),
    ("theory --family voronoi --buckets 16 --cosine 0.5 --dim 8", "--dim has no effect with"),
    ("theory --family voronoi --buckets 16 --cosine 0.5 --cosines 64", "--cosines has no effect"),
    ("theory --family voronoi --buckets 16 --cosine 0.5 --seed 1", "--seed has no effect with"),
]


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize(("argv", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(argv, message, tmp_path, capsys):
    """Exit 2, exactly one line ``lshsim: error: ...`` with the message, nothing created."""
    (tmp_path / "afile").write_text("not a folder\n")
    (tmp_path / "adir").mkdir()
    before = _files(tmp_path)
    rc = main(argv.format(tmp=tmp_path).split())
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    assert err.startswith("lshsim: error: ") and err.count("\n") == 1, err
    assert message.format(tmp=tmp_path) in err
    assert _files(tmp_path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
def test_train_out_in_an_unwritable_folder_is_refused(tmp_path, capsys):
    """``--out`` whose nearest existing folder is read-only: one line naming --out, exit 2."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        rc = main(["train", "--config", "tiny", "--steps", "1", "--out", str(locked / "run")])
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and err.startswith("lshsim: error: --out: ")
        assert "not writable" in err and not (locked / "run").exists()
    finally:
        locked.chmod(0o755)


@pytest.mark.parametrize("value", ["0", "-2", "abc", "1.5", ""])
def test_bad_numba_num_threads_is_one_line_exit_2(value, monkeypatch, capsys):
    """``NUMBA_NUM_THREADS`` is checked before the commands run (in-process, Numba loaded)."""
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    assert main(["families"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"lshsim: error: NUMBA_NUM_THREADS must be a positive integer, got {value!r}\n"


def _python(code_or_args: list[str], **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run(
        [sys.executable, *code_or_args], capture_output=True, text=True, env=environ, timeout=300
    )


def test_numba_num_threads_zero_at_import_is_one_line_exit_2():
    """``NUMBA_NUM_THREADS=0 lshsim ...``: Numba would fail at import; the CLI says one line."""
    res = _python(["-m", "lshsim.cli", "families"], NUMBA_NUM_THREADS="0")
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr == "lshsim: error: NUMBA_NUM_THREADS must be a positive integer, got '0'\n"
    ok = _python(["-m", "lshsim.cli", "families", "--json"], NUMBA_NUM_THREADS="1")
    assert ok.returncode == 0 and json.loads(ok.stdout)["families"]


def test_importing_the_package_and_the_cli_imports_neither_numba_nor_jax():
    """``import lshsim.cli`` stays light; ``FAMILIES`` and ``make_family`` load on first use."""
    code = (
        "import sys, lshsim.cli\n"
        "heavy = sorted(m for m in ('numba', 'jax', 'scipy') if m in sys.modules)\n"
        "from lshsim import FAMILIES, make_family\n"
        "print(heavy, 'numba' in sys.modules, 'simhash' in FAMILIES, callable(make_family))\n"
    )
    res = _python(["-c", code])
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[] True True True"


def test_lazy_package_attributes():
    """The lazy names are the hashing package's; an unknown name is an AttributeError."""
    from lshsim import hashing

    assert lshsim.FAMILIES is hashing.FAMILIES and lshsim.make_family is hashing.make_family
    assert {"FAMILIES", "make_family", "__version__"} <= set(dir(lshsim))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lshsim.nope  # noqa: B018


def _summary(out: str, rate: float) -> dict:
    ev = {"loss": 2.0, "accuracy": 0.5}
    return {
        "step": 1,
        "initial_eval": ev,
        "final_eval": ev,
        "train_loss": 2.0,
        "out": out,
        "examples_per_second": rate,
    }


@pytest.mark.parametrize("as_json", [False, True])
def test_train_with_nothing_timed_prints_no_nan(as_json, tmp_path, monkeypatch, capsys):
    """A run with no step after the first has no speed: no ``nan examples/s``, JSON null."""
    import lshsim.t5.loop as loop

    monkeypatch.setattr(loop, "train", lambda config, out, **kw: _summary(str(out), float("nan")))
    argv = ["train", "--config", "tiny", "--steps", "1", "--out", str(tmp_path / "r")]
    assert main(argv + (["--json"] if as_json else [])) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    if as_json:
        assert json.loads(out)["examples_per_second"] is None
    else:
        assert out.splitlines()[-1] == f"1 steps; run in {tmp_path / 'r'}"
