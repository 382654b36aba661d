"""``lshsim train``'s multi-process flags: checked before JAX starts, one line and exit 2."""

from __future__ import annotations

import pytest

from lshsim.cli.main import main

TRAIN = ["train", "--config", "tiny", "--steps", "1", "--out"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--process-id", "2"], "--process-id: needs --coordinator and --num-processes too"),
        (
            ["--coordinator", "h:1", "--num-processes", "2", "--process-id", "2"],
            "--process-id must be an integer in [0, 1], got 2",
        ),
        (
            ["--coordinator", "h:port", "--num-processes", "2", "--process-id", "0"],
            "--coordinator port must be an integer, got 'port'",
        ),
        (["--distributed", "auto", "--num-processes", "2"], "leave out --num-processes"),
    ],
)
def test_bad_multi_process_flags_exit_2_with_one_line(capsys, tmp_path, flags, message):
    code = main([*TRAIN, str(tmp_path / "run"), *flags])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("lshsim: error: ") and message in err
    assert not (tmp_path / "run").exists()  # nothing written


def test_help_documents_the_flags_and_commands(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for text in ("--coordinator HOST:PORT", "--distributed {auto}", "--init-timeout S", "srun"):
        assert text in out
