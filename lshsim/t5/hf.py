"""Hugging Face interop: ``T5ForConditionalGeneration`` (T5 v1.1) <-> the Flax model's tree.

Hugging Face stores ``torch.nn.Linear`` weights as ``[out, in]``; the Flax kernels of
:mod:`lshsim.t5.model` are ``[in, out]``, so every dense weight is transposed. The input
embedding is ``shared.weight`` (with ``encoder.embed_tokens.weight`` and
``decoder.embed_tokens.weight`` as duplicates of it), each stack's relative position table
sits in the first block's self-attention, and the untied output projection is
``lm_head.weight [vocab, d]``. Only T5 v1.1 checkpoints map onto the model: gated-GELU
feed-forward and an untied output head without the ``d_model**-0.5`` rescaling of T5 1.0.

``transformers`` (>= 5) always ties ``lm_head`` to ``shared`` in a freshly built model and
records "v1.1" as ``scale_decoder_outputs=False``; ``save_pretrained`` then omits the tied
``lm_head.weight``. :func:`load_hf_checkpoint` reads such checkpoints (the head is
``shared.weight``); a checkpoint whose head differs is loaded untied by ``from_pretrained``.

``transformers``, ``torch`` and ``safetensors`` are imported only when needed
(``pip install "lshsim[hf]"``).

References:
    Hugging Face ``transformers/models/t5/modeling_t5.py`` and
    ``convert_t5x_checkpoint_to_flax.py``; T5X ``t5x/examples/t5/network.py``.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from lshsim._io import write_atomic
from lshsim.t5 import scan
from lshsim.t5.configs import T5Config

_HINT = 'pip install "lshsim[hf]"'

#: State-dict keys that duplicate ``shared.weight``.
TIED_EMBEDDING_KEYS = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")

#: Keys that ``transformers`` itself ignores when loading (old checkpoints carry them).
IGNORED_KEYS = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)

_ATTENTION = (("q", "query"), ("k", "key"), ("v", "value"), ("o", "out"))
_MLP = (("wi_0", "wi_0"), ("wi_1", "wi_1"), ("wo", "wo"))


def _import(name: str) -> Any:
    """Import an optional dependency, with an installation hint if it is missing."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        top = name.split(".")[0]
        raise ImportError(f"{top} is needed for Hugging Face interop: {_HINT}") from err


# --------------------------------------------------------------------------- configs


def hf_config_dict(cfg: T5Config) -> dict[str, Any]:
    """The fields of a Hugging Face ``config.json`` for ``cfg`` (a T5 v1.1 model).

    Args:
        cfg: the model's config.

    Returns:
        A JSON-serialisable dict (no ``transformers`` needed).
    """
    if cfg.memory != "none" or cfg.lookup != "none":
        raise ValueError(
            "hf: transformers' T5 has no external memory; export a model with memory='none' "
            f"and lookup='none' (this one has memory={cfg.memory!r}, lookup={cfg.lookup!r})"
        )
    return {
        "architectures": ["T5ForConditionalGeneration"],
        "model_type": "t5",
        "is_encoder_decoder": True,
        "vocab_size": cfg.vocab_size,
        "d_model": cfg.d_model,
        "d_kv": cfg.d_kv,
        "d_ff": cfg.d_ff,
        "num_layers": cfg.num_encoder_layers,
        "num_decoder_layers": cfg.num_decoder_layers,
        "num_heads": cfg.num_heads,
        "relative_attention_num_buckets": cfg.relative_attention_num_buckets,
        "relative_attention_max_distance": cfg.relative_attention_max_distance,
        "layer_norm_epsilon": cfg.layer_norm_eps,
        "dropout_rate": cfg.dropout_rate,
        "feed_forward_proj": "gated-gelu",
        "tie_word_embeddings": False,
        "decoder_start_token_id": 0,
        "pad_token_id": 0,
        "eos_token_id": 1,
    }


