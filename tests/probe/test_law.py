"""Check (1) of issue 44: a router fed inputs at controlled cosines, its gate redrawn i.i.d.
Gaussian per pair, collides at the exact Voronoi law (|z| <= 4 at 6 cosines, top-1 and top-2);
mispairing the positions of one sentence makes the same check fail."""

from __future__ import annotations

import numpy as np
import pytest

from lshsim import theory
from lshsim.hashing import Voronoi
from lshsim.probe import Capture, RouterTap
from lshsim.probe.measure import finish_rows, layer_stats

COSINES = (0.0, 0.2, 0.4, 0.6, 0.8, 0.95)
N, D, PAIRS, LENGTH = 8, 16, 96, 16


def _captures(cosine: float, k: int, rng) -> tuple[Capture, Capture]:
    """Unit inputs at exactly ``cosine``; each pair's gate a fresh N(0, 1) ``[D, N]`` draw."""
    xa = rng.standard_normal((PAIRS, LENGTH, D))
    z = rng.standard_normal((PAIRS, LENGTH, D))
    xa /= np.linalg.norm(xa, axis=-1, keepdims=True)
    z -= np.einsum("ptd,ptd->pt", z, xa)[..., None] * xa
    z /= np.linalg.norm(z, axis=-1, keepdims=True)
    xb = cosine * xa + np.sqrt(1 - cosine**2) * z
    gates = rng.standard_normal((PAIRS, D, N))
    choice = [np.argsort(-np.einsum("ptd,pdn->ptn", x, gates), axis=-1)[..., :k] for x in (xa, xb)]
    tokens = np.zeros((PAIRS, LENGTH), np.int64)
    return (
        Capture(choice=choice[0], inputs=xa.astype(np.float32), tokens=tokens),
        Capture(choice=choice[1], inputs=xb.astype(np.float32), tokens=tokens),
    )


def _rows(k: int, mispair: bool) -> list[dict]:
    tap = RouterTap("controlled", N, k, Voronoi.name, capture=lambda ids, mask: {})
    rng = np.random.default_rng(44)
    stats = []
    for i, c in enumerate(COSINES):
        a, b = _captures(c, k, rng)
        if mispair:  # the second sentence's choices read one position late
            b = Capture(choice=np.roll(b.choice, 1, axis=1), inputs=b.inputs, tokens=b.tokens)
        stats.append(layer_stats(tap, f"c/{i}", c, a, b, 0, i))
    return finish_rows(tap, stats)


@pytest.mark.parametrize("k", [1, 2])
def test_controlled_cosines_follow_the_exact_law(k):
    rows = _rows(k, mispair=False)
    assert len(rows) == len(COSINES)
    for row, c in zip(rows, COSINES, strict=True):
        assert row["cosine"] == pytest.approx(c, abs=1e-6)
        exact = (
            theory.probability(Voronoi.name, N, c)
            if k == 1
            else theory.topk_overlap(Voronoi.name, N, k, c)
        )  # the family's own law, directly: the per-position table is checked against it
        assert row["predicted"] == pytest.approx(exact, rel=1e-6)
        assert abs(row["z"]) <= 4, row
        assert row["departure"] == pytest.approx(row["measured"] - row["predicted"])


@pytest.mark.parametrize("k", [1, 2])
def test_mispaired_positions_fail_the_check(k):
    rows = _rows(k, mispair=True)
    assert max(abs(r["z"]) for r in rows) > 4


def test_identical_inputs_agree_exactly():
    """f = 1: identical inputs have cosine 1 and collide always; z is 0, not infinite."""
    tap = RouterTap("controlled", N, 2, Voronoi.name, capture=lambda ids, mask: {})
    a, _ = _captures(0.5, 2, np.random.default_rng(1))
    (row,) = finish_rows(tap, [layer_stats(tap, "c/0", 1.0, a, a, 4, 0)])
    assert row["cosine"] == 1.0 and row["measured"] == row["predicted"] == 1.0
    assert row["z"] == 0.0 and row["ci_low"] <= row["predicted"] <= row["ci_high"]


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (lambda x, s: (x * np.nan, s), "not finite"),
        (lambda x, s: (x.reshape(-1, x.shape[-1]), s), "inputs must be"),
        (lambda x, s: (x, s[..., :3]), "scored 3 experts"),
    ],
)
def test_malformed_captures_are_refused_by_layer(bad, says):
    from lshsim.probe.measure import capture_rows
    from lshsim.probe.modules import scores_tap

    g = np.random.default_rng(0).standard_normal((50, 6))
    w = np.random.default_rng(1).standard_normal((6, 4))

    def router(ids, mask):
        x = g[ids]
        return {"r/0": bad(x, x @ w)}

    tap = scores_tap(router, experts=4, top_k=2, name="bad")
    with pytest.raises(ValueError, match=f"tap bad: layer r/0.*{says}"):
        capture_rows(tap, np.arange(20).reshape(4, 5))


def test_layers_that_change_between_batches_are_refused():
    from lshsim.probe.measure import capture_rows

    def capture(ids, mask):
        name = f"r/{int(ids[0, 0] > 10)}"
        return {
            name: Capture(choice=np.zeros(ids.shape, np.int64), inputs=np.ones((*ids.shape, 2)))
        }

    tap = RouterTap("shifty", 4, 1, Voronoi.name, capture)
    with pytest.raises(ValueError, match="in one batch"):
        capture_rows(tap, np.arange(40).reshape(8, 5), batch=2)
