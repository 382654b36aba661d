"""Router taps for Hugging Face ``transformers`` mixture-of-experts models.

A model is loaded from a local folder (``from_pretrained(DIR, local_files_only=True)``:
nothing is ever downloaded) or passed in, put in eval mode (so no router jitter), and a forward
hook on every gate module records the gate's *input*; the logits are recomputed from the
gate's weights in float32 (``x W^T + b``), and the experts picked are the top-k of those
logits. So a token that Switch Transformers drops for capacity (its ``expert_index`` row is
all zero) counts by the argmax of its logits, never as expert 0, and a model loaded in
bfloat16 is routed in float32 on its bfloat16 activations.

Supported (:data:`ARCHITECTURES`, by ``config.model_type``): Mixtral, OLMoE and Qwen2-MoE (a
softmax top-k gate ``model.layers[i].mlp.gate``; Qwen2-MoE's dense layers have no gate and
are skipped, its shared expert is not routed) and SwitchTransformers (top-1 gates in the
encoder and the decoder, ``...mlp.router.classifier``; the decoder reads the ids shifted
right). A softmax top-k gate at initialisation is Voronoi LSH, so every supported router is
probed against the ``voronoi`` law (top-k: its exact top-k overlap). Architectures whose
router has another law (sigmoid scores, grouped or biased top-k) and folders that need remote
code are refused by name.

References:
    Fedus et al. 2022 (Switch Transformers); Jiang et al. 2024 (Mixtral); Muennighoff et al.
    2024 (OLMoE); Qwen team 2024 (Qwen1.5-MoE); ``transformers`` (``modeling_mixtral.py``,
    ``modeling_olmoe.py``, ``modeling_qwen2_moe.py``, ``modeling_switch_transformers.py``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np

from lshsim._io import json_field, read_json
from lshsim.hashing import Voronoi
from lshsim.probe.tap import Capture, RouterTap, top_experts

__all__ = ["ARCHITECTURES", "REFUSED", "hf_tap", "load_hf_model", "read_config"]


@dataclasses.dataclass(frozen=True)
class Architecture:
    """How to find and read one architecture's routers.

    Attributes:
        routers: class names of its gate modules (``transformers`` 5; :data:`MIN_TRANSFORMERS`).
        experts: the config attribute holding the number of experts.
        top_k: the config attribute holding experts per token (``None``: top-1).
        seq2seq: an encoder-decoder (the decoder reads the ids shifted right).
    """

    routers: tuple[str, ...]
    experts: str
    top_k: str | None
    seq2seq: bool = False


#: the first ``transformers`` major version whose MoE gates are the router classes read here
#: (in 4.x Mixtral's, OLMoE's and Qwen2-MoE's gates are plain ``nn.Linear`` modules)
MIN_TRANSFORMERS = 5

#: ``model_type -> Architecture``: the routers this module reads
ARCHITECTURES: dict[str, Architecture] = {
    "mixtral": Architecture(("MixtralTopKRouter",), "num_local_experts", "num_experts_per_tok"),
    "olmoe": Architecture(("OlmoeTopKRouter",), "num_experts", "num_experts_per_tok"),
    "qwen2_moe": Architecture(("Qwen2MoeTopKRouter",), "num_experts", "num_experts_per_tok"),
    "switch_transformers": Architecture(
        ("SwitchTransformersTop1Router",), "num_experts", None, seq2seq=True
    ),
}

#: ``model_type -> why``: MoE routers whose law is not a softmax top-k of a linear map
REFUSED = {
    "deepseek_v2": "grouped top-k routing (experts chosen within the best groups)",
    "deepseek_v3": "sigmoid scores with a bias and grouped top-k routing",
    "glm4_moe": "sigmoid scores with a bias and grouped top-k routing",
    "dots1": "sigmoid scores with grouped top-k routing",
    "llama4": "sigmoid scores of the top-1 expert",
    "jamba": "routing inside a hybrid Mamba stack",
}

_LAYER = re.compile(r"(?:^|\.)(?:layers|h|block|blocks)\.(\d+)\.")
_STACK = re.compile(r"(?:^|\.)(encoder|decoder)\.")


def _refuse_config(config: dict[str, Any], where: str) -> Architecture:
    """The architecture of a config, or a one-line refusal naming it."""
    model_type = config.get("model_type")
    if config.get("auto_map"):
        raise ValueError(f"hf: {where} needs remote code (auto_map); lshsim never runs it")
    if model_type in REFUSED:
        raise ValueError(
            f"hf: {where}: {model_type} is not supported: {REFUSED[model_type]} has no "
            f"random-router law here; supported: {', '.join(ARCHITECTURES)}"
        )
    if model_type is None:
        raise ValueError(f"hf: {where} names no model_type")
    if model_type not in ARCHITECTURES:
        raise ValueError(
            f"hf: {where} holds a {model_type!r} model; supported: {', '.join(ARCHITECTURES)}"
        )
    return ARCHITECTURES[model_type]


def read_config(folder: str | Path) -> tuple[dict[str, Any], Architecture]:
    """A saved model's ``config.json`` and the architecture of its routers (nothing loaded).

    Args:
        folder: a folder written by ``save_pretrained``.

    Returns:
        ``(config, architecture)``.

    Raises:
        ValueError: one line naming the folder or its ``config.json``: no folder, a file that
            is missing, unreadable or not a JSON object, a ``model_type`` that is not a
            string, an unsupported architecture, or remote code.
    """
    path = Path(folder)
    if not path.is_dir():
        raise ValueError(f"hf: {folder} is not a folder")
    where = f"hf: {path / 'config.json'}"
    config = read_json(path / "config.json", where=where)
    json_field(config, "model_type", "string", where, optional=True)
    return config, _refuse_config(config, str(path / "config.json"))


def load_hf_model(folder: str | Path, *, bf16: bool = False):
    """``(model, tokenizer or None)`` from a local folder, in eval mode; nothing downloaded.

    Raises:
        ValueError: no folder or ``config.json``, an unsupported architecture, remote code, or
            weights that do not load (one line naming the folder).
    """
    path = Path(folder)
    arch = read_config(path)[1]
    _check_transformers()
    import torch
    import transformers

    auto = transformers.AutoModelForSeq2SeqLM if arch.seq2seq else transformers.AutoModelForCausalLM
    try:
        model = auto.from_pretrained(
            path, local_files_only=True, dtype=torch.bfloat16 if bf16 else torch.float32
        )
    except Exception as err:  # the loaders raise many kinds (safetensors, hub validation, ...)
        raise ValueError(
            f"hf: cannot load the model in {folder}: {type(err).__name__}: {err}".splitlines()[0]
        ) from None
    return model.eval(), _tokenizer(path)


def _check_transformers() -> None:
    """Refuse a ``transformers`` older than :data:`MIN_TRANSFORMERS` (its gates differ)."""
    import transformers

    major = int(transformers.__version__.split(".")[0])
    if major < MIN_TRANSFORMERS:
        raise ValueError(
            f"hf: the probe reads transformers {MIN_TRANSFORMERS}.x gates; installed "
            f"{transformers.__version__} (pip install -r requirements/lock-run.txt)"
        )


def _tokenizer(path: Path):
    """The folder's tokenizer, or ``None`` when it holds none."""
    names = ("tokenizer.json", "tokenizer.model", "spiece.model", "vocab.json")
    if not any((path / n).is_file() for n in names):
        return None
    import transformers

    try:
        return transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as err:  # as the model's loader
        raise ValueError(
            f"hf: cannot load the tokenizer in {path}: {type(err).__name__}: {err}".splitlines()[0]
        ) from None


