"""Token-ID (``lookup="tokenid"``): the bucket is the token id, the table is the vocabulary.

``i`` is the token id and ``w = 1``; the table has one row (or rank-``r`` expert) per
vocabulary entry, so ``buckets`` is the vocabulary size or 0. Two sentences collide at a
position exactly when their tokens there are equal (the probe's "family" is ``None``).
"""

from __future__ import annotations

from lshsim.t5.lookups.routed import RoutedLookup

__all__ = ["TOKENID", "TokenId"]


class TokenId(RoutedLookup):
    """The paper's Token-ID lookup."""

    name = "tokenid"
    label = "Token-ID"
    help = "the token id picks the row (the table is the vocabulary)"
    flags = ("rank", "buckets")
    cost_example = ("tokenid rank 0", {})
    fixed_table = True

    def table_size(self, cfg) -> int:
        """The vocabulary size (the only size it allows)."""
        return cfg.vocab_size

    def validate(self, cfg, n: int) -> None:
        """``buckets``: the vocabulary size (or 0)."""
        if n != cfg.vocab_size:
            raise ValueError(
                f"buckets: tokenid's table is the vocabulary ({cfg.vocab_size} rows), got {n}"
            )
        super().validate(cfg, n)

    def route(self, module, x2, token_ids, deterministic: bool):
        """The token ids, weight 1."""
        return token_ids.astype("int32"), None

    def probe_family(self, cfg) -> tuple[str | None, dict]:
        """None: the collision is token equality."""
        return None, {}


TOKENID = TokenId()
