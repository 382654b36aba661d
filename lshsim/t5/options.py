"""The training options of a run: typed, validated, and recorded in ``run.json``.

:class:`TrainOptions` is what :func:`lshsim.t5.loop.train` reads; its :meth:`~TrainOptions.to_dict`
is the ``train`` entry of a run directory's ``run.json`` (see :mod:`lshsim.t5.checkpoint`), and
:meth:`~TrainOptions.from_dict` reads it back.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from lshsim._io import json_type
from lshsim._validate import check_float, check_int
from lshsim.t5.configs import T5Config

#: Number of held-out batches evaluated (fixed, so every evaluation sees the same tokens).
EVAL_BATCHES = 4


@dataclasses.dataclass(frozen=True)
class TrainOptions:
    """Options of a training run (the data, the schedule, the seed), validated.

    Build it with :meth:`from_config`, which takes the config's defaults for the fields the
    config sets and validates every value.

    Attributes:
        batch_size: examples per step (default: the config's).
        input_length: encoder tokens per example after span corruption (the config's).
        warmup_steps: constant-rate steps of the rsqrt schedule (the config's).
        corpus: absolute paths of text / JSON-lines files or directories; ``None``: the
            embedded corpus.
        target_length: decoder tokens; ``None`` until the training set fixes it.
        noise_density: fraction of tokens corrupted.
        mean_span: mean corrupted span length.
        seed: seeds parameters, data order, noise masks and dropout (``[0, 2^32)``).
        eval_fraction: fraction of the documents held out.
        eval_batches: held-out batches per evaluation.
        learning_rate: base of the rsqrt schedule (T5: 1.0).
        tokenizer: absolute path of a SentencePiece ``.model``, or ``None`` (train one).
        keep_checkpoints: the newest checkpoints kept (>= 2, so that a damaged or diverged
            latest checkpoint leaves a good one to fall back to).
        accumulate: micro-batches per optimiser update (divides ``batch_size``); the update is
            the whole batch's (see :func:`lshsim.t5.steps.make_grad_fn`).
    """

    batch_size: int
    input_length: int
    warmup_steps: int
    corpus: tuple[str, ...] | None = None
    target_length: int | None = None
    noise_density: float = 0.15
    mean_span: float = 3.0
    seed: int = 0
    eval_fraction: float = 0.05
    eval_batches: int = EVAL_BATCHES
    learning_rate: float = 1.0
    tokenizer: str | None = None
    keep_checkpoints: int = 3
    accumulate: int = 1

    @classmethod
    def from_config(cls, config: T5Config, **given: Any) -> TrainOptions:
        """Options with defaults from ``config`` and the class; ``None`` values mean default.

        Raises:
            ValueError: one line naming the first invalid option.
        """
        unknown = set(given) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise ValueError(f"options: unknown training option(s) {', '.join(sorted(unknown))}")
        kw = {
            "batch_size": config.batch_size,
            "input_length": config.input_length,
            "warmup_steps": config.warmup_steps,
        }
        kw.update({k: v for k, v in given.items() if v is not None})
        return cls(**_checked(kw))

    @classmethod
    def from_dict(cls, recorded: dict[str, Any]) -> TrainOptions:
        """The options recorded in a run's ``run.json`` (its ``train`` entry), checked.

        Keys that are not options are ignored (a newer lshsim may record more).

        Raises:
            ValueError: one line naming the first missing or invalid option.
        """
        if not isinstance(recorded, dict):
            raise ValueError(
                f"train: the recorded options are {json_type(recorded)}, not an object"
            )
        missing = [n for n in ("batch_size", "input_length", "warmup_steps") if n not in recorded]
        if missing:
            raise ValueError(f"train: option(s) {', '.join(missing)} not recorded")
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**_checked({k: v for k, v in recorded.items() if k in names}))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form recorded in ``run.json`` (``corpus`` a list)."""
        d = dataclasses.asdict(self)
        if d["corpus"] is not None:
            d["corpus"] = list(d["corpus"])
        return d

    def span_options(self) -> dict[str, Any]:
        """The span-corruption keywords of :func:`lshsim.t5.data.spans.build_dataset`."""
        return {
            "input_length": self.input_length,
            "target_length": self.target_length,
            "noise_density": self.noise_density,
            "mean_span": self.mean_span,
        }


def _checked(kw: dict[str, Any]) -> dict[str, Any]:
    """``kw`` (options by name; absent ones take the class's defaults) checked and normalised.

    Raises:
        ValueError: one line naming the first invalid option.
    """
    kw = dict(kw)
    kw["batch_size"] = check_int("batch", kw["batch_size"], 1)
    kw["input_length"] = check_int("input_length", kw["input_length"], 2)
    if kw.get("target_length") is not None:
        kw["target_length"] = check_int("target_length", kw["target_length"], 2)
    kw["seed"] = check_int("seed", kw.get("seed", 0), 0, 2**32 - 1)
    kw["eval_batches"] = check_int("eval_batches", kw.get("eval_batches", EVAL_BATCHES), 1)
    kw["warmup_steps"] = check_int("warmup_steps", kw["warmup_steps"], 1)
    kw["keep_checkpoints"] = check_int("keep_checkpoints", kw.get("keep_checkpoints", 3), 2)
    kw["accumulate"] = check_int("accumulate", kw.get("accumulate", 1), 1)
    if kw["batch_size"] % kw["accumulate"]:
        raise ValueError(
            f"accumulate must divide the batch ({kw['batch_size']}), got {kw['accumulate']}"
        )
    kw["learning_rate"] = check_float(
        "learning_rate", kw.get("learning_rate", 1.0), 0.0, math.inf, lo_open=True, hi_open=True
    )
    for name, lo, hi in (("noise_density", 0.0, 1.0), ("eval_fraction", 0.0, 1.0)):
        if name in kw:
            kw[name] = check_float(name, kw[name], lo, hi, lo_open=True, hi_open=True)
    if "mean_span" in kw:
        kw["mean_span"] = check_float("mean_span", kw["mean_span"], 1.0, math.inf, hi_open=True)
    corpus = kw.get("corpus")
    if corpus is not None:
        if not isinstance(corpus, list | tuple) or not all(_is_path(p) for p in corpus):
            raise ValueError(f"corpus must be a list of paths, got {corpus!r:.60}")
        kw["corpus"] = tuple(str(Path(p).absolute()) for p in corpus) or None
    if kw.get("tokenizer") is not None:
        if not _is_path(kw["tokenizer"]):
            raise ValueError(f"tokenizer must be a path, got {kw['tokenizer']!r:.60}")
        kw["tokenizer"] = str(Path(kw["tokenizer"]).absolute())
    return kw


def _is_path(value: Any) -> bool:
    """Whether ``value`` can name a file: a non-empty string without NUL characters."""
    return isinstance(value, str | Path) and bool(str(value)) and "\x00" not in str(value)
