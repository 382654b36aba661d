"""Parameter counts without allocating: ``jax.eval_shape`` of the model's ``init``.

"Embedding" parameters are the input table (shared by encoder and decoder) and the untied
output projection, as in the paper's Table 3 (with wide memory, both tables are ``K d`` wide).
Partial experts' tables and routers (``.../expert/...``) are counted apart as "expert"
parameters; everything else (AltUp's scalars and divide-and-project matrices included) is
"non-embedding".
"""

from __future__ import annotations

import math

import jax

from lshsim.t5.configs import T5Config, get_config

#: Top-level parameter paths counted as embedding parameters.
EMBEDDING_PATHS = (("token_embedder",), ("decoder", "logits_dense"))


def abstract_params(config: T5Config | str) -> dict:
    """The parameter tree as ``jax.ShapeDtypeStruct`` leaves (nothing is allocated).

    Args:
        config: a config or the name of one.

    Returns:
        The tree of :func:`lshsim.t5.model.init_params` (:func:`lshsim.t5.model.param_shapes`).
    """
    from lshsim.t5.model import param_shapes

    return param_shapes(get_config(config))


def _is_embedding(path: tuple[str, ...]) -> bool:
    return any(path[: len(p)] == p for p in EMBEDDING_PATHS)


def _kind(path: tuple[str, ...]) -> str:
    if _is_embedding(path):
        return "embedding"
    return "expert" if "expert" in path else "non_embedding"


def count_params(config: T5Config | str) -> dict[str, int]:
    """``{"embedding", "non_embedding", "expert", "total"}`` parameter counts of ``config``.

    A config whose parameters this machine could
    not hold is refused first, from the closed form :func:`lshsim.t5.budget.param_count`,
    naming the flag that makes it so (``--K``): tracing it would only hang.

    Raises:
        ValueError: the config cannot fit this machine's memory (one line).
    """
    from lshsim.t5.budget import check_params_fit

    check_params_fit(config)
    return count_tree(abstract_params(config))


def count_tree(tree) -> dict[str, int]:
    """:func:`count_params` of a parameter tree (arrays or ``jax.ShapeDtypeStruct``)."""
    counts = {"embedding": 0, "non_embedding": 0, "expert": 0}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        keys = tuple(getattr(k, "key", str(k)) for k in path)
        counts[_kind(keys)] += math.prod(leaf.shape)
    counts["total"] = sum(counts.values())
    return counts
