"""The model-side fixtures (micro config, small corpus) for CLI tests."""

from tests.t5.conftest import micro, small_corpus  # noqa: F401
