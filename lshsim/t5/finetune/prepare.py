"""A fine-tuning run settled before JAX starts: its options, output folder, data and memory.

:func:`prepare` makes every check of a fine-tuning run and reads and tokenizes its data, without
JAX and without writing anything; :func:`lshsim.t5.finetune.run.run_prepared` then does the
work. So ``lshsim finetune`` refuses, in one line and before it starts JAX or writes a file, a
bad option, a bad data file, an output folder that holds a run, a ``--steps`` that the resumed
run has reached, and a step this machine cannot hold (``train``'s estimate,
:func:`lshsim.t5.budget.check_train_fits`).

The output folder is complete or absent. It holds a fine-tuning run once it holds ``run.json``
and a first checkpoint (:func:`lshsim.t5.checkpoint.holds_run`). A folder with ``run.json`` but
no checkpoint is a start that was cut short (killed while the pretrained run was restored or
before the first checkpoint): a new run (without ``resume``) overwrites it, and ``resume``
starts the run it records from the beginning.

Resuming: the run's recorded options are its options. A given option that the run cannot
change must equal the recorded one, else one line names it: the task, ``run`` (the pretrained
run) and ``step`` (its checkpoint), ``batch_size``, ``learning_rate``, ``dropout``, ``seed``,
``input_length``, ``target_length``, ``cap``, ``eval_examples``, ``scan_layers``. Applied,
and recorded in ``run.json``: ``data`` (the folder may have moved; it must hold the same
files) and ``keep_checkpoints``. Applied to the session: ``eval_every``,
``checkpoint_every``, the mesh. ``steps`` must exceed the run's step.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np

from lshsim._validate import check_float, check_int
from lshsim.t5 import checkpoint as ckpt
from lshsim.t5.budget import check_train_fits
from lshsim.t5.configs import T5Config
from lshsim.t5.finetune.mixture import DEFAULT_CAP, mixing_rates
from lshsim.t5.finetune.tasks import BENCHMARK_TASKS, Example, get_task, load_split

__all__ = [
    "MAX_INPUT_LENGTH",
    "MAX_TARGET_LENGTH",
    "Encoded",
    "FinetuneOptions",
    "Prepared",
    "flag_of",
    "prepare",
    "task_names",
]

#: T5's longest fine-tuning lengths (inputs 512, targets 128): caps of the default lengths.
MAX_INPUT_LENGTH = 512
MAX_TARGET_LENGTH = 128
#: How a message names an option (the CLI's spelling), where it is not ``--field-name``.
_FLAGS = {
    "batch_size": "--batch",
    "learning_rate": "--lr",
    "pretrained": "--run",
    "pretrained_step": "--step",
}


@dataclasses.dataclass(frozen=True)
class FinetuneOptions:
    """What a fine-tuning run records (and a resumed one must agree with)."""

    task: str
    data: str
    pretrained: str
    pretrained_step: int
    batch_size: int = 256
    learning_rate: float = 1e-3
    dropout: float = 0.1
    seed: int = 0
    input_length: int = 0
    target_length: int = 0
    cap: int | None = DEFAULT_CAP
    eval_examples: int | None = None
    keep_checkpoints: int = 3
    scan_layers: bool = True

    @classmethod
    def from_dict(cls, recorded: dict[str, Any], where: str) -> FinetuneOptions:
        """The options a fine-tuning run's ``run.json`` records, checked.

        Raises:
            ValueError: ``<where>: ...`` naming the first missing or invalid option.
        """
        kinds = {
            "task": str,
            "data": str,
            "pretrained": str,
            "pretrained_step": int,
            "batch_size": int,
            "learning_rate": (int, float),
            "dropout": (int, float),
            "seed": int,
            "input_length": int,
            "target_length": int,
            "cap": (int, type(None)),
            "eval_examples": (int, type(None)),
            "keep_checkpoints": int,
            "scan_layers": bool,
        }
        kw = {}
        for f in dataclasses.fields(cls):
            if f.name not in recorded:
                if f.default is dataclasses.MISSING:
                    raise ValueError(f"{where}: option {f.name!r} not recorded")
                continue
            value = recorded[f.name]
            bad_bool = isinstance(value, bool) and kinds[f.name] is not bool
            if bad_bool or not isinstance(value, kinds[f.name]):
                raise ValueError(f"{where}: option {f.name!r} has the wrong type ({value!r:.40})")
            kw[f.name] = value
        return cls(**kw)


def task_names(task: str) -> tuple[str, ...]:
    """The tasks of ``task``: a benchmark mixture's (``glue``, ``super_glue``) or itself.

    Raises:
        ValueError: an unknown task.
    """
    if task in BENCHMARK_TASKS:
        return BENCHMARK_TASKS[task]
    return (get_task(task).name,)


def flag_of(field: str) -> str:
    """The option that sets ``field``: ``batch_size`` -> ``--batch``, ``seed`` -> ``--seed``."""
    return _FLAGS.get(field, "--" + field.replace("_", "-"))


@dataclasses.dataclass
class Encoded:
    """A split's examples and their token ids (EOS appended, truncated)."""

    examples: list[Example]
    inputs: np.ndarray  # [N, input_length]
    targets: np.ndarray  # [N, target_length]


