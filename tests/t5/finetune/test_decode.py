"""Greedy decoding: each emitted token is the teacher-forced argmax given the ones before it."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.t5.finetune.decode import greedy_decode, make_greedy_decoder  # noqa: E402
from lshsim.t5.model import T5, init_params  # noqa: E402


def test_greedy_is_the_teacher_forced_argmax(micro):
    params = init_params(micro, jax.random.key(3))
    rng = np.random.default_rng(0)
    enc = rng.integers(2, micro.vocab_size, (5, 12)).astype(np.int32)
    enc[:, 9:] = 0  # padding
    ids = greedy_decode(make_greedy_decoder(micro, 6), params, enc, batch=4)  # 2 batches
    assert ids.shape == (5, 6)
    dec_in = np.zeros_like(ids)
    dec_in[:, 1:] = ids[:, :-1]
    logits = T5(micro).apply({"params": params}, jnp.asarray(enc), jnp.asarray(dec_in))
    forced = np.asarray(jnp.argmax(logits, -1))
    for row, want in zip(ids, forced, strict=True):
        eos = np.flatnonzero(row == 1)
        end = eos[0] + 1 if eos.size else len(row)
        assert (row[:end] == want[:end]).all()
        assert (row[end:] == 0).all()  # padding after EOS
