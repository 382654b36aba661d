"""The ``frequency_collisions`` study on a synthetic Zipfian corpus, its report and figure.

The corpus and tokenizer are replaced by token rows drawn from a Zipf law (the real corpus is
the study's own business: ``lshsim reproduce``), so the test checks the computation: the
law's columns are :func:`lshsim.laws.frequency.collision_law` of the spectra, Token-ID is
collision-free from ``m = V``, the hashed families sit near the law, the polynomial id
collides far above it at ``m = k V`` but not at ``k V + 64``, and the same seed gives the same
data.
"""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.figure import Figure

from lshsim.laws import frequency as law
from lshsim.plots.frequency import plot_frequency_collisions
from lshsim.studies import STUDIES
from lshsim.studies import frequency as study

VOCAB = 400


def _rows(corpus, documents, seed):
    rng = np.random.default_rng(11)
    p = 1 / np.arange(1, VOCAB - 1) ** 1.05
    rows = [(2 + rng.choice(VOCAB - 2, 300, p=p / p.sum())).tolist() for _ in range(40)]
    return rows, SimpleNamespace(vocab_size=VOCAB, pad_id=0)


@pytest.fixture(scope="module")
def data():
    mp = pytest.MonkeyPatch()
    mp.setattr(study, "corpus_tokens", _rows)
    cfg = dataclasses.replace(
        STUDIES["frequency_collisions"].config("quick"), frequency_offsets=(0, 64)
    )
    out = study.frequency_collisions(cfg, 3), study.frequency_collisions(cfg, 3), cfg
    mp.undo()
    return out


def test_law_columns_measured_shares_and_longcat(data):
    d, again, _ = data
    assert json.dumps(d) == json.dumps(again)
    rows, _ = _rows(None, None, 0)
    _, counts = law.spectrum(np.concatenate(rows))
    tok = d["tables"]["tokenid"]
    for i, m in enumerate(tok["m"]):
        want = law.collision_law(counts, [m])["head 0"]
        assert tok["head 0"]["mean"][i] == pytest.approx(want["mean"], rel=1e-12)
        assert tok["head 0"]["sd"][i] == pytest.approx(want["sd"], rel=1e-12)
        if m >= VOCAB:
            assert tok["head 0"]["measured"][i] == 0.0
    for name in ("ngram N=1", "ngram N=2"):
        s = d["tables"][name]
        for event in ("head 0", "all", "any") if name.endswith("2") else ("head 0",):
            p = s[event]
            z = (np.array(p["measured"]) - p["mean"]) / np.array(p["sd"])
            assert np.all(np.abs(z) < 4), (name, event, z)
    lc = d["longcat"]
    at = {delta: i for i, delta in enumerate(lc["offsets"])}
    assert lc["polynomial"][at[0]] > lc["mean"][at[0]] + 5 * lc["sd"][at[0]]
    for delta in (0, 64):
        assert abs(lc["hashed"][at[delta]] - lc["mean"][at[delta]]) < 4 * lc["sd"][at[delta]]
    bands = d["bands"]["ngram N=2"]
    assert sum(b["occurrences"] for b in bands) == d["bigrams"]


def test_report_and_figure(data):
    d, _, _ = data
    lines = study.frequency_section(d)
    assert any(line.startswith("| tokenid |") for line in lines)
    assert any("LongCat" in line for line in lines)
    fig = plot_frequency_collisions(d)
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    with pytest.raises(KeyError, match="tables"):
        plot_frequency_collisions({"bands": d["bands"]})