def config_to_hf(cfg: T5Config) -> Any:
    """A ``transformers.T5Config`` for ``cfg`` (needs ``transformers``)."""
    transformers = _import("transformers")
    return transformers.T5Config.from_dict(hf_config_dict(cfg))


def config_from_hf(
    hf_config: Mapping[str, Any] | Any, *, name: str = "hf", **overrides: Any
) -> T5Config:
    """Our config from a Hugging Face T5 config (a ``transformers.T5Config`` or its dict).

    Args:
        hf_config: a ``transformers.T5Config`` or a ``config.json`` dict.
        name: the new config's name.
        **overrides: further :class:`T5Config` fields (``dtype``, ``z_loss``, ...).

    Returns:
        The matching :class:`T5Config`.

    Raises:
        ValueError: for a non-T5 or non-v1.1 config (ReLU feed-forward, or a tied and
            rescaled output head), naming the field.
    """
    d = dict(hf_config) if isinstance(hf_config, Mapping) else dict(hf_config.to_dict())
    model_type = d.get("model_type", "t5")
    if model_type != "t5":
        raise ValueError(f"config: model_type is {model_type!r}, expected 't5'")
    ffn = d.get("feed_forward_proj", "relu")
    if ffn != "gated-gelu":
        raise ValueError(
            f"config: feed_forward_proj is {ffn!r}; only T5 v1.1 ('gated-gelu') is supported"
        )
    if "scale_decoder_outputs" in d:  # transformers >= 5: tie_word_embeddings is always True
        if d["scale_decoder_outputs"]:
            raise ValueError(
                "config: scale_decoder_outputs is True (tie_word_embeddings, T5 1.0 head); "
                "T5 v1.1 has an untied, unscaled head"
            )
    elif d.get("tie_word_embeddings", True):
        raise ValueError("config: tie_word_embeddings is True; T5 v1.1 has an untied output head")
    for key in ("vocab_size", "d_model", "d_kv", "d_ff", "num_layers", "num_heads"):
        if key not in d:
            raise ValueError(f"config: missing key {key!r}")
    num_decoder_layers = d.get("num_decoder_layers")
    fields = {
        "name": name,
        "vocab_size": int(d["vocab_size"]),
        "d_model": int(d["d_model"]),
        "num_heads": int(d["num_heads"]),
        "d_kv": int(d["d_kv"]),
        "d_ff": int(d["d_ff"]),
        "num_encoder_layers": int(d["num_layers"]),
        "num_decoder_layers": int(
            d["num_layers"] if num_decoder_layers is None else num_decoder_layers
        ),
        "relative_attention_num_buckets": int(d.get("relative_attention_num_buckets", 32)),
        "relative_attention_max_distance": int(d.get("relative_attention_max_distance", 128)),
        "layer_norm_eps": float(d.get("layer_norm_epsilon", 1e-6)),
        "dropout_rate": float(d.get("dropout_rate", 0.1)),  # transformers' default
    }
    return T5Config(**fields).replace(**overrides)


# --------------------------------------------------------------------------- key map