def _gate_weights(module):
    """``(W [E, d], b [E] or None)`` of a gate module (its own weight, or its classifier's)."""
    linear = getattr(module, "classifier", module)
    return linear.weight, getattr(linear, "bias", None)


def _layer_name(path: str) -> str:
    """``"layers/3"`` or ``"encoder/1"`` for a gate's module path."""
    found = _LAYER.search(path)
    index = found.group(1) if found else path
    stack = _STACK.search(path)
    return f"{stack.group(1) if stack else 'layers'}/{index}"


def hf_tap(model, *, tokenizer=None, name: str | None = None) -> RouterTap:
    """A tap on every gate of a supported Hugging Face MoE model.

    Args:
        model: a ``transformers`` model (``*ForCausalLM``, ``*Model`` or Switch's
            ``*ForConditionalGeneration``), or a local folder to load one from
            (:func:`load_hf_model`).
        tokenizer: its tokenizer (a folder's own is loaded with it).
        name: the tap's name (default: the architecture, or the folder).

    Returns:
        The tap; its ``capture`` runs the model in eval mode under ``torch.no_grad``.

    Raises:
        ValueError: an unsupported architecture, or a model with no gate found.
    """
    _check_transformers()
    notes: list[str] = []
    if isinstance(model, (str, Path)):
        name = name or str(model)
        model, tokenizer = load_hf_model(model)
    arch = _refuse_config(model.config.to_dict(), type(model).__name__)
    model.eval()
    gates = [(p, m) for p, m in model.named_modules() if type(m).__name__ in arch.routers]
    if not gates:
        raise ValueError(f"hf: no {'/'.join(arch.routers)} module found in {type(model).__name__}")
    cfg = model.config
    experts = int(getattr(cfg, arch.experts))
    top_k = int(getattr(cfg, arch.top_k)) if arch.top_k else 1
    vocab = int(cfg.vocab_size)
    if tokenizer is None:
        notes.append(
            f"no tokenizer with the model: the text is tokenised with lshsim's own and the ids "
            f"taken modulo the model's vocabulary ({vocab})"
        )
    capture = _Capture(model, [(_layer_name(p), m) for p, m in gates], top_k, arch.seq2seq)
    return RouterTap(
        name=name or cfg.model_type,
        experts=experts,
        top_k=top_k,
        law=Voronoi.name,
        capture=capture,
        vocab=vocab,
        tokenizer=tokenizer,
        notes=tuple(notes),
    )


