"""AltUp on stacked blocks: the traced model does not grow with ``K``."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from lshsim.t5.model import T5, init_params  # noqa: E402

from .conftest import MICRO  # noqa: E402

M2 = MICRO.replace(num_encoder_layers=2, num_decoder_layers=2)


def _equations(jaxpr) -> int:
    """Equations of a jaxpr, counting those of the sub-jaxprs (pjit, custom_vjp, ...) too."""
    n = 0
    for eqn in jaxpr.eqns:
        n += 1
        for param in eqn.params.values():
            for sub in param if isinstance(param, (list, tuple)) else (param,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    n += _equations(inner)
    return n


@pytest.mark.parametrize("method", ["altup", "sameup"])
def test_the_traced_model_does_not_grow_with_k(method):
    """The forward pass traces as many equations at K = 16 as at K = 2 (was 2 K^2 per layer)."""
    tokens = jax.ShapeDtypeStruct((2, 8), jnp.int32)
    counts = []
    for k in (2, 16):
        cfg = M2.replace(memory=method, memory_k=k)
        params = jax.eval_shape(lambda c=cfg: init_params(c, jax.random.key(0)))
        jaxpr = jax.make_jaxpr(lambda p, t, c=cfg: T5(c).apply({"params": p}, t, t))(params, tokens)
        counts.append(_equations(jaxpr.jaxpr))
    assert counts[0] == counts[1]
