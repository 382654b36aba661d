"""Fixtures of the CLI tests: the model-side ones of ``tests/t5`` (a small corpus, a private
tokenizer cache), which ``test_cli_t5.py`` used when it lived there."""

from __future__ import annotations

from tests.t5.conftest import _private_cache, small_corpus

__all__ = ["_private_cache", "small_corpus"]
