"""Tap factories for ``lshsim probe --tap tests.probe.factories:NAME`` in the tests."""

from __future__ import annotations

import numpy as np

from lshsim.probe.modules import scores_tap

VOCAB = 64


def make_tap():
    """A random Gaussian router on random token embeddings (4 experts, top-1)."""
    emb = np.random.default_rng(0).standard_normal((VOCAB, 8)).astype(np.float32)
    gate = np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32)

    def router(ids, mask):
        x = emb[ids % VOCAB]
        return {"mine/0": (x, x @ gate)}

    return scores_tap(router, experts=4, name="embedding router", vocab=VOCAB)


def not_a_tap():
    """Returns something else."""
    return 42