@dataclasses.dataclass
class Prepared:
    """A fine-tuning run ready to start: everything :func:`prepare` settled.

    Attributes:
        out: the run folder.
        opts: the run's options (the lengths settled; ``pretrained_step`` -1 until a new
            start restores the pretrained checkpoint).
        config: the fine-tuning config (the pretrained one with the dropout and layout).
        recorded: the options ``out/run.json`` records (``None``: a new run).
        resume: continue from ``out``'s checkpoints (else start from the pretrained run).
        source_step: the pretrained checkpoint of a start (``None``: its latest good one).
        steps: the total steps.
        every: ``(log, evaluate, checkpoint)`` every this many steps.
        tok: the tokenizer.
        train: task -> its training examples, encoded.
        evals: evaluation split -> ``(task, examples)``.
        enc_eval: evaluation split -> its examples, encoded.
        rates: task -> mixing rate.
    """

    out: Path
    opts: FinetuneOptions
    config: T5Config
    recorded: dict | None
    resume: bool
    source_step: int | None
    steps: int
    every: tuple[int, int, int]
    tok: Any
    train: dict[str, Encoded]
    evals: dict[str, tuple[Any, list[Example]]]
    enc_eval: dict[str, Encoded]
    rates: dict[str, float]


def prepare(
    run: str | Path | None,
    task: str,
    data: str | Path | None,
    out: str | Path,
    *,
    steps: int,
    step: int | None = None,
    batch_size: int | None = None,
    learning_rate: float | None = None,
    dropout: float | None = None,
    seed: int | None = None,
    input_length: int | None = None,
    target_length: int | None = None,
    cap: int | None = None,
    eval_every: int | None = None,
    eval_examples: int | None = None,
    checkpoint_every: int | None = None,
    keep_checkpoints: int | None = None,
    log_every: int = 1,
    resume: bool = False,
    scan_layers: bool | None = None,
) -> Prepared:
    """Check a fine-tuning run and read its data, before JAX and before writing anything.

    Takes the arguments of :func:`lshsim.t5.finetune.run.finetune` but the devices and the
    callbacks (``None``: the default, or the resumed run's own).

    Returns:
        The run, ready for :func:`lshsim.t5.finetune.run.run_prepared`.

    Raises:
        ValueError: one line naming the option, file or folder: a bad option, an unknown
            task, ``cap`` for a single task, a missing or bad data file, an existing run
            without ``resume``, a resumed run's option given another value, ``steps`` at or
            below the resumed run's step, a step this machine's memory cannot hold.
    """
    steps = check_int("steps", steps, 1)
    log_every = check_int("log_every", log_every, 1)
    out = Path(out)
    names = task_names(task)
    if cap is not None and task not in BENCHMARK_TASKS:
        raise ValueError(
            f"--cap has no effect on the single task {task}: it caps each task of a mixture "
            f"({', '.join(BENCHMARK_TASKS)})"
        )
    given = _checked(
        task=task,
        pretrained=None if run is None else str(Path(run).absolute()),
        pretrained_step=step,
        batch_size=batch_size,
        learning_rate=learning_rate,
        dropout=dropout,
        seed=seed,
        input_length=input_length,
        target_length=target_length,
        cap=cap,
        eval_examples=eval_examples,
        scan_layers=scan_layers,
    )
    every = (log_every, _every("eval_every", eval_every, steps))
    every += (_every("checkpoint_every", checkpoint_every, steps),)
    if keep_checkpoints is not None:
        keep_checkpoints = check_int("keep_checkpoints", keep_checkpoints, 2)
    recorded, started = _output(out, resume, given)
    opts = _options(out, recorded, given, data, keep_checkpoints)
    if started:
        latest = max(ckpt.saved_steps(out))
        if steps <= latest:
            raise ValueError(
                f"--steps {steps}: the run in {out} is at step {latest} already; ask for more "
                "steps to continue it"
            )
    train_ex, evals = _load(names, opts.data)  # bad data fails here, before any model
    source = out if started else Path(opts.pretrained)
    config = ckpt.read_run(source)[0]  # not a run folder: one line
    if not started:
        config = config.replace(dropout_rate=opts.dropout, scan_layers=opts.scan_layers)
    from lshsim.t5.data.tokenizer import Tokenizer

    tok = Tokenizer.load(source / ckpt.TOKENIZER_FILE)
    opts, enc_train, enc_eval = _encode(tok, config, train_ex, evals, opts)
    source_step = step  # a start: the given pretrained checkpoint, or a cut-short start's
    if recorded is not None and recorded["pretrained_step"] >= 0:
        source_step = recorded["pretrained_step"]
    return Prepared(
        out=out,
        opts=opts,
        config=config,
        recorded=recorded,
        resume=started,
        source_step=source_step,
        steps=steps,
        every=every,
        tok=tok,
        train=enc_train,
        evals=evals,
        enc_eval=enc_eval,
        rates=mixing_rates({k: len(v) for k, v in train_ex.items()}, opts.cap),
    )


