"""``param_shapes``: the parameter tree of ``init_params`` without tracing it."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

from lshsim.t5.configs import get_config  # noqa: E402
from lshsim.t5.model import init_params, param_shapes  # noqa: E402
from lshsim.t5.params import abstract_params  # noqa: E402

from .conftest import MICRO  # noqa: E402

#: Scanned (the default) and unrolled; Engram's per-layer tables stay beside the scan
#: (ragged), AltUp stacks its blocks, and the paper's lookups add experts.
CASES = {
    "scanned-engram": {"lookup": "engram", "buckets": 16, "lookup_heads": 2, "ngram": 3},
    "scanned-altup-lsh": {"memory": "altup", "lookup": "lsh", "buckets": 8, "expert_rank": 2},
    "unrolled-sameup-ngram": {"memory": "sameup", "lookup": "ngram", "buckets": 16,
                              "scan_layers": False},
}  # fmt: skip


def _shapes(tree):
    return jax.tree.map(lambda a: (a.shape, str(a.dtype)), tree)


@pytest.mark.parametrize("case", CASES)
def test_param_shapes_are_the_initialised_trees(case):
    """Same paths, shapes and dtypes as :func:`init_params` traced, in either layout."""
    cfg = MICRO.replace(num_encoder_layers=3, num_decoder_layers=2, **CASES[case])
    want = jax.eval_shape(lambda: init_params(cfg, jax.random.key(0)))
    assert _shapes(param_shapes(cfg)) == _shapes(want)


def test_abstract_params_takes_a_config_name():
    """``lshsim.t5.params.abstract_params`` reads a name through the config registry."""
    assert _shapes(abstract_params("tiny")) == _shapes(param_shapes(get_config("tiny")))