def _key_map(cfg: T5Config) -> Iterator[tuple[str, tuple[str, ...], bool]]:
    """``(hf_key, flax_path, transposed)`` for every parameter of ``cfg``'s model."""
    yield "shared.weight", ("token_embedder", "embedding"), False
    for stack in ("encoder", "decoder"):
        yield (
            f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
            (stack, "relpos_bias", "rel_embedding"),
            False,
        )
    for i in range(cfg.num_encoder_layers):
        hf, fx = f"encoder.block.{i}.layer.", ("encoder", f"layers_{i}")
        yield f"{hf}0.layer_norm.weight", (*fx, "pre_attention_layer_norm", "scale"), False
        for h, f in _ATTENTION:
            yield f"{hf}0.SelfAttention.{h}.weight", (*fx, "attention", f, "kernel"), True
        yield f"{hf}1.layer_norm.weight", (*fx, "pre_mlp_layer_norm", "scale"), False
        for h, f in _MLP:
            yield f"{hf}1.DenseReluDense.{h}.weight", (*fx, "mlp", f, "kernel"), True
    yield "encoder.final_layer_norm.weight", ("encoder", "encoder_norm", "scale"), False
    for i in range(cfg.num_decoder_layers):
        hf, fx = f"decoder.block.{i}.layer.", ("decoder", f"layers_{i}")
        yield f"{hf}0.layer_norm.weight", (*fx, "pre_self_attention_layer_norm", "scale"), False
        for h, f in _ATTENTION:
            yield f"{hf}0.SelfAttention.{h}.weight", (*fx, "self_attention", f, "kernel"), True
        yield f"{hf}1.layer_norm.weight", (*fx, "pre_cross_attention_layer_norm", "scale"), False
        for h, f in _ATTENTION:
            path = (*fx, "encoder_decoder_attention", f, "kernel")
            yield f"{hf}1.EncDecAttention.{h}.weight", path, True
        yield f"{hf}2.layer_norm.weight", (*fx, "pre_mlp_layer_norm", "scale"), False
        for h, f in _MLP:
            yield f"{hf}2.DenseReluDense.{h}.weight", (*fx, "mlp", f, "kernel"), True
    yield "decoder.final_layer_norm.weight", ("decoder", "decoder_norm", "scale"), False
    yield "lm_head.weight", ("decoder", "logits_dense", "kernel"), True


def _flatten(tree: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    out = {}
    for k, v in tree.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, (*prefix, k)))
        else:
            out[(*prefix, k)] = v
    return out


@functools.lru_cache(maxsize=8)
def _expected_shapes(cfg: T5Config) -> dict[tuple[str, ...], tuple[int, ...]]:
    """Flax path -> shape, from ``jax.eval_shape`` of the model's init (checked vs the map)."""
    from lshsim.t5.params import abstract_params

    shapes = {p: tuple(leaf.shape) for p, leaf in _flatten(abstract_params(cfg)).items()}
    mapped = {path for _, path, _ in _key_map(cfg)}
    if mapped != set(shapes):
        diff = sorted("/".join(p) for p in mapped.symmetric_difference(shapes))
        raise RuntimeError(f"hf key map out of date with lshsim.t5.model: {', '.join(diff)}")
    return shapes


def _unflatten(flat: Mapping[tuple[str, ...], Any]) -> dict:
    tree: dict = {}
    for path, leaf in flat.items():
        node = tree
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = leaf
    return tree


