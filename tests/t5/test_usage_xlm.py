"""The probe's usage metrics against a transcription of XLM's evaluator on the same inputs.

XLM (facebookresearch/XLM, ``xlm/evaluation/evaluator.py``) accumulates, per memory slot, the
softmax weights (``mem_scores_w``) and the selection counts (``mem_scores_u``) in float32,
normalises both, and reports ``kl_score``, ``gini_score`` and ``tops`` of each. The functions
below transcribe those lines (NumPy only); lshsim computes in float64, so the float metrics
agree to float32 rounding (a few 1e-7) and the integer top counts exactly (inputs with no
cumulative mass within 1e-5 of a threshold, where float32 rounding could move the count).
"""

from __future__ import annotations

import numpy as np
import pytest

from lshsim.t5.usage import gini, gini_xlm, top_counts, usage_metrics


def _kl_score(x):  # XLM's kl_score
    _x = x.copy()
    _x[x == 0] = 1
    return np.log(len(x)) + (x * np.log(_x)).sum()


def _gini_score(x):  # XLM's gini_score
    b = np.cumsum(np.sort(x)).mean()
    return 1 - 2 * b


def _tops(x):  # XLM's tops
    y = np.cumsum(np.sort(x))
    top50, top90, top99 = y.shape[0] - np.searchsorted(y, [0.5, 0.1, 0.01])
    return top50, top90, top99


def _xlm_usage(mem_att, mem_size):
    """XLM's eval_memory_usage: the scores dict, without the name prefix."""
    mem_scores_w = np.zeros(mem_size, dtype=np.float32)
    mem_scores_u = np.zeros(mem_size, dtype=np.float32)
    for indices, weights in mem_att:
        np.add.at(mem_scores_w, indices, weights)
        np.add.at(mem_scores_u, indices, 1)
    mem_scores_w = mem_scores_w / mem_scores_w.sum()
    mem_scores_u = mem_scores_u / mem_scores_u.sum()
    scores = {"mem_used": float(100 * (mem_scores_w != 0).sum() / len(mem_scores_w))}
    for s, x in (("w", mem_scores_w), ("u", mem_scores_u)):
        scores[f"mem_kl_{s}"] = float(_kl_score(x))
        scores[f"mem_gini_{s}"] = float(_gini_score(x))
        for t, v in zip((50, 90, 99), _tops(x), strict=True):
            scores[f"mem_top{t}_{s}"] = float(v)
    return scores


def _case(seed: int, n: int, tokens: int, k: int, skew: float):
    """PKM-like selections: ``tokens`` rows of ``k`` distinct slots (skewed), softmax weights."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(n, skew))
    idx = np.stack([rng.choice(n, k, replace=False, p=p) for _ in range(tokens)])
    logits = rng.normal(0, 2, (tokens, k))
    w = np.exp(logits - logits.max(1, keepdims=True))
    w = (w / w.sum(1, keepdims=True)).astype(np.float32)
    return idx, w


def _far_from_thresholds(counts) -> bool:
    y = np.cumsum(np.sort(counts / counts.sum()))
    return bool(np.all(np.abs(y[:, None] - np.array([0.5, 0.1, 0.01])) > 1e-5))


CASES = [(0, 64, 40, 4, 0.3), (1, 100, 200, 1, 1.0), (2, 16, 30, 3, 5.0), (3, 256, 50, 8, 0.1)]


@pytest.mark.parametrize(("seed", "n", "tokens", "k", "skew"), CASES)
def test_metrics_equal_xlms_on_the_same_selections(seed, n, tokens, k, skew):
    """Every XLM metric, weighted (_w) and unweighted (_u), equals lshsim's on one input."""
    idx, w = _case(seed, n, tokens, k, skew)
    want = _xlm_usage([(idx.ravel(), w.ravel())], n)
    got = usage_metrics(idx, n, weights=w)
    assert got["used"] * 100 == pytest.approx(want["mem_used"], abs=1e-9)
    tol = 2e-6  # float32 accumulation in XLM against float64 here
    for s, suffix in (("u", ""), ("w", "_w")):
        assert got["kl_uniform" + suffix] == pytest.approx(want[f"mem_kl_{s}"], abs=tol)
        assert got["gini_xlm" + suffix] == pytest.approx(want[f"mem_gini_{s}"], abs=tol)
        # the standard Gini is XLM's plus 1/n
        assert got["gini" + suffix] - 1 / n == pytest.approx(want[f"mem_gini_{s}"], abs=tol)
    counts_u = np.bincount(idx.ravel(), minlength=n).astype(np.float64)
    counts_w = np.bincount(idx.ravel(), weights=w.ravel(), minlength=n)
    for s, suffix, c in (("u", "", counts_u), ("w", "_w", counts_w)):
        if _far_from_thresholds(c):
            for t in (50, 90, 99):
                assert got[f"top{t}{suffix}"] == want[f"mem_top{t}_{s}"], (s, t)


def test_xlm_gini_is_standard_minus_one_over_n_at_the_extremes():
    """Even use: standard 0, XLM -1/n; one slot: standard (n-1)/n, XLM (n-2)/n; and the
    tops of 4 even slots are XLM's 3, 4, 4 (a threshold hit exactly counts the slot)."""
    even = np.ones(4)
    assert gini(even) == 0.0 and gini_xlm(even) == pytest.approx(-0.25, abs=1e-15)
    one = np.array([0, 0, 7, 0.0])
    assert gini(one) == pytest.approx(0.75) and gini_xlm(one) == pytest.approx(0.5)
    assert top_counts(even) == {"top50": 3, "top90": 4, "top99": 4}
    assert tuple(int(v) for v in _tops((even / 4).astype(np.float32))) == (3, 4, 4)


def test_bad_weights():
    with pytest.raises(ValueError, match=r"^weights: need the shape of slots"):
        usage_metrics([0, 1], 4, weights=[1.0])
    with pytest.raises(ValueError, match=r"^weights: need finite values >= 0"):
        usage_metrics([0, 1], 4, weights=[1.0, -1.0])
