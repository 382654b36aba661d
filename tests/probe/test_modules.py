"""Product-key memories (against a transcription of XLM's ``get_indices``), scoring
callables and Engram-style hash mappings (against the project's Engram transcription)."""

from __future__ import annotations

import numpy as np
import pytest

from lshsim.hashing.engram import EngramHash
from lshsim.probe.measure import probe_tap
from lshsim.probe.modules import hash_tap, scores_tap
from lshsim.testing.engram_reference import NgramHashMappingRef
from tests import LazyModule, needs

# imported by the first test that uses it, not at collection in every pytest-xdist worker
pytestmark = needs("torch")
torch = LazyModule("torch")

VOCAB = 300


def _memory_model(knn: int, heads: int = 2):
    from tests.probe.xlm_reference import MemoryModel

    torch.manual_seed(3)
    return MemoryModel(VOCAB, 24, k_dim=16, n_keys=12, heads=heads, knn=knn, v_dim=8).eval()


@pytest.mark.parametrize(("knn", "head"), [(1, 0), (4, 1)])
def test_productkey_slots_equal_xlm_get_indices(knn, head):
    from lshsim.probe.modules import productkey_tap

    model = _memory_model(knn)
    tap = productkey_tap(model, {"memory/0": model.memory}, head=head)
    assert tap.experts == 144 and tap.top_k == knn
    ids = np.random.default_rng(0).integers(0, VOCAB, size=(5, 9))
    cap = tap.capture(ids, np.ones(ids.shape, bool))["memory/0"]
    want = model.memory.last_indices[:, head].numpy().reshape(5, 9, knn)  # XLM's own read
    np.testing.assert_array_equal(cap.choice, want)
    assert cap.inputs.shape == (5, 9, 16)


def test_productkey_probe_follows_the_law_at_init():
    """Gaussian sub-keys: top-1 collisions at the product of the half-cosine Voronoi laws;
    top-4 runs through the redrawn sub-keys."""
    from lshsim.probe.modules import productkey_tap

    rng = np.random.default_rng(1)
    rows, replace = rng.integers(0, VOCAB, size=(60, 16)), np.arange(VOCAB)
    for knn in (1, 4):
        model = _memory_model(knn, heads=1)
        tap = productkey_tap(model, {"memory/0": model.memory}, vocab=VOCAB)
        got = probe_tap(tap, rows, replace, overlaps=[0.3, 0.8], samples=24, router_draws=4)
        assert len(got) == 2
        for r in got:
            assert abs(r["z"]) < 5, r
            assert np.isnan(r["predicted_at_f"]) == (knn > 1)


def test_scores_tap_takes_any_callable():
    g = np.random.default_rng(2).standard_normal((VOCAB, 6)).astype(np.float32)
    w = np.random.default_rng(3).standard_normal((6, 5)).astype(np.float32)

    def router(ids, mask):
        x = g[ids]
        return {"mine/0": (x, x @ w)}

    tap = scores_tap(router, experts=5, top_k=2, name="mine")
    cap = tap.capture(np.array([[1, 2, 3]]), np.ones((1, 3), bool))["mine/0"]
    np.testing.assert_array_equal(cap.choice[0], np.argsort(-(g[[1, 2, 3]] @ w), axis=-1)[:, :2])
    with pytest.raises(ValueError, match="scored 5 experts, not 4"):
        scores_tap(router, experts=4).capture(np.array([[1]]), np.ones((1, 1), bool))


def test_hash_tap_equals_the_project_engram_and_follows_its_law():
    """Engram's NgramHashMapping (transcribed), with a compressing lookup: head 0 of every
    layer equals EngramHash's; collisions sit at n-gram equality (on compressed ids) + 1/m."""
    rng = np.random.default_rng(4)
    lookup = rng.integers(0, 40, size=VOCAB)
    lookup[:40] = np.arange(40)
    ref = NgramHashMappingRef([1009, 1013], 3, 2, [1, 5], 0, 0, 40, lookup_table=lookup)
    ours = EngramHash(lookup=lookup, table_sizes=[1009, 1013], max_ngram_size=3, heads=2,
                      layer_ids=[1, 5], pad_id=0)  # fmt: skip
    tap = hash_tap(ref, vocab=VOCAB)
    assert dict(tap.moduli) == {"layers/1": ref.vocab_size_across_layers[1][0][0],
                                "layers/5": ref.vocab_size_across_layers[5][0][0]}  # fmt: skip
    ids = rng.integers(0, VOCAB, size=(4, 11))
    caps = tap.capture(ids, np.ones(ids.shape, bool))
    for layer in (1, 5):
        np.testing.assert_array_equal(
            caps[f"layers/{layer}"].choice[..., 0], ours.hash(ids, layer)[..., 0]
        )
    pairs = rng.integers(0, VOCAB, size=(80, 24))
    args = dict(overlaps=[0.2, 0.6, 0.9], samples=64, router_draws=8)
    rows = probe_tap(tap, pairs, np.arange(VOCAB), **args)
    for r in rows:
        assert abs(r["z"]) < 4, r

    class Raw:  # the same hash, its windows compared on the raw ids (no compress)
        hash = ref.hash
        vocab_size_across_layers = ref.vocab_size_across_layers

    raw = probe_tap(hash_tap(Raw(), vocab=VOCAB), pairs, np.arange(VOCAB), **args)
    for r, q in zip(rows, raw, strict=True):  # 300 ids onto 40: windows match more often
        assert r["measured"] == q["measured"] and r["realised"] >= q["realised"]
    assert rows[0]["realised"] > raw[0]["realised"] + 0.01
    rms = [np.sqrt(np.mean([r["z"] ** 2 for r in rs])) for rs in (rows, raw)]
    assert rms[0] < rms[1]  # the law holds on compressed windows (rms z 0.07 against 2.1)


def test_hash_tap_needs_moduli():
    class Bare:
        def hash(self, ids):
            return {0: np.zeros((*np.shape(ids), 1), np.int64)}

    with pytest.raises(ValueError, match="moduli"):
        hash_tap(Bare())
    assert hash_tap(Bare(), moduli={0: 7}).moduli == {"layers/0": 7}