def _to_numpy(x: Any) -> np.ndarray:
    """Float32 NumPy array from a torch tensor (without importing torch) or array-like."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy()
    return np.asarray(x, dtype=np.float32)


def _more(items: list[str]) -> str:
    return f" (and {len(items) - 1} more)" if len(items) > 1 else ""


# --------------------------------------------------------------------------- params


def params_from_hf(state_dict: Mapping[str, Any], cfg: T5Config) -> dict:
    """The Flax parameter tree of :mod:`lshsim.t5.model` from a HF state dict.

    Args:
        state_dict: ``T5ForConditionalGeneration`` state dict; values are torch tensors or
            array-likes (any float dtype).
        cfg: the model's config (from :func:`config_from_hf`).

    Returns:
        Nested dict of float32 NumPy arrays with exactly the paths and shapes of
        ``lshsim.t5.params.abstract_params(cfg)``.

    Raises:
        ValueError: for a missing or unexpected key, a wrong shape, or an
            ``*.embed_tokens.weight`` that differs from ``shared.weight``.
    """
    if cfg.scanned:  # HF's blocks are the unrolled layers: stacked after
        unrolled = params_from_hf(state_dict, cfg.replace(scan_layers=False))
        return scan.stack_layers(unrolled, scan.ragged_paths(cfg))
    shapes = _expected_shapes(cfg)
    key_map = list(_key_map(cfg))
    missing = [k for k, _, _ in key_map if k not in state_dict]
    if missing:
        raise ValueError(f"checkpoint: missing key {missing[0]!r}{_more(missing)}")
    known = {k for k, _, _ in key_map} | set(TIED_EMBEDDING_KEYS) | set(IGNORED_KEYS)
    unexpected = sorted(k for k in state_dict if k not in known)
    if unexpected:
        raise ValueError(f"checkpoint: unexpected key {unexpected[0]!r}{_more(unexpected)}")
    flat = {}
    for key, path, transposed in key_map:
        value = _to_numpy(state_dict[key])
        shape = shapes[path][::-1] if transposed else shapes[path]
        if value.shape != shape:
            raise ValueError(f"checkpoint: shape of {key} is {value.shape}, config expects {shape}")
        flat[path] = np.ascontiguousarray(value.T) if transposed else value
    shared = flat[("token_embedder", "embedding")]
    for key in TIED_EMBEDDING_KEYS:
        if key in state_dict:
            dup = _to_numpy(state_dict[key])
            if dup.shape != shared.shape:
                raise ValueError(
                    f"checkpoint: shape of {key} is {dup.shape}, config expects {shared.shape}"
                )
            if not np.array_equal(dup, shared):
                raise ValueError(f"checkpoint: {key} differs from shared.weight")
    return _unflatten(flat)


def params_to_hf(params: Mapping[str, Any], cfg: T5Config) -> dict[str, np.ndarray]:
    """The inverse of :func:`params_from_hf`: a full HF state dict of float32 NumPy arrays.

    Includes the ``encoder/decoder.embed_tokens.weight`` duplicates, so that
    ``model.load_state_dict({k: torch.from_numpy(v) ...}, strict=True)`` works. Every array
    owns its memory (safetensors refuses shared storage).

    Args:
        params: the Flax tree (as from ``init_params``; a ``{"params": ...}`` wrapper is
            accepted too).
        cfg: the model's config.

    Returns:
        ``{hf_key: array}``.

    Raises:
        ValueError: for a missing or unexpected parameter path or a wrong shape.
    """
    if set(params) == {"params"}:
        params = params["params"]
    if cfg.scanned:
        params, cfg = scan.unstack_layers(params), cfg.replace(scan_layers=False)
    shapes = _expected_shapes(cfg)
    flat = _flatten(params)
    missing = ["/".join(p) for p in shapes if p not in flat]
    if missing:
        raise ValueError(f"params: missing {missing[0]!r}{_more(missing)}")
    unexpected = sorted("/".join(p) for p in flat if p not in shapes)
    if unexpected:
        raise ValueError(f"params: unexpected {unexpected[0]!r}{_more(unexpected)}")
    out = {}
    for key, path, transposed in _key_map(cfg):
        value = np.asarray(flat[path]).astype(np.float32)
        if value.shape != shapes[path]:
            raise ValueError(
                f"params: shape of {'/'.join(path)} is {value.shape}, config expects {shapes[path]}"
            )
        out[key] = np.ascontiguousarray(value.T if transposed else value).copy()
    for key in TIED_EMBEDDING_KEYS:
        out[key] = out["shared.weight"].copy()
    return out


# --------------------------------------------------------------------------- files


def _load_weights_file(path: Path) -> dict[str, Any]:
    if path.suffix == ".safetensors":
        return dict(_import("safetensors.numpy").load_file(str(path)))
    if path.suffix == ".bin":
        torch = _import("torch")
        return dict(torch.load(str(path), map_location="cpu", weights_only=True))
    raise ValueError(f"path: {path} is not a .safetensors or .bin file")


def _load_sharded(index: Path) -> dict[str, Any]:
    weight_map = json.loads(index.read_text())["weight_map"]
    state: dict[str, Any] = {}
    for shard in sorted(set(weight_map.values())):
        state.update(_load_weights_file(index.parent / shard))
    return state


def _load_dir_weights(directory: Path) -> dict[str, Any]:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (directory / name).is_file():
            return _load_weights_file(directory / name)
        if (directory / f"{name}.index.json").is_file():
            return _load_sharded(directory / f"{name}.index.json")
    raise ValueError(
        f"path: no model.safetensors, pytorch_model.bin or their .index.json in {directory}"
    )


def load_hf_checkpoint(
    path: str | os.PathLike, cfg: T5Config | None = None, *, name: str = "hf"
) -> tuple[T5Config, dict]:
    """Read a Hugging Face T5 v1.1 checkpoint.

    Args:
        path: a directory with ``config.json`` and ``model.safetensors`` (or sharded
            ``model-0000x-of-0000y.safetensors`` with ``model.safetensors.index.json``, or
            ``pytorch_model.bin``), or a single ``.safetensors`` / ``.bin`` file.
        cfg: the config; required for a single file, and used instead of ``config.json``
            when given.
        name: the config's name when it is read from ``config.json``.

    Returns:
        ``(cfg, params)`` with ``params`` as from :func:`params_from_hf`.

    Raises:
        ValueError: for a missing path or file, a non-v1.1 config, or a bad state dict.
    """
    path = Path(path)
    hf: dict[str, Any] = {}
    if path.is_dir():
        config_file = path / "config.json"
        if config_file.is_file():
            hf = json.loads(config_file.read_text())
        elif cfg is None:
            raise ValueError(f"path: no config.json in {path} (pass cfg)")
        if cfg is None:
            cfg = config_from_hf(hf, name=name)
        state = _load_dir_weights(path)
    elif path.is_file():
        if cfg is None:
            raise ValueError(f"cfg: required to load the single weights file {path}")
        state = _load_weights_file(path)
    else:
        raise ValueError(f"path: {path} does not exist")
    tied_v11 = hf.get("tie_word_embeddings") and hf.get("scale_decoder_outputs") is False
    if tied_v11 and "lm_head.weight" not in state and "shared.weight" in state:
        state["lm_head.weight"] = state["shared.weight"]  # transformers >= 5 omits the tied head
    return cfg, params_from_hf(state, cfg)


def save_hf_checkpoint(
    path_dir: str | os.PathLike, params: Mapping[str, Any], cfg: T5Config
) -> Path:
    """Write ``config.json`` and ``model.safetensors`` that ``from_pretrained`` can load.

    Each file is written under a temporary name and renamed into place; the weights go first,
    so a directory with a ``config.json`` holds complete weights.

    Args:
        path_dir: output directory (created if needed).
        params: the Flax tree.
        cfg: the model's config.

    Returns:
        The directory.
    """
    st = _import("safetensors.numpy")
    out = Path(path_dir)
    tensors = params_to_hf(params, cfg)
    # serialised in memory (one more copy of the weights) so the shared atomic writer applies
    write_atomic(out / "model.safetensors", st.save(tensors, metadata={"format": "pt"}))
    write_atomic(
        out / "config.json", json.dumps(hf_config_dict(cfg), indent=2, sort_keys=True) + "\n"
    )
    return out


def untie_lm_head(model: Any) -> Any:
    """Give a freshly built transformers (>= 5) T5's ``lm_head`` its own weight, as v1.1 has.

    transformers 5 ties ``lm_head`` to ``shared`` in every new ``T5ForConditionalGeneration``,
    whatever ``tie_word_embeddings`` says; a strict ``load_state_dict`` of :func:`params_to_hf`
    would then write both keys into one tensor. Returns ``model``.
    """
    torch = _import("torch")
    if model.lm_head.weight is model.shared.weight:
        model.lm_head.weight = torch.nn.Parameter(model.shared.weight.detach().clone())
    tied = getattr(model, "all_tied_weights_keys", None)
    if isinstance(tied, dict):
        tied.pop("lm_head.weight", None)
    tied = getattr(model, "_tied_weights_keys", None)
    if isinstance(tied, dict) and "lm_head.weight" in tied:  # a class attribute: copy, not pop
        model._tied_weights_keys = {k: v for k, v in tied.items() if k != "lm_head.weight"}
    return model
