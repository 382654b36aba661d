"""Token-ID lookup: each token is routed by its vocabulary id alone, ``bucket = id mod n``.

With ``n >= V`` every token has its own bucket, so the fraction of positions at which two
aligned sentences that share a fraction ``f`` of their tokens use the same bucket is exactly
``f``, whatever ``n`` (the paper's Token-ID rate). With ``n < V`` distinct tokens can share a
bucket, which only adds collisions. There is no randomness: ``seed`` is accepted for a uniform
interface and ignored.

Reference: the paper, Sec. 3.2 ("Token-ID Lookup").
"""

from __future__ import annotations

import numba
import numpy as np

from lshsim._validate import as_token_ids, check_buckets
from lshsim.hashing.base import HashFamily, OverlapLaw
from lshsim.laws.closed_forms import tokenid_probability
from lshsim.sentences import shared_tokens


@numba.njit(cache=True, nogil=True)
def tokenid_buckets(tokens, n, out):  # pragma: no cover - jit
    """``out[i] = tokens[i] mod n`` for flat non-negative int64 ``tokens``."""
    for i in range(tokens.shape[0]):
        out[i] = tokens[i] % n


class TokenID(HashFamily):
    """Token-ID routing: ``bucket = id mod n``.

    ``hash(tokens)`` maps an int array of any shape (ids >= 0) to int64 bucket ids of the same
    shape; a 1-D batch of ``m`` tokens gives int64[m].
    """

    name = "tokenid"
    help = "token id mod n (per-token routing; one trial per aligned position)"
    reference = "lshsim.testing.reference:tokenid"
    overlap_law_is_exact = True
    input_kind = "tokens"
    similarity = "overlap"

    @classmethod
    def amplification_law(cls, n, similarities, *, length=32, vocab=32128, **params):
        """Atoms 1 and 0: ``id mod n`` is fixed, so a pair collides always or never.

        With weights ``P`` and ``1 - P``, ``P`` the per-position rate at overlap ``f``: no
        choice of ``k`` and ``L`` changes it (every table holds the same function).
        """
        n = cls.check_params(n, **params)["n"]
        p = np.array(
            [
                tokenid_probability(shared_tokens(f, length), length, n=n, vocab=vocab)
                for f in np.asarray(similarities, dtype=np.float64)
            ]
        )
        return np.tile([1.0, 0.0], (p.size, 1)), np.stack([p, 1.0 - p], axis=1)

    @classmethod
    def overlap_law(cls, n, overlap, *, dim, length, vocab, cosines, seed, **params):
        """``s/l + (1 - s/l) eps``: the per-position rate, ``eps`` the ``id mod n`` folding."""
        n = cls.check_params(n, **params)["n"]
        shared = shared_tokens(overlap, length)
        return OverlapLaw(tokenid_probability(shared, length, n=n, vocab=vocab))

    @classmethod
    def check_params(cls, n, **params):
        """Validate ``n`` in ``[2, 2^62]``; no other parameters."""
        if params:
            raise ValueError(f"unknown parameter(s) for tokenid: {', '.join(params)}")
        return {"n": check_buckets(n)}

    def _draw(self, rng):
        pass

    def _hash(self, tokens):
        shape = np.shape(tokens)  # as_token_ids makes a 0-d scalar 1-D; keep its shape
        tokens = as_token_ids(tokens, "batch")
        if tokens.size and tokens.min() < 0:
            raise ValueError("batch token ids must be >= 0 for family 'tokenid'")
        flat = tokens.reshape(-1)
        out = np.empty(flat.shape[0], dtype=np.int64)
        tokenid_buckets(flat, np.int64(self.n), out)
        return out.reshape(shape)
