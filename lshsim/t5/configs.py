"""Named T5 v1.1 configurations, as code.

``small``, ``base`` and ``large`` are the paper's S, B and L (Table 3). ``base`` and ``large`` are
T5X's ``t5_1_1`` base and large. ``small`` is the paper's "shallower" S with 4 encoder and 4
decoder layers; the count in Table 3 (non-embedding 3.78E+07) pins it down as d_model 512,
8 heads of 64, d_ff 2048 (T5 1.0 small's widths): 4 x (4 + 8) x 512^2 attention plus
8 x 3 x 512 x 2048 gated-GELU weights = 37.75M, the rest (norms, position biases) 9.7k.
T5 v1.1 small's own widths (6 heads, d_ff 1024) would give 9.4M + 12.6M = 22M at 4+4 layers.

``tiny`` trains on two CPU cores in minutes.

References:
    Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
    Transformer"; T5X ``t5/t5_1_1/{base,large}.gin``; the paper's Table 3 and appendix.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

#: Sentinel ids (``<extra_id_0>`` ... ``<extra_id_99>``) that follow the real pieces.
NUM_SENTINELS = 100


@dataclasses.dataclass(frozen=True)
class T5Config:
    """Architecture and default training shapes of a T5 v1.1 encoder-decoder.

    Attributes:
        name: the config's name (``tiny``, ``small``, ...); recorded in checkpoints.
        vocab_size: rows of the (padded) embedding and output tables.
        d_model: width of the residual stream.
        num_heads: attention heads; each of width ``d_kv``.
        d_kv: width of one head's queries, keys and values.
        d_ff: hidden width of the gated-GELU feed-forward block.
        num_encoder_layers: encoder depth.
        num_decoder_layers: decoder depth.
        relative_attention_num_buckets: relative position buckets (one table per stack).
        relative_attention_max_distance: distance beyond which positions share a bucket.
        layer_norm_eps: RMSNorm epsilon.
        dropout_rate: dropout after attention, feed-forward and embeddings (0 in pretraining).
        z_loss: coefficient of the ``logsumexp(logits)^2`` auxiliary loss.
        dtype: compute dtype (``float32``; ``bfloat16`` on accelerators). Parameters stay f32.
        num_pieces: SentencePiece pieces of the tokenizer trained for this config.
        input_length: encoder length used in pretraining (after span corruption).
        batch_size: default training batch.
        warmup_steps: steps at the constant rate of the rsqrt schedule.
    """

    name: str
    vocab_size: int
    d_model: int
    num_heads: int
    d_kv: int
    d_ff: int
    num_encoder_layers: int
    num_decoder_layers: int
    relative_attention_num_buckets: int = 32
    relative_attention_max_distance: int = 128
    layer_norm_eps: float = 1e-6
    dropout_rate: float = 0.0
    z_loss: float = 1e-4
    dtype: str = "float32"
    num_pieces: int = 32000
    input_length: int = 512
    batch_size: int = 256
    warmup_steps: int = 10000

    def replace(self, **changes: Any) -> T5Config:
        """A copy with ``changes`` applied (unknown fields raise ``ValueError``)."""
        fields = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - fields)
        if unknown:
            raise ValueError(f"config: unknown field(s) {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serialisable)."""
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys), as written next to checkpoints."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> T5Config:
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - fields)
        if unknown:
            raise ValueError(f"config: unknown field(s) {', '.join(unknown)}")
        return cls(**d)


def padded_vocab(num_pieces: int) -> int:
    """Pieces plus the 100 sentinels, rounded up to a multiple of 128 (32000 -> 32128)."""
    return -(-(num_pieces + NUM_SENTINELS) // 128) * 128


CONFIGS: dict[str, T5Config] = {
    "tiny": T5Config(
        name="tiny",
        vocab_size=padded_vocab(2000),
        d_model=128,
        num_heads=4,
        d_kv=32,
        d_ff=512,
        num_encoder_layers=2,
        num_decoder_layers=2,
        num_pieces=2000,
        input_length=128,
        batch_size=32,
        warmup_steps=100,
    ),
    "small": T5Config(
        name="small",
        vocab_size=32128,
        d_model=512,
        num_heads=8,
        d_kv=64,
        d_ff=2048,
        num_encoder_layers=4,
        num_decoder_layers=4,
    ),
    "base": T5Config(
        name="base",
        vocab_size=32128,
        d_model=768,
        num_heads=12,
        d_kv=64,
        d_ff=2048,
        num_encoder_layers=12,
        num_decoder_layers=12,
    ),
    "large": T5Config(
        name="large",
        vocab_size=32128,
        d_model=1024,
        num_heads=16,
        d_kv=64,
        d_ff=2816,
        num_encoder_layers=24,
        num_decoder_layers=24,
    ),
}

#: Table 3 of the paper: (embedding, non-embedding) parameters of the baselines.
TABLE3 = {"small": (3.29e7, 3.78e7), "base": (4.93e7, 1.98e8), "large": (6.58e7, 7.17e8)}


def get_config(name: str | T5Config) -> T5Config:
    """The named config (or ``name`` itself if it already is one).

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    if isinstance(name, T5Config):
        return name
    try:
        return CONFIGS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"config: unknown config {name!r}; choose one of {', '.join(CONFIGS)}"
        ) from None
