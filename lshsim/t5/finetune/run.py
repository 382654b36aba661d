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
``resume=True`` continues it from its latest good checkpoint. The pretrained run may itself be
a fine-tuning run (fine-tuning in stages: its parameters are the start, its optimiser state is
not).

Every check is made first, without JAX and without writing (:mod:`lshsim.t5.finetune.prepare`:
which options a resumed run takes, and when an output folder holds a run); :func:`finetune` is
:func:`~lshsim.t5.finetune.prepare.prepare` and then :func:`run_prepared`.
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

from lshsim.t5 import checkpoint as ckpt
from lshsim.t5.finetune import metrics as M
from lshsim.t5.finetune.mixture import sample_tasks
from lshsim.t5.finetune.prepare import (
    MAX_INPUT_LENGTH,
    MAX_TARGET_LENGTH,
    Encoded,
    FinetuneOptions,
    Prepared,
    prepare,
    task_names,
)
from lshsim.t5.scan import ragged_paths, to_layout

__all__ = [
    "MAX_INPUT_LENGTH",
    "MAX_TARGET_LENGTH",
    "FinetuneOptions",
    "finetune",
    "finetune_optimizer",
    "restore_source",
    "run_prepared",
    "task_names",
]


def finetune_optimizer(config, learning_rate: float = 1e-3):
    """T5's Adafactor (:func:`lshsim.t5.steps.adafactor`) at a constant rate.

    Per layer for a scanned ``config``, as in pre-training.
    """
    from lshsim.t5.steps import adafactor

    return adafactor(config, learning_rate)


# ---------------------------------------------------------------------------- data


def _batch(encoded: dict[str, Encoded], rates, step: int, size: int, seed: int) -> dict:
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
        run: the run to fine-tune from (of ``lshsim train``, or of ``lshsim finetune``: its
            parameters); on resume it may be ``None``.
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
        ValueError: one line: the refusals of :func:`~lshsim.t5.finetune.prepare.prepare` (a
            bad option, an unknown task, a missing or bad data file, an existing run without
            ``resume``, a resumed run's option given another value, ``steps`` at or below
            the resumed run's step, a step too large for this machine), made before anything
            is written; then those of :func:`run_prepared`.
        NonFiniteLossError: the loss or the parameters became NaN or infinite.
    """
    prepared = prepare(
        run,
        task,
        data,
        out,
        steps=steps,
        step=step,
        batch_size=batch_size,
        learning_rate=learning_rate,
        dropout=dropout,
        seed=seed,
        input_length=input_length,
        target_length=target_length,
        cap=cap,
        eval_every=eval_every,
        eval_examples=eval_examples,
        checkpoint_every=checkpoint_every,
        keep_checkpoints=keep_checkpoints,
        log_every=log_every,
        resume=resume,
        scan_layers=scan_layers,
    )
    return run_prepared(prepared, mesh=mesh, devices=devices, progress=progress, on_step=on_step)


def run_prepared(
    p: Prepared,
    *,
    mesh: str | None = None,
    devices: int | None = None,
    progress: bool = False,
    on_step: Callable[[int, dict], None] | None = None,
) -> dict[str, Any]:
    """Run a fine-tuning run that :func:`~lshsim.t5.finetune.prepare.prepare` settled.

    Args:
        p: the prepared run.
        mesh: ``"data=A,model=B"`` (as :func:`finetune`); not with ``devices``.
        devices: a data-parallel mesh of this many devices (default: all of them).
        progress: show a progress bar.
        on_step: ``on_step(step, record)`` after each logged step.

    Returns:
        As :func:`finetune`.

    Raises:
        ValueError: a bad mesh, a batch it cannot split, a pretrained checkpoint that is
            missing or unusable.
        NonFiniteLossError: the loss or the parameters became NaN or infinite.
    """
    import jax

    from lshsim.t5 import NonFiniteLossError, sharding

    the_mesh = sharding.mesh_from_options(mesh, devices)
    sharding.check_batch(p.opts.batch_size, the_mesh)
    opts, state, optimizer = _start(p)
    abstract, shardings, step_fn, decoder = _compiled(p.config, optimizer, opts, the_mesh)
    out = p.out
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
            step_fn,
            decoder,
            p.tok,
            p.train,
            p.enc_eval,
            p.evals,
            p.rates,
            opts,
            mngr,
            out,
            the_mesh,
        )
        return _loop(run_, state, start, p.steps, p.every, progress, on_step, NonFiniteLossError)


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


def restore_source(run: str | Path, step: int | None = None) -> dict:
    """The state of a run to fine-tune from, at ``step`` (default: its latest good one).

    Args:
        run: a pretraining run (restored by :func:`lshsim.t5.loop.restore_run`) or a
            fine-tuning run (restored with its own optimiser's state structure).
        step: the checkpoint (``None``: the latest good one).

    Returns:
        ``step``, ``params`` and ``opt_state``, on the host, in the run's own layout.

    Raises:
        ValueError: not a run folder, no checkpoint (at ``step``), none usable.
    """
    run = Path(run)
    from lshsim.t5.steps import abstract_state

    config, recorded = ckpt.read_run(run)
    if recorded.get("kind") != "finetune":
        from lshsim.t5.loop import restore_run

        return restore_run(run, step)[2]
    abstract = abstract_state(config, finetune_optimizer(config, recorded["learning_rate"]))
    with ckpt.manager(run, read_only=True) as mngr:
        if step is None:
            return ckpt.restore_good(mngr, abstract)[0]
        return ckpt.restore(mngr, abstract, step)


def _start(p: Prepared):
    """``(options, state, optimiser)`` of the prepared run.

    A start restores the pretrained checkpoint and then writes the run's files to ``out``
    (its parameters converted to the layout of ``p.config``); a resumed run returns
    ``state=None`` (the caller restores it) and records a changed ``data`` or
    ``keep_checkpoints``.
    """
    opts, out = p.opts, p.out
    if p.resume:
        changed = {k: getattr(opts, k) for k in ("data", "keep_checkpoints")}
        if any(p.recorded.get(k) != v for k, v in changed.items()):
            ckpt.write_run(out, p.config, {**p.recorded, **changed})
        return opts, None, finetune_optimizer(p.config, opts.learning_rate)
    pre_state = restore_source(Path(opts.pretrained), p.source_step)
    opts = dataclasses.replace(opts, pretrained_step=int(pre_state["step"]))
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(opts.pretrained) / ckpt.TOKENIZER_FILE, out / ckpt.TOKENIZER_FILE)
    ckpt.write_run(out, p.config, {"kind": "finetune", **dataclasses.asdict(opts)})
    (out / ckpt.METRICS_FILE).unlink(missing_ok=True)
    params = to_layout(pre_state["params"], p.config.scanned, ragged_paths(p.config))
    optimizer = finetune_optimizer(p.config, opts.learning_rate)
    state = {"step": np.asarray(0, np.int32), "params": params, "opt_state": optimizer.init(params)}
    return opts, state, optimizer


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
