"""Fixtures of the model-side tests: a micro config and a small corpus.

The tests of this directory need the ``jax`` extra; they are skipped without it.
"""

from __future__ import annotations

import pytest

from lshsim.t5.configs import T5Config, padded_vocab

#: A two-layer model that compiles and steps in well under a second on one CPU core.
MICRO = T5Config(
    name="micro",
    vocab_size=padded_vocab(300),
    d_model=32,
    num_heads=2,
    d_kv=16,
    d_ff=64,
    num_encoder_layers=1,
    num_decoder_layers=1,
    num_pieces=300,
    input_length=32,
    batch_size=4,
    warmup_steps=10,
)


@pytest.fixture(scope="session")
def micro() -> T5Config:
    """The micro config."""
    return MICRO


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """A text file with 600 documents of the embedded corpus, one paragraph each."""
    from lshsim.t5.data.corpus import embedded_corpus

    docs = [" ".join(d.split()) for d in embedded_corpus()[:600]]
    path = tmp_path_factory.mktemp("corpus") / "docs.txt"
    path.write_text("\n\n".join(docs) + "\n")
    return path


def probe_at_initialisation(config, rows, ids, *, samples: int, router_draws: int) -> list:
    """Probe ``config`` at initialisation (overlaps 0.2, 0.5, 0.8; seed 0) and check the rows.

    Over 4 layers x 3 overlaps, at least 10 of the 12 predictions lie inside the 95%
    intervals and no |z| exceeds 4; returns the rows for the caller's lookup-specific checks.
    """
    from lshsim.t5 import probe

    result = probe.probe(
        config,
        probe.initial_params(config, 0),
        rows,
        ids,
        overlaps=(0.2, 0.5, 0.8),
        samples=samples,
        router_draws=router_draws,
        seed=0,
    )
    assert len(result) == 12 and set(result[0]) == set(probe.ROW_KEYS)
    inside = sum(r["ci_low"] <= r["predicted"] <= r["ci_high"] for r in result)
    assert inside >= 10, [(r["layer"], r["overlap"], r["z"]) for r in result]
    assert max(abs(r["z"]) for r in result) <= 4
    return result
