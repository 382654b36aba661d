"""``tune --figure`` and ``probe --figure``: a failure while drawing leaves no figure file.

The figure is the last thing these commands write (after the numbers are computed), in memory
and then atomically (:func:`lshsim.plots.save.save_figure`): a drawing that fails leaves the
folder as it was, and an existing figure of an earlier run untouched. (The other writing
commands' tests: ``reproduce`` in ``tests/studies/test_manifest.py``, ``train`` and
``finetune`` in ``tests/t5/finetune/test_bad_input_finetune.py``, ``sweep`` in
``tests/sweep/``, ``calibrate`` in ``tests/cli/test_calibrate.py``.)
"""

from __future__ import annotations

import pytest

from lshsim.cli.main import main

TUNE = ["tune", "--family", "minhash", "--threshold", "0.5"]
PROBE = ["probe", "--tap", "tests.probe.factories:make_tap", "--samples", "4", "--length", "8"]


def _broken(*_args, **_kw):
    raise RuntimeError("the drawing failed")


@pytest.mark.parametrize(
    ("argv", "plot"),
    [(TUNE, "lshsim.plots.tune.plot_tuning"), (PROBE, "lshsim.plots.probe.plot_tap")],
)
def test_a_failed_drawing_leaves_the_folder_as_it_was(argv, plot, tmp_path, monkeypatch, capsys):
    """A bug in the drawing: one line, exit 70, no figure (an older one unchanged)."""
    monkeypatch.setattr(plot, _broken)
    fig = tmp_path / "fig.png"
    assert main([*argv, "--figure", str(fig)]) == 70
    assert "the drawing failed" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    fig.write_bytes(b"an earlier figure")
    assert main([*argv, "--figure", str(fig)]) == 70
    assert fig.read_bytes() == b"an earlier figure" and list(tmp_path.iterdir()) == [fig]
