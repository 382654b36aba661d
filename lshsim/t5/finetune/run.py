"""Fine-tune a pretrained run on a task or a benchmark mixture: ``lshsim finetune``.

The paper's fine-tuning setup (appendix, "Details of the T5 experiments"): batch 256, Adafactor
with a constant learning rate of 0.001, dropout 0.1, 50,000 steps. Here:

* the parameters of the pretrained run's checkpoint (``--step``, default its latest good one)
  are the start; Adafactor's state starts afresh (T5's Adafactor hyperparameters as
  :func:`lshsim.t5.steps.make_optimizer`, the learning rate constant);
* the config is the pretrained one with ``dropout_rate`` set (0.1); the train step is
  :func:`lshsim.t5.steps.make_train_step` (loss per target token, dropout keys
  ``fold_in(seed, step)``);
* a step's batch is a pure function of ``(seed, step)``: a single task walks through seeded
  epoch permutations, a mixture draws each example's task by
  :func:`lshsim.t5.finetune.mixture.mixing_rates` and the example uniformly; so a resumed run
  repeats the uninterrupted one;
* inputs are truncated to ``input_length - 1`` tokens and EOS appended (T5's
  ``append_eos_after_trim``); targets likewise; the default lengths are the longest tokenized
  input and target of the data (inputs at most 512, targets at most 128, T5's fine-tuning
  lengths);
* every ``eval_every`` steps and at the end each evaluation split is decoded greedily
  (:mod:`lshsim.t5.finetune.decode`), mapped back and scored (:mod:`metrics`), and one record
  per split (``{"step", "split": "dev", "task", <metrics>, "score"}``) plus the benchmark
  averages when every task of one is there is appended to ``OUT/metrics.jsonl``.

``OUT`` is a run directory like ``train``'s: ``run.json`` (the fine-tuning config, and the
options under ``train`` with ``"kind": "finetune"`` and the pretrained run and step),
``spm.model`` (the pretrained run's tokenizer), ``metrics.jsonl``, ``checkpoints/<step>/``.
``resume=True`` continues it from its latest good checkpoint.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from lshsim._validate import check_float, check_int
from lshsim.t5 import checkpoint as ckpt
from lshsim.t5.finetune import metrics as M
from lshsim.t5.finetune.mixture import DEFAULT_CAP, mixing_rates, sample_tasks
from lshsim.t5.finetune.tasks import BENCHMARK_TASKS, Example, get_task, load_split
from lshsim.t5.scan import ragged_paths, to_layout

__all__ = ["FinetuneOptions", "finetune", "finetune_optimizer", "task_names"]

#: T5's longest fine-tuning lengths (inputs 512, targets 128): caps of the default lengths.
MAX_INPUT_LENGTH = 512
MAX_TARGET_LENGTH = 128


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


def task_names(task: str) -> tuple[str, ...]:
    """The tasks of ``task``: a benchmark mixture's (``glue``, ``super_glue``) or itself.

    Raises:
        ValueError: an unknown task.
    """
    if task in BENCHMARK_TASKS:
        return BENCHMARK_TASKS[task]
    return (get_task(task).name,)


def finetune_optimizer(config, learning_rate: float = 1e-3):
    """T5's Adafactor (:func:`lshsim.t5.steps.adafactor`) at a constant rate.

    Per layer for a scanned ``config``, as in pre-training.
    """
    from lshsim.t5.steps import adafactor

    return adafactor(config, learning_rate)


# ---------------------------------------------------------------------------- data


@dataclasses.dataclass
class _Encoded:
    """A split's examples and their token ids (EOS appended, truncated)."""

    examples: list[Example]
    inputs: np.ndarray  # [N, input_length]
    targets: np.ndarray  # [N, target_length]


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


