"""The tuned law against real indexes: datasketch's MinHashLSH and lshsim's own (k, L) index.

Each point's pairs are independent trials of one index (``lshsim.tune.agreement``); a point
agrees when ``|z| <= 4`` (z from the Poisson-binomial's variance of the predicted rates).
Fixed seeds; the counts below resolve the S-curve's middle to a few percent.
"""

from __future__ import annotations

import numpy as np
import pytest

from lshsim.t5.data.corpus import embedded_corpus
from lshsim.tune import make_amplifier
from lshsim.tune.agreement import (
    agreement,
    datasketch_hits,
    index_hits,
    jaccard_pairs,
    shingle_pairs,
)

Z_MAX = 4.0
#: |A u B| of the controlled pairs, and the shared sizes: 8 Jaccard indexes across the curve
UNION = 40
SHARED = (8, 14, 18, 22, 26, 30, 34, 38)
#: datasketch's signature and bands (b, r): the S-curve's middle near J = 0.7
NUM_PERM, BANDS, ROWS = 128, 16, 8


@pytest.mark.parametrize("shared", SHARED)
def test_datasketch_candidate_rate_is_the_predicted_s_curve(shared):
    rng = np.random.default_rng(shared)
    first, second = jaccard_pairs(400, shared, UNION, rng)
    hits = datasketch_hits(first, second, num_perm=NUM_PERM, bands=BANDS, rows=ROWS)
    predicted = make_amplifier("minhash").curve([shared / UNION], ROWS, BANDS)[0]
    row = agreement(hits, predicted)
    assert abs(row["z"]) <= Z_MAX, row


def test_datasketch_on_shingled_corpus_documents():
    """Documents against edited copies: hits match the per-pair predictions, overall and by J."""
    docs = [d for d in embedded_corpus() if 40 <= len(d.split()) <= 400][:600]
    rng = np.random.default_rng(7)
    first, second, jac = shingle_pairs(docs, rng.uniform(0.0, 0.35, len(docs)), rng)
    hits = datasketch_hits(first, second, num_perm=NUM_PERM, bands=BANDS, rows=ROWS)
    predicted = make_amplifier("minhash").curve(jac, ROWS, BANDS)
    assert abs(agreement(hits, predicted)["z"]) <= Z_MAX
    middle = (predicted > 0.05) & (predicted < 0.95)
    assert middle.sum() >= 100  # the pairs do test the curve's slope
    for lo, hi in ((0.0, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)):
        part = (jac >= lo) & (jac < hi)
        assert part.sum() >= 30, (lo, hi)
        assert abs(agreement(hits[part], predicted[part])["z"]) <= Z_MAX, (lo, hi)


@pytest.mark.parametrize(
    ("family", "n", "k", "tables"), [("simhash", 2, 6, 8), ("crosspolytope", 8, 2, 6)]
)
@pytest.mark.parametrize("cosine", [0.3, 0.6, 0.8, 0.9, 0.95])
def test_own_index_recall_is_the_predicted_law(family, n, k, tables, cosine):
    hits = index_hits(family, n, cosine, 400, dim=16, concat=k, tables=tables, seed=3)
    predicted = make_amplifier(family, buckets=n).curve([cosine], k, tables)[0]
    row = agreement(hits, predicted)
    assert abs(row["z"]) <= Z_MAX, row


def test_agreement_fails_when_the_prediction_is_off():
    """The check can fail: the same hits against the curve one band short are rejected."""
    rng = np.random.default_rng(99)
    first, second = jaccard_pairs(400, 26, UNION, rng)
    hits = datasketch_hits(first, second, num_perm=NUM_PERM, bands=BANDS, rows=ROWS)
    amp = make_amplifier("minhash")
    assert abs(agreement(hits, amp.curve([26 / UNION], ROWS, BANDS)[0])["z"]) <= Z_MAX
    wrong = amp.curve([26 / UNION], ROWS + 2, BANDS)[0]
    assert abs(agreement(hits, wrong)["z"]) > Z_MAX
