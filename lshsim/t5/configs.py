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

from lshsim._validate import check_float, check_int
from lshsim.t5.experts import EXPERT_IMPLS as EXPERT_IMPLS  # re-exported
from lshsim.t5.lookups import DEFAULT_BUCKETS, NO_LOOKUP, Lookup, lookup_of
from lshsim.t5.lookups import LOOKUPS as _LOOKUPS
from lshsim.t5.lookups.lsh import LSH_FAMILIES
from lshsim.t5.lookups.lsh import LSH_HASH_FAMILIES as LSH_HASH_FAMILIES  # re-exported
from lshsim.t5.memory_methods import METHODS, NO_MEMORY

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
        memory: how a wider token representation is consumed (paper section 6):
            ``none``, ``sum`` (the K embedding blocks are summed at the bottom), ``sameup``
            (Algorithm 2, layers always compute block 0), ``altup`` (Algorithm 2, layer
            ``i`` computes block ``i mod K``) or ``gemma3n`` (AltUp as Gemma 3n runs it:
            :mod:`lshsim.t5.altup_gemma3n`; only ``memory_k`` tunes it).
        memory_k: K, the number of width-``d`` blocks of the representation (>= 1).
        memory_extra: extra embedding width ``e`` beyond ``d``; 0 means ``(K-1) d``. Any other
            value takes the divide-and-project path: ``e`` is split into ``K-1`` sub-blocks of
            ``e/(K-1)``, each projected to ``d``.
        memory_cross: how the decoder's cross-attention reads the K-block encoder output:
            ``wide`` (keys and values project all ``K d``; the paper's Table 3) or ``sum``.
        memory_output: how the K blocks reach the logits: ``wide`` (a ``K d x vocab`` output
            table, the paper's Table 3) or ``sum`` (blocks summed, a ``d x vocab`` table).
        lookup: partial experts added to every layer's output: ``none`` or a lookup of
            :data:`lshsim.t5.lookups.LOOKUPS` (``tokenid``, ``softmax``, ``lsh``, ``productkey``,
            ``ngram``).
        expert_rank: 0 (a constant vector per bucket) or ``r`` (``V relu(U^T x)``).
        buckets: table size of each layer's lookup; 0 means the vocabulary for ``tokenid``
            (the only size it allows) and 64 otherwise.
        lsh_family: ``simhash`` (``log2(buckets)`` hyperplanes) or ``crosspolytope``
            (Gaussian rotation to ``buckets/2`` coordinates).
        lookup_seed: seed of the fixed LSH projections (layer ``i`` of the encoder uses
            ``SeedSequence([lookup_seed, 0, i])``, of the decoder ``[lookup_seed, 1, i]``).
        router_jitter: softmax lookup's multiplicative jitter ``U[1-eps, 1+eps]`` on a copy of
            the router input, in training only.
        router_balance_loss: coefficient of the Switch load-balancing loss (0: off).
        router_z_loss: coefficient of the router z-loss (0: off).
        expert_impl: ``gather`` (per-token weight gather; fast on CPU), ``ragged``
            (tokens sorted by bucket and ``jax.lax.ragged_dot``; ``N d`` memory instead of
            ``N d r``) or ``auto`` (``ragged`` on GPU/TPU, ``gather`` on CPU; see
            :mod:`lshsim.t5.experts`).
        topk: slots each token reads (``productkey``: PKM's top-k, ``1 <= k <= sqrt(n)``).
        lookup_heads: product-key heads (summed) or n-gram hash heads (``--heads``; >= 1).
        ngram: tokens hashed per n-gram bucket (``ngram`` lookup; >= 1); the ``engram``
            lookup hashes every order ``2 .. ngram`` (Engram's ``max_ngram_size``).
        engram_tokenizer: a SentencePiece ``.model`` whose vocabulary builds Engram's
            compressing map (``engram`` lookup); ``""``: the ids are hashed uncompressed.
        scan_layers: run each stack's layers as one ``jax.lax.scan`` over stacked parameters
            (``encoder/layers/...`` with a leading ``layers`` axis, as MaxText's and T5X's
            ``scan_layers``; the default) instead of ``layers_{i}`` unrolled: tracing and
            compiling do not grow with depth. The same function, initial parameters and
            updates as the unrolled model (:mod:`lshsim.t5.scan` converts parameters both
            ways; the optimiser runs per layer): what differs between layers (a widened
            stack's computed block, a lookup's per-layer hash draw) is scanned data. Dropout
            draws differ between the layouts. Parameters of another size in each layer
            (``engram``'s tables: primes found per layer) stay per layer beside the scan. A
            plugin lookup that cannot be scanned runs unrolled (:attr:`scanned`). A record
            without the field (written before it existed) is unrolled (:meth:`from_dict`).

    See :mod:`lshsim.t5.lookups` for the ``productkey``, ``ngram`` and ``engram`` lookups.
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
    memory: str = "none"
    memory_k: int = 2
    memory_extra: int = 0
    memory_cross: str = "wide"
    memory_output: str = "wide"
    lookup: str = "none"
    expert_rank: int = 0
    buckets: int = 0
    lsh_family: str = "simhash"
    lookup_seed: int = 0
    router_jitter: float = 0.01
    router_balance_loss: float = 0.0
    router_z_loss: float = 0.0
    expert_impl: str = "auto"
    topk: int = 1
    lookup_heads: int = 1
    ngram: int = 2
    engram_tokenizer: str = ""
    scan_layers: bool = True

    def __post_init__(self):
        """Validate the memory and lookup fields (one-line errors naming the parameter)."""
        _validate_memory(self)

    @property
    def widened(self) -> bool:
        """Whether the token representation is K blocks wide (sameup / altup)."""
        method = METHODS.get(self.memory)
        return method is not None and method.widened

    @property
    def scanned(self) -> bool:
        """Whether the stacks run scanned: ``scan_layers``, unless the lookup cannot be.

        Every built-in lookup can; a plugin's may declare otherwise
        (:attr:`lshsim.t5.lookups.Lookup.scannable`).
        """
        lookup = lookup_of(self)
        return self.scan_layers and (lookup is None or lookup.scannable)

    @property
    def embed_width(self) -> int:
        """Width of the input embedding table: ``d``, or ``d + e`` with memory."""
        if self.memory == NO_MEMORY or not METHODS[self.memory].wide_embedding:
            return self.d_model
        return self.d_model + (self.memory_extra or (self.memory_k - 1) * self.d_model)

    @property
    def num_buckets(self) -> int:
        """Each layer's lookup table size (the lookup's rule: the vocabulary for ``tokenid``)."""
        lookup = lookup_of(self)
        return lookup.table_size(self) if lookup else self.buckets or DEFAULT_BUCKETS

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
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``.

        A dict without ``scan_layers`` was written before scanning was the default, by an
        unrolled run: it reads as unrolled, so its checkpoints load as they were saved.
        """
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - fields)
        if unknown:
            raise ValueError(f"config: unknown field(s) {', '.join(unknown)}")
        return cls(**{"scan_layers": False, **d})


#: Choices of the memory and lookup fields (the CLI and the studies enumerate these): "none"
#: and the registries :data:`lshsim.t5.memory_methods.METHODS`, :data:`lshsim.t5.lookups.LOOKUPS`.
MEMORY_METHODS = (NO_MEMORY, *METHODS)
LOOKUPS = (NO_LOOKUP, *_LOOKUPS)
#: ``lsh_family``'s choices, :data:`LSH_FAMILIES`, and their :mod:`lshsim.hashing` families,
#: :data:`LSH_HASH_FAMILIES`, are :mod:`lshsim.t5.lookups.lsh`'s (imported above).
COLLAPSES = ("wide", "sum")


def _choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name}: unknown value {value!r}; choose one of {', '.join(choices)}")


def _validate_memory(cfg: T5Config) -> None:
    """Check the memory and lookup fields; raise a one-line ``ValueError`` naming the field."""
    _choice("memory", cfg.memory, MEMORY_METHODS)
    _choice("lookup", cfg.lookup, LOOKUPS)
    _choice("lsh_family", cfg.lsh_family, LSH_FAMILIES)
    _choice("memory_cross", cfg.memory_cross, COLLAPSES)
    _choice("memory_output", cfg.memory_output, COLLAPSES)
    _choice("expert_impl", cfg.expert_impl, EXPERT_IMPLS)
    k = check_int("K (memory_k)", cfg.memory_k, 1)
    check_int("rank (expert_rank)", cfg.expert_rank, 0)
    check_int("lookup_seed", cfg.lookup_seed, 0)
    check_float("router_jitter", cfg.router_jitter, 0.0, 1.0, hi_open=True)
    check_float("router_balance_loss", cfg.router_balance_loss, 0.0, 1e6)
    check_float("router_z_loss", cfg.router_z_loss, 0.0, 1e6)
    extra = check_int("memory_extra (e)", cfg.memory_extra, 0)
    if cfg.memory != NO_MEMORY and not METHODS[cfg.memory].wide_embedding:
        if extra or (cfg.memory_cross, cfg.memory_output) != ("wide", "wide"):
            raise ValueError(
                f"memory_extra, memory_cross and memory_output do not apply to memory "
                f"{cfg.memory!r} (its blocks are projected from a d-wide embedding)"
            )
    if extra:
        if cfg.memory == NO_MEMORY:
            *rest, last = (name for name, m in METHODS.items() if "extra" in m.flags)
            raise ValueError(
                f"memory_extra (e) needs a memory method ({', '.join(rest)} or {last})"
            )
        if k < 2 or extra % (k - 1):
            raise ValueError(
                f"memory_extra (e={extra}) cannot be divided into K-1={k - 1} sub-blocks: "
                "e must be a positive multiple of K-1 (K >= 2)"
            )
    if cfg.buckets:
        n = check_int("buckets", cfg.buckets, 1)
    else:
        n = cfg.num_buckets
    check_int("topk", cfg.topk, 1)
    check_int("heads (lookup_heads)", cfg.lookup_heads, 1, 64)
    check_int("ngram", cfg.ngram, 1, 64)
    # the lookup's own rules (table size, top-k); without one, the base rule (k = 1)
    (lookup_of(cfg) or Lookup()).validate(cfg, n)


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
#: Table 3's AltUp rows (K=2): (embedding, non-embedding) parameters.
TABLE3_ALTUP = {"small": (6.58e7, 3.99e7), "base": (9.87e7, 2.12e8), "large": (1.32e8, 7.68e8)}


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