class _Capture:
    """The tap's function: hooks the gates for one forward pass, recomputes their logits."""

    def __init__(self, model, gates: list[tuple[str, Any]], top_k: int, seq2seq: bool):
        self.model, self.gates, self.top_k, self.seq2seq = model, gates, top_k, seq2seq

    def _decoder_ids(self, ids: np.ndarray) -> np.ndarray:
        gen = getattr(self.model, "generation_config", None)
        start = next(
            (v for v in (getattr(gen, "decoder_start_token_id", None),
                         getattr(self.model.config, "decoder_start_token_id", None),
                         getattr(self.model.config, "pad_token_id", None)) if v is not None),
            0,
        )  # fmt: skip
        out = np.full_like(ids, start)
        out[:, 1:] = ids[:, :-1]
        return out

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> dict[str, Capture]:
        import torch

        seen: dict[str, Any] = {}
        hooks = [module.register_forward_hook(_recorder(seen, name)) for name, module in self.gates]
        kwargs = {
            "input_ids": torch.as_tensor(ids, dtype=torch.long),
            "attention_mask": torch.as_tensor(mask, dtype=torch.long),
        }
        dec = None
        if self.seq2seq:
            dec = self._decoder_ids(ids)
            kwargs["decoder_input_ids"] = torch.as_tensor(dec, dtype=torch.long)
        try:
            with torch.no_grad():
                self.model(**kwargs)
        finally:
            for h in hooks:
                h.remove()
        out = {}
        b, t = ids.shape
        for name, module in self.gates:
            if name not in seen:  # a gate the forward pass did not reach
                continue
            x = seen[name].reshape(b, t, -1)
            w, bias = _gate_weights(module)
            logits = x @ w.detach().float().numpy().T
            if bias is not None:
                logits = logits + bias.detach().float().numpy()
            choice = top_experts(logits, self.top_k)
            tokens = dec if name.startswith("decoder") else None
            out[name] = Capture(choice=choice, inputs=x, tokens=tokens)
        return out


def _recorder(seen: dict, name: str):
    """A forward hook storing the gate's input as float32 NumPy under ``name``."""

    def hook(module, args, output):
        seen[name] = args[0].detach().float().cpu().numpy()

    return hook
