"""Fixtures of the model-side tests: a micro config, a small corpus, a private tokenizer cache.

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


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Trained tokenizers go to a session directory, not the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("LSHSIM_CACHE", str(tmp_path_factory.mktemp("lshsim-cache")))
    yield
    mp.undo()


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
