"""The ``lshsim`` command line: output formats, help, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys

import pytest

from lshsim.cli.main import main
from lshsim.hashing import FAMILIES

REQUIRED_KEYS = {"estimate", "ci_low", "ci_high", "samples", "seconds", "family", "n", "seed"}


def test_the_realised_overlap_is_shown_beside_the_asked_one(capsys):
    """f = 0.5 at l = 1 shares round_half_up(0.5) = 1 token: both commands say f = 1 is used."""
    for command in ("theory", "simulate"):
        argv = f"{command} --family simhash -n 16 --overlap 0.5 --length 1 --json".split()
        assert main(argv if command == "theory" else [*argv, "--samples", "20"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["overlap"], out["shared"], out["realised_overlap"]) == (0.5, 1, 1.0)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_simulate_json_every_family(family, capsys):
    """`simulate --json` prints one object with the estimate, CI, samples, time and parameters."""
    what = ["--cosine", "0.8"] if FAMILIES[family].input_kind == "vectors" else ["--overlap", "0.5"]
    rc = main(
        ["simulate", "--family", family, "--buckets", "64", *what, "--samples", "200", "--json"]
    )
    out = capsys.readouterr()
    assert rc == 0
    obj = json.loads(out.out)
    assert REQUIRED_KEYS <= obj.keys()
    assert obj["ci_low"] <= obj["estimate"] <= obj["ci_high"]
    assert obj["family"] == family and obj["n"] == 64
    assert out.err == ""  # no progress bar with --json


def test_simulate_reduced_and_params(capsys):
    """Family flags reach the family and show up in the JSON parameters."""
    rc = main(
        "simulate --family pstable --buckets 1000 --k 3 --width 2.5 --cosine 0.9 --mode reduced "
        "--samples 500 --json".split()
    )
    obj = json.loads(capsys.readouterr().out)
    assert rc == 0 and obj["params"] == {"k": 3, "w": 2.5} and obj["mode"] == "reduced"


def test_simulate_table(capsys):
    """Without --json the result is a readable table."""
    rc = main(
        "simulate --family tokenid --buckets 40000 --overlap 0.25 --length 8 --samples 50".split()
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert re.search(r"^estimate +0\.25$", out, re.M) and "95% CI" in out
    assert "50 pairs x 8 positions" in out
    # each row named as --json names the quantity
    names = [line.split()[0] for line in out.splitlines()]
    assert names[:7] == ["family", "n", "overlap", "shared", "realised_overlap", "length", "vocab"]
    assert "dim" in names and re.search(r"^realised_overlap +0\.25$", out, re.M)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        ("--family simhash --buckets 1000 --cosine 0.5", "power of two"),
        ("--family voronoi --buckets 8 --cosine 2", "cosine"),
        ("--family voronoi --buckets 8 --overlap 0.5 --samples 0", "samples"),
        ("--family voronoi --buckets 8 --overlap 0.5 --length 0", "length (l)"),
        ("--family voronoi --buckets 8 --overlap 0.5 --dim 1", "dim (d)"),
        ("--family simhash --buckets 8 --overlap 0.5 --vocab 3", "vocab (V)"),
        ("--family pstable --buckets 8 --cosine 0.5 --width -1", "w (width)"),
        ("--family minhash --buckets 8 --overlap 0.5 --rotation hadamard", "--rotation applies"),
        ("--family minhash --buckets 8 --cosine 0.5", "cosine is not defined"),
        ("--family voronoi --buckets x --cosine 0.5", "invalid int"),
        ("--family nope --buckets 8 --cosine 0.5", "invalid choice"),
        ("--family voronoi --buckets 8", "one of the arguments"),
        ("--family voronoi --buckets 8 --cosine 0.5 --mode fast", "invalid choice"),
    ],
)
def test_errors_are_one_line_exit_2(argv, match, capsys):
    """Bad input: exit status 2, one line on stderr naming the problem, nothing on stdout."""
    try:
        rc = main(["simulate", *argv.split()])
    except SystemExit as exc:  # argparse's own usage errors
        rc = exc.code
    out = capsys.readouterr()
    assert rc == 2
    assert match in out.err
    assert out.err.startswith("lshsim: error:") and out.err.count("\n") == 1
    assert out.out == ""


def test_help_explains_every_family(capsys):
    """`lshsim simulate --help` documents the parameters and lists every family."""
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for name in FAMILIES:
        assert name in text
    for flag in ("--buckets", "--overlap", "--cosine", "--mode", "--rotation", "--json"):
        assert flag in text


def test_families_json(capsys):
    """`lshsim families --json` lists the registry."""
    assert main(["families", "--json"]) == 0
    names = [f["name"] for f in json.loads(capsys.readouterr().out)["families"]]
    assert names == list(FAMILIES)


def test_console_script_exits_2_without_traceback():
    """The installed `lshsim` script prints one line and exits 2, no traceback."""
    exe = shutil.which("lshsim") or str(
        __import__("pathlib").Path(sys.executable).with_name("lshsim")
    )
    res = subprocess.run(
        [exe, "simulate", "--family", "voronoi", "--buckets", "1", "--cosine", "0.5"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.strip() == "lshsim: error: n (buckets) must be an integer in [2, 2^62], got 1"


def test_out_of_memory_is_one_line_exit_2(monkeypatch, capsys):
    """A MemoryError that slips past the checks still ends as one line and exit 2."""
    import lshsim.cli.simulate as cli

    def boom(*args, **kwargs):
        raise MemoryError("Unable to allocate 44.7 GiB")

    monkeypatch.setattr(cli, "estimate_collision", boom)
    rc = main("simulate --family voronoi --buckets 8 --cosine 0.5".split())
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "too large" in err and "44.7 GiB" in err


# -- lshsim theory ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "n", "a", "exact"),
    [
        ("simhash", 1024, 0.5, (2 / 3) ** 10),
        ("voronoi", 2, 0.5, 2 / 3),  # one random hyperplane
        ("voronoi", 4096, 0.0, 1 / 4096),
        ("crosspolytope", 2, -0.5, 1 / 3),
        ("crosspolytope", 512, 0.0, 1 / 512),
    ],
)
def test_theory_json_at_a_cosine(family, n, a, exact, capsys):
    """`theory --cosine --json` prints probability and rho = -log P / log n for known values."""
    rc = main(["theory", "--family", family, "--buckets", str(n), "--cosine", str(a), "--json"])
    obj = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert obj["probability"] == pytest.approx(exact, rel=1e-9)
    assert obj["rho"] == pytest.approx(-math.log(exact) / math.log(n), rel=1e-9)
    assert {"log_probability", "limit_rho", "family", "n", "cosine"} <= obj.keys()


def test_theory_overlap_minhash_and_tokenid_are_exact(capsys):
    """`theory --overlap` is exact for minhash (J + (1-J)/n) and tokenid (f when n >= V)."""
    main("theory --family minhash --buckets 1024 --overlap 0.5 --length 20 --json".split())
    obj = json.loads(capsys.readouterr().out)
    j = 10 / 30
    assert obj["probability"] == pytest.approx(j + (1 - j) / 1024, rel=1e-12)
    assert obj["std_error"] == 0
    main("theory --family tokenid --buckets 40000 --overlap 0.25 --length 8 --json".split())
    obj = json.loads(capsys.readouterr().out)
    assert obj["probability"] == 0.25 and obj["rho"] == pytest.approx(math.log(4) / math.log(4e4))


def test_theory_overlap_averages_over_cosines(capsys):
    """`theory --overlap` for a cosine family reports the average, its standard error and the
    sampled cosines' mean, and the same seed gives the same number."""
    argv = "theory --family simhash --buckets 256 --overlap 0.5 --length 8 --dim 16 --cosines 4096"
    main([*argv.split(), "--json"])
    first = json.loads(capsys.readouterr().out)
    main([*argv.split(), "--json"])
    again = json.loads(capsys.readouterr().out)
    assert first == again
    assert 0 < first["std_error"] < 0.03 * first["probability"]
    assert first["cosines"] == 4096 and abs(first["cosine_mean"] - 0.5) < 0.05


