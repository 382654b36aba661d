"""Parameter counts without allocating: ``jax.eval_shape`` of the model's ``init``.

"Embedding" parameters are the input table (shared by encoder and decoder) and the untied
output projection, as in the paper's Table 3; everything else is "non-embedding".
"""

from __future__ import annotations

import math

import jax

from lshsim.t5.configs import T5Config, get_config

#: Top-level parameter paths counted as embedding parameters.
EMBEDDING_PATHS = (("token_embedder",), ("decoder", "logits_dense"))


def abstract_params(config: T5Config | str) -> dict:
    """The parameter tree as ``jax.ShapeDtypeStruct`` leaves (nothing is allocated)."""
    from lshsim.t5.model import init_params

    cfg = get_config(config)
    return jax.eval_shape(lambda: init_params(cfg, jax.random.key(0)))


def _is_embedding(path: tuple[str, ...]) -> bool:
    return any(path[: len(p)] == p for p in EMBEDDING_PATHS)


def count_params(config: T5Config | str) -> dict[str, int]:
    """``{"embedding", "non_embedding", "total"}`` parameter counts of ``config``."""
    tree = abstract_params(config)
    counts = {"embedding": 0, "non_embedding": 0}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        keys = tuple(getattr(k, "key", str(k)) for k in path)
        kind = "embedding" if _is_embedding(keys) else "non_embedding"
        counts[kind] += math.prod(leaf.shape)
    counts["total"] = counts["embedding"] + counts["non_embedding"]
    return counts
