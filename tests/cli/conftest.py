"""The model-side fixtures (private tokenizer cache, micro config, small corpus) for CLI tests."""

from tests.t5.conftest import _private_cache, micro, small_corpus  # noqa: F401