def _lengths(tok, train, evals, input_length, target_length) -> tuple[int, int, dict, dict]:
    """Tokenize everything once; the default lengths from the longest sequences."""
    enc_in, enc_tg = {}, {}
    for key, exs in [*train.items(), *((("eval", k), v[1]) for k, v in evals.items())]:
        enc_in[key] = _ids(tok, [e.inputs for e in exs])
        enc_tg[key] = _ids(tok, [e.targets for e in exs])
    if not input_length:
        longest = max(len(s) for v in enc_in.values() for s in v) + 1
        input_length = min(MAX_INPUT_LENGTH, -(-longest // 8) * 8)
    if not target_length:
        longest = max(len(s) for v in enc_tg.values() for s in v) + 1
        target_length = min(MAX_TARGET_LENGTH, longest)
    return input_length, target_length, enc_in, enc_tg


def _batch(encoded: dict[str, _Encoded], rates, step: int, size: int, seed: int) -> dict:
    """Step ``step``'s batch: a pure function of ``(seed, step)``."""
    if len(encoded) == 1:
        (enc,) = encoded.values()
        n = len(enc.examples)
        pos = np.arange(step * size, (step + 1) * size)
        idx = np.empty(size, np.int64)
        for epoch in np.unique(pos // n):
            perm = np.random.default_rng([seed, 0, int(epoch)]).permutation(n)
            sel = pos // n == epoch
            idx[sel] = perm[pos[sel] % n]
        inputs, targets = enc.inputs[idx], enc.targets[idx]
    else:
        names = sample_tasks(rates, step, size, seed)
        rng = np.random.default_rng([seed, 2, step])
        rows = [(encoded[k], int(rng.integers(len(encoded[k].examples)))) for k in names]
        inputs = np.stack([e.inputs[i] for e, i in rows])
        targets = np.stack([e.targets[i] for e, i in rows])
    dec_in = np.zeros_like(targets)
    dec_in[:, 1:] = targets[:, :-1]
    return {
        "encoder_input_tokens": inputs,
        "decoder_input_tokens": dec_in,
        "decoder_target_tokens": targets,
        "decoder_loss_weights": (targets > 0).astype(np.int32),
    }


# ---------------------------------------------------------------------------- the run


def _given_options(out: Path, resume: bool, given: dict) -> dict | None:
    """The recorded options of a resumed run (checked against ``given``), else ``None``."""
    run_file = out / ckpt.RUN_FILE
    if not resume:
        if run_file.is_file():
            raise ValueError(
                f"out: {out} already holds a run; pass --resume to continue it or choose "
                "another --out"
            )
        return None
    _, recorded = ckpt.read_run(out)
    if recorded.get("kind") != "finetune":
        raise ValueError(f"out: {out} is not a fine-tuning run")
    for k, v in given.items():
        if v is not None and recorded.get(k) != v:
            name = {"batch_size": "batch", "learning_rate": "lr"}.get(k, k)
            raise ValueError(
                f"{name}: the run in {out} used {recorded.get(k)!r}; resume with the same value"
            )
    return recorded


def _evaluate(decoder, params, tok, evals, enc_eval, batch, limit) -> dict[str, dict]:
    from lshsim.t5.finetune.decode import greedy_decode

    results = {}
    for split, (task, exs) in evals.items():
        enc = enc_eval[split]
        n = len(exs) if limit is None else min(limit, len(exs))
        ids = greedy_decode(decoder, params, enc.inputs[:n], batch)  # one compiled shape
        texts = [tok.decode(row) for row in ids]
        results[split] = M.evaluate_task(task, exs[:n], texts)
    return results


def _averages(results: dict[str, dict]) -> dict[str, float]:
    out = {}
    glue = M.glue_average(results)
    if glue is not None:
        out["glue_average"] = glue
    sg = M.super_glue_average(results)
    if sg is not None:
        out["super_glue_average"] = sg
    return out


def _append(out: Path, record: dict) -> None:
    with open(out / ckpt.METRICS_FILE, "a") as f:
        f.write(json.dumps(record) + "\n")


def finetune(
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
    mesh: str | None = None,
    devices: int | None = None,
    progress: bool = False,
    on_step: Callable[[int, dict], None] | None = None,
    scan_layers: bool | None = None,
) -> dict[str, Any]:
    """Fine-tune the pretrained run ``run`` on ``task`` (a task or ``glue``/``super_glue``).

    Args:
        run: the pretrained run directory (of ``lshsim train``); on resume it may be ``None``.
        task: a task name of :data:`lshsim.t5.finetune.tasks.TASKS` or a benchmark mixture.
        data: the task's folder (or the folder holding the benchmark's task folders).
        out: the fine-tuning run directory (created).
        steps: fine-tune until this many steps are done in total.
        step: the pretrained checkpoint (default: the latest good one).
        batch_size: examples per step (paper: 256).
        learning_rate: Adafactor's constant rate (paper: 1e-3).
        dropout: the dropout rate (paper: 0.1).
        seed: seeds the data order, dropout and the mixture draws.
        input_length: encoder tokens (default: the longest input, EOS included, rounded up to
            a multiple of 8, at most 512).
        target_length: decoder tokens (default: the longest target with EOS, at most 128).
        cap: the mixture's examples cap ``K`` (:data:`mixture.DEFAULT_CAP`).
        eval_every: evaluate every this many steps (default: 4 times, and at the end).
        eval_examples: evaluate on at most this many examples of each split (default: all).
        checkpoint_every: checkpoint every this many steps (default: 4 times, and at the end).
        keep_checkpoints: checkpoints kept (default 3).
        log_every: write train metrics every this many steps.
        resume: continue the run in ``out``.
        mesh: ``"data=A,model=B"``: the batch split over ``data``, the parameters over
            ``model`` (:mod:`lshsim.t5.sharding`, as ``train``); not with ``devices``.
        devices: a data-parallel mesh of this many devices (default: all of them).
        progress: show a progress bar.
        on_step: ``on_step(step, record)`` after each logged step.
        scan_layers: layers scanned (default) or unrolled (``False``); the pretrained
            parameters are converted (:func:`lshsim.t5.scan.to_layout`).

    Returns:
        ``step``, ``dev`` (split -> metrics of the last evaluation), ``averages``,
        ``train_loss``, ``out``, ``seconds`` (the steps after the first, compiled one) and
        ``steps_per_second``.

    Raises:
        ValueError: an unknown task, a missing or bad data file (one line naming the file and
            line), an existing run without ``resume``, a bad option.
    """
    import jax

    from lshsim.t5 import NonFiniteLossError, sharding
    from lshsim.t5.data.tokenizer import Tokenizer

    steps = check_int("steps", steps, 1)
    log_every = check_int("log_every", log_every, 1)
    out = Path(out)
    given = _checked(
        task=task,
        batch_size=batch_size,
        learning_rate=learning_rate,
        dropout=dropout,
        seed=seed,
        cap=cap,
        eval_examples=eval_examples,
        scan_layers=scan_layers,
    )
    opts, recorded, train_ex, evals = _settle(out, resume, given, run, data, keep_checkpoints)
    the_mesh = sharding.mesh_from_options(mesh, devices)
    sharding.check_batch(opts.batch_size, the_mesh)
    tok = Tokenizer.load((out if recorded else Path(opts.pretrained)) / ckpt.TOKENIZER_FILE)
    lengths = (input_length or opts.input_length, target_length or opts.target_length)
    opts, enc_train, enc_eval = _encode(tok, train_ex, evals, opts, *lengths)
    rates = mixing_rates({k: len(v) for k, v in train_ex.items()}, opts.cap)
    opts, ft_config, state, optimizer = _start(out, opts, recorded, step)
    abstract, shardings, step_fn, decoder = _compiled(ft_config, optimizer, opts, the_mesh)
    every = (
        log_every,
        max(1, steps // 4) if eval_every is None else check_int("eval_every", eval_every, 1),
        max(1, steps // 4)
        if checkpoint_every is None
        else check_int("checkpoint_every", checkpoint_every, 1),
    )
    with ckpt.manager(out, max_to_keep=opts.keep_checkpoints) as mngr:
        if state is None:
            state, passed = ckpt.restore_good(
                mngr, abstract, action="resuming from", shardings=shardings
            )
            for s in passed:
                ckpt.delete(mngr, s)
            ckpt.truncate_metrics(out, int(state["step"]))
        else:
            state = jax.device_put(state, shardings)
        start = int(state["step"])
        run_ = _Run(
            step_fn, decoder, tok, enc_train, enc_eval, evals, rates, opts, mngr, out, the_mesh
        )
        return _loop(run_, state, start, steps, every, progress, on_step, NonFiniteLossError)


def _compiled(config, optimizer, opts: FinetuneOptions, mesh):
    """``(abstract state, its shardings on mesh, the jitted train step, the decoder)``."""
    from lshsim.t5 import sharding
    from lshsim.t5.finetune.decode import make_greedy_decoder
    from lshsim.t5.steps import make_train_step

    abstract, shardings = sharding.train_state_shardings(config, optimizer, mesh)
    step_fn = sharding.jit_on(
        mesh,
        make_train_step(config, optimizer, opts.seed),
        in_shardings=(shardings, sharding.batch_sharded(mesh)),
        out_shardings=(shardings, sharding.replicated(mesh)),
        donate_argnums=0,
    )
    return abstract, shardings, step_fn, make_greedy_decoder(config, opts.target_length, mesh)


def _checked(
    *, task, batch_size, learning_rate, dropout, seed, cap, eval_examples, scan_layers
) -> dict:
    """The given options, checked (``None``: not given)."""

    def opt(value, check):
        return None if value is None else check(value)

    return {
        "task": task,
        "batch_size": opt(batch_size, lambda v: check_int("batch", v, 1)),
        "learning_rate": opt(
            learning_rate,
            lambda v: check_float("learning_rate", v, 0.0, math.inf, lo_open=True),
        ),
        "dropout": opt(dropout, lambda v: check_float("dropout", v, 0.0, 1.0, hi_open=True)),
        "seed": opt(seed, lambda v: check_int("seed", v, 0)),
        "cap": opt(cap, lambda v: check_int("cap", v, 1)),
        "eval_examples": opt(eval_examples, lambda v: check_int("eval_examples", v, 1)),
        "scan_layers": opt(scan_layers, bool),
    }


def _settle(out: Path, resume: bool, given: dict, run, data, keep_checkpoints):
    """``(options, recorded or None, train examples, eval splits)``; the data read first.

    Raises:
        ValueError: bad data, an unknown task, an existing run without ``resume``, options
            that disagree with the resumed run's, a ``run`` that is not a run directory.
    """
    names = task_names(given["task"])
    recorded = _given_options(out, resume, given)
    if recorded is None and (run is None or data is None):
        raise ValueError("run, data: a new fine-tuning run needs --run and --data")
    fields = {f.name for f in dataclasses.fields(FinetuneOptions)}
    opts = None
    if recorded is not None:
        opts = FinetuneOptions(**{k: v for k, v in recorded.items() if k in fields})
    data_dir = str(Path(data).absolute()) if data is not None else opts.data
    train_ex, evals = _load(names, data_dir)  # bad data fails here, before any model
    if opts is None:
        ckpt.read_run(Path(run))  # not a run directory: one line, before restoring
        kw = {k: v for k, v in given.items() if v is not None and k != "task"}
        pretrained = str(Path(run).absolute())
        opts = FinetuneOptions(
            task=given["task"], data=data_dir, pretrained=pretrained, pretrained_step=-1, **kw
        )
    opts = dataclasses.replace(opts, data=data_dir)
    if keep_checkpoints is not None:
        opts = dataclasses.replace(opts, keep_checkpoints=keep_checkpoints)
    check_int("keep_checkpoints", opts.keep_checkpoints, 2)
    return opts, recorded, train_ex, evals


def _encode(tok, train_ex, evals, opts, input_length, target_length):
    """``(options with the lengths, train {task: _Encoded}, eval {split: _Encoded})``."""
    in_len, tg_len, enc_in, enc_tg = _lengths(tok, train_ex, evals, input_length, target_length)
    in_len = check_int("input_length", in_len, 2)
    tg_len = check_int("target_length", tg_len, 2)
    opts = dataclasses.replace(opts, input_length=in_len, target_length=tg_len)
    eos = tok.eos_id

    def enc(key, examples):
        return _Encoded(examples, _pack(enc_in[key], in_len, eos), _pack(enc_tg[key], tg_len, eos))

    enc_train = {k: enc(k, v) for k, v in train_ex.items()}
    enc_eval = {k: enc(("eval", k), v[1]) for k, v in evals.items()}
    return opts, enc_train, enc_eval


def _start(out: Path, opts: FinetuneOptions, recorded, step):
    """``(options, fine-tuning config, state, optimiser)`` of the run in ``out``.

    A new run starts from the pretrained checkpoint (its files written to ``out``; its config
    is the pretrained run's, in the layout of ``opts.scan_layers``, the parameters converted);
    a resumed one returns ``state=None`` (the caller restores it).
    """
    from lshsim.t5.loop import restore_run

    if recorded is not None:
        config = ckpt.read_run(out)[0]
        return opts, config, None, finetune_optimizer(config, opts.learning_rate)
    config, _, pre_state = restore_run(Path(opts.pretrained), step)
    opts = dataclasses.replace(opts, pretrained_step=int(pre_state["step"]))
    ft_config = config.replace(dropout_rate=opts.dropout, scan_layers=opts.scan_layers)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(opts.pretrained) / ckpt.TOKENIZER_FILE, out / ckpt.TOKENIZER_FILE)
    ckpt.write_run(out, ft_config, {"kind": "finetune", **dataclasses.asdict(opts)})
    (out / ckpt.METRICS_FILE).unlink(missing_ok=True)
    params = to_layout(pre_state["params"], ft_config.scanned, ragged_paths(ft_config))
    optimizer = finetune_optimizer(ft_config, opts.learning_rate)
    state = {"step": np.asarray(0, np.int32), "params": params, "opt_state": optimizer.init(params)}
    return opts, ft_config, state, optimizer


@dataclasses.dataclass
class _Run:
    """What the step loop needs: the compiled functions, the data, the options, the files."""

    step_fn: Callable
    decoder: Callable
    tok: Any
    enc_train: dict
    enc_eval: dict
    evals: dict
    rates: dict
    opts: FinetuneOptions
    mngr: Any
    out: Path
    mesh: Any


def _loop(r: _Run, state, start, steps, every, progress, on_step, nonfinite) -> dict:
    import jax
    from tqdm import tqdm

    from lshsim.t5 import sharding

    log_every, every_eval, every_ckpt = every
    opts = r.opts
    train_loss, dev, averages, t_first = math.nan, {}, {}, None
    bar = tqdm(
        total=steps,
        initial=start,
        desc=f"finetune {opts.task}",
        disable=not progress,
        unit="step",
        dynamic_ncols=True,
    )
    with bar:
        for step in range(start, steps):
            batch = _batch(r.enc_train, r.rates, step, opts.batch_size, opts.seed)
            batch = sharding.shard_batch(batch, r.mesh)
            state, m = r.step_fn(state, batch)
            done = step + 1
            if t_first is None:
                jax.block_until_ready(m["loss"])
                t_first = (time.perf_counter(), done)
            is_ckpt = done % every_ckpt == 0 or done == steps
            if done % log_every == 0 or is_ckpt:
                m = jax.device_get(m)
                if not (bool(m["finite"]) and bool(m["params_finite"])):
                    raise nonfinite(f"loss: non-finite ({float(m['loss'])}) at step {done}")
                train_loss = float(m["loss"])
                record = {
                    "step": done,
                    "split": "train",
                    "loss": train_loss,
                    "accuracy": float(m["accuracy"]),
                    "lr": opts.learning_rate,
                }
                _append(r.out, record)
                bar.set_postfix(loss=f"{train_loss:.3f}")
                if on_step is not None:
                    on_step(done, record)
            if done % every_eval == 0 or done == steps:
                dev = _evaluate(
                    r.decoder,
                    state["params"],
                    r.tok,
                    r.evals,
                    r.enc_eval,
                    opts.batch_size,
                    opts.eval_examples,
                )
                averages = _averages(dev)
                records = [{"task": k, **v} for k, v in dev.items()]
                records += [{"task": k, "score": v} for k, v in averages.items()]
                for rec in records:
                    _append(r.out, {"step": done, "split": "dev", **rec})
            if is_ckpt:
                ckpt.save(r.mngr, done, state)
            bar.update(1)
    jax.block_until_ready(state["params"])
    seconds = time.perf_counter() - t_first[0] if t_first else math.nan
    timed = steps - t_first[1] if t_first else 0
    return {
        "step": steps,
        "dev": dev,
        "averages": averages,
        "train_loss": train_loss,
        "out": str(r.out),
        "seconds": seconds,
        "steps_per_second": timed / seconds if timed and seconds > 0 else math.nan,
        "input_length": opts.input_length,
        "target_length": opts.target_length,
    }
