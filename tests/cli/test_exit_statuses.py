"""Exit statuses: a bug is one line (70), ``LSHSIM_TRACEBACK=1`` shows it, a closed pipe is quiet.

The statuses are :data:`lshsim.cli.errors.EXIT_CODES`, listed in ``lshsim --help`` and on the
vocabulary page (generated; ``test_vocabulary`` checks the page is current).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from lshsim.cli.errors import EXIT_CODES, TRACEBACK_VARIABLE, guarded, run_command
from lshsim.cli.main import main


def _raises(exc: BaseException):
    def handler(_args):
        raise exc

    return argparse.Namespace(func=handler)


@pytest.mark.parametrize(
    ("exc", "status", "line"),
    [
        (ValueError("--batch must be an integer >= 1, got 0"), 2, "lshsim: error: --batch must"),
        (OSError(36, "File name too long", "x" * 300), 2, "lshsim: error: xxx"),
        (KeyError("warmup_steps"), 70, "lshsim: internal error: KeyError: 'warmup_steps'"),
        (ZeroDivisionError("division by zero"), 70, "internal error: ZeroDivisionError"),
        (ModuleNotFoundError("No module named 'jax'", name="jax"), 2, 'lshsim[jax]"'),
        (ModuleNotFoundError("No module named 'nope'", name="nope"), 70, "internal error"),
        (KeyboardInterrupt(), 130, "lshsim: interrupted"),
    ],
)
def test_each_failure_is_one_line_with_its_status(exc, status, line, capsys, monkeypatch):
    """No traceback unless asked: the status of :data:`EXIT_CODES` and one line on stderr."""
    monkeypatch.delenv(TRACEBACK_VARIABLE, raising=False)
    assert status in EXIT_CODES
    assert run_command(_raises(exc)) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and line in err and "Traceback" not in err
    if status == 70:
        assert f"{TRACEBACK_VARIABLE}=1" in err


def test_the_variable_shows_the_traceback_before_the_line(capsys, monkeypatch):
    """``LSHSIM_TRACEBACK=1`` prints the hidden traceback, then the same one line."""
    monkeypatch.setenv(TRACEBACK_VARIABLE, "1")
    assert run_command(_raises(KeyError("warmup_steps"))) == 70
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last)") and "in handler" in err
    assert err.splitlines()[-1].startswith("lshsim: internal error: KeyError")
    monkeypatch.setenv(TRACEBACK_VARIABLE, "0")  # 0 is off
    assert run_command(_raises(ValueError("bad"))) == 2
    assert capsys.readouterr().err == "lshsim: error: bad\n"


def test_the_launcher_names_itself(capsys):
    """The launcher script's failures go through the same handler, under its own name."""
    assert guarded(lambda: 1 // 0, "memory_studies.py") == 70
    assert capsys.readouterr().err.startswith("memory_studies.py: internal error:")


def test_help_lists_every_status(capsys):
    """``lshsim --help`` ends with the statuses and the variable."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert TRACEBACK_VARIABLE in out
    assert all(f"{code:>3}  {meaning}" in out for code, meaning in EXIT_CODES.items())


@pytest.mark.parametrize(
    "argv", [["families"], ["theory", "--family", "simhash", "-n", "16", "--cosine", "0.5"]]
)
def test_a_closed_pipe_ends_quietly(argv):
    """Output into a pipe whose reader has gone (``| head``): no traceback, status 141."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "lshsim", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()  # the reader leaves before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait() == 141 and err == ""