def _every(name: str, value: int | None, steps: int) -> int:
    """Every how many steps: ``value``, checked, or 4 times in ``steps``."""
    return max(1, steps // 4) if value is None else check_int(name, value, 1)


def _checked(**given) -> dict:
    """The given options, checked (``None``: not given); messages name the CLI's options."""

    def opt(name, check, *bounds, **kw):
        value = given[name]
        return None if value is None else check(flag_of(name), value, *bounds, **kw)

    return {
        "task": given["task"],
        "pretrained": given["pretrained"],
        "pretrained_step": opt("pretrained_step", check_int, 0),
        "batch_size": opt("batch_size", check_int, 1),
        "learning_rate": opt("learning_rate", check_float, 0.0, math.inf, lo_open=True),
        "dropout": opt("dropout", check_float, 0.0, 1.0, hi_open=True),
        "seed": opt("seed", check_int, 0, 2**32 - 1),
        "input_length": opt("input_length", check_int, 2),
        "target_length": opt("target_length", check_int, 2),
        "cap": opt("cap", check_int, 1),
        "eval_examples": opt("eval_examples", check_int, 1),
        "scan_layers": None if given["scan_layers"] is None else bool(given["scan_layers"]),
    }


def _output(out: Path, resume: bool, given: dict) -> tuple[dict | None, bool]:
    """``(the options out/run.json records or None, whether out holds a started run)``.

    Raises:
        ValueError: a started run without ``resume``; with it, no run to resume, a run that
            is not a fine-tuning run, or a given option that differs from the recorded one.
    """
    started = ckpt.holds_run(out)
    if not resume:
        if started:
            raise ValueError(
                f"out: {out} already holds a run; pass --resume to continue it or choose "
                "another --out"
            )
        return None, False
    if not (out / ckpt.RUN_FILE).is_file():
        raise ValueError(
            f"--out: {out} holds no fine-tuning run to resume (no {ckpt.RUN_FILE}); start one "
            "without --resume"
        )
    where = f"checkpoint: {out / ckpt.RUN_FILE}"
    recorded = ckpt.read_run(out)[1]
    if recorded.get("kind") != "finetune":
        raise ValueError(f"out: {out} is not a fine-tuning run")
    FinetuneOptions.from_dict(recorded, where)
    for k, v in given.items():
        if v is not None and recorded.get(k) != v:
            if k == "pretrained_step" and recorded.get(k, -1) < 0:
                continue  # a start cut short before it chose the pretrained checkpoint
            raise ValueError(
                f"{flag_of(k)}: the run in {out} used {recorded.get(k)!r}; resume with the same "
                "value or leave the option out"
            )
    return recorded, started


def _options(out: Path, recorded, given: dict, data, keep_checkpoints) -> FinetuneOptions:
    """The run's options: the recorded ones (``data``, ``keep_checkpoints`` applied) or given."""
    data_dir = None if data is None else str(Path(data).absolute())
    if recorded is None:
        if given["pretrained"] is None or data_dir is None:
            raise ValueError("run, data: a new fine-tuning run needs --run and --data")
        skip = ("task", "pretrained", "pretrained_step")
        kw = {k: v for k, v in given.items() if v is not None and k not in skip}
        opts = FinetuneOptions(
            task=given["task"],
            data=data_dir,
            pretrained=given["pretrained"],
            pretrained_step=-1,
            **kw,
        )
    else:
        opts = FinetuneOptions.from_dict(recorded, f"checkpoint: {out / ckpt.RUN_FILE}")
        if data_dir is not None:
            opts = dataclasses.replace(opts, data=data_dir)
    if keep_checkpoints is not None:
        opts = dataclasses.replace(opts, keep_checkpoints=keep_checkpoints)
    return opts


def _load(names, data: str):
    """``(train {task: examples}, eval {split: (task, examples)})``; errors before any model."""
    train, evals = {}, {}
    for name in names:
        task = get_task(name)
        train.update(load_split(task, data, "train"))
        for split, exs in load_split(task, data, "eval").items():
            evals[split] = (task, exs)
    return train, evals


def _ids(tok, texts: list[str]) -> list[list[int]]:
    return tok.encode_batch(texts) if texts else []


def _pack(seqs: list[list[int]], length: int, eos: int) -> np.ndarray:
    out = np.zeros((len(seqs), length), np.int32)
    for i, s in enumerate(seqs):
        s = [*s[: length - 1], eos]
        out[i, : len(s)] = s
    return out


def _encode(tok, config: T5Config, train_ex, evals, opts: FinetuneOptions):
    """``(options with the lengths, train {task: Encoded}, eval {split: Encoded})``.

    The default lengths are the longest tokenized input (EOS included, rounded up to a
    multiple of 8, at most :data:`MAX_INPUT_LENGTH`) and target (at most
    :data:`MAX_TARGET_LENGTH`). A step of these lengths that this machine's memory cannot
    hold is refused before anything is packed.
    """
    enc_in, enc_tg = {}, {}
    for key, exs in [*train_ex.items(), *((("eval", k), v[1]) for k, v in evals.items())]:
        enc_in[key] = _ids(tok, [e.inputs for e in exs])
        enc_tg[key] = _ids(tok, [e.targets for e in exs])
    in_len, tg_len = opts.input_length, opts.target_length
    if not in_len:
        longest = max(len(s) for v in enc_in.values() for s in v) + 1
        in_len = min(MAX_INPUT_LENGTH, -(-longest // 8) * 8)
    if not tg_len:
        longest = max(len(s) for v in enc_tg.values() for s in v) + 1
        tg_len = min(MAX_TARGET_LENGTH, longest)
    in_len = check_int("input_length", max(in_len, 2), 2)
    tg_len = check_int("target_length", max(tg_len, 2), 2)
    check_train_fits(config, opts.batch_size, in_len, tg_len)
    opts = dataclasses.replace(opts, input_length=in_len, target_length=tg_len)
    eos = tok.eos_id

    def enc(key, examples):
        return Encoded(examples, _pack(enc_in[key], in_len, eos), _pack(enc_tg[key], tg_len, eos))

    enc_train = {k: enc(k, v) for k, v in train_ex.items()}
    enc_eval = {k: enc(("eval", k), v[1]) for k, v in evals.items()}
    return opts, enc_train, enc_eval