def test_theory_table(capsys):
    """Without --json `theory` prints a readable table."""
    assert main("theory --family voronoi --buckets 1048576 --cosine 0.5".split()) == 0
    out = capsys.readouterr().out
    assert "probability" in out and "rho" in out and "0.40697" in out


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        ("--family simhash --buckets 1000 --cosine 0.5", "power of two"),
        ("--family crosspolytope --buckets 7 --cosine 0.5", "even"),
        ("--family voronoi --buckets 8 --cosine 1.5", "cosine"),
        ("--family crosspolytope --buckets 8 --cosine 0.5 --rotation hadamard", "rotation"),
        ("--family minhash --buckets 8 --cosine 0.5", "cosine is not defined"),
        ("--family voronoi --buckets 8 --overlap 0.5 --dim 1", "dim (d)"),
        ("--family voronoi --buckets 8 --overlap 0.5 --cosines 1", "cosines"),
        ("--family voronoi --buckets 8 --overlap 2", "overlap (f)"),
    ],
)
def test_theory_errors_are_one_line_exit_2(argv, match, capsys):
    """Bad input to `theory`: exit 2, one line naming the parameter, nothing on stdout."""
    rc = main(["theory", *argv.split()])
    out = capsys.readouterr()
    assert rc == 2 and match in out.err
    assert out.err.startswith("lshsim: error:") and out.err.count("\n") == 1 and out.out == ""


def test_quadrature_failure_is_reported_not_returned(monkeypatch, capsys):
    """A quadrature that cannot reach its tolerance says so (exit 1), printing no number."""
    import lshsim.laws.spherical as sph

    monkeypatch.setattr(sph, "MAX_INTERVALS", 1)
    rc = main("theory --family voronoi --buckets 1000 --cosine 0.37 --json".split())
    out = capsys.readouterr()
    assert rc == 1 and out.out == "" and "tolerance" in out.err
