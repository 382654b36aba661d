"""Training and evaluation runs: data, mesh, jit-compiled steps, metrics, checkpoints, resume.

:func:`train` is what ``lshsim train`` runs; :func:`evaluate_run` is ``lshsim eval``. A run
directory's layout is described in :mod:`lshsim.t5.checkpoint`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lshsim._validate import check_int
from lshsim.t5 import checkpoint as ckpt
from lshsim.t5.budget import check_train_fits
from lshsim.t5.configs import T5Config, get_config
from lshsim.t5.options import EVAL_BATCHES, TrainOptions

__all__ = [
    "EVAL_BATCHES",
    "TrainOptions",
    "evaluate_run",
    "held_out_tokenizer",
    "restore_run",
    "train",
]


def _tokenizer(config: T5Config, opts: TrainOptions, out: Path, train_docs, *, reuse: bool):
    """The run's tokenizer: its saved one (``reuse``), ``opts.tokenizer``, or a trained one."""
    from lshsim.t5.data.tokenizer import Tokenizer, train_tokenizer

    tok_path = out / ckpt.TOKENIZER_FILE
    if reuse and tok_path.is_file():
        tok = Tokenizer.load(tok_path)
    elif opts.tokenizer:
        tok = Tokenizer.load(opts.tokenizer)
    else:
        tok = train_tokenizer(train_docs, config.num_pieces, seed=opts.seed)
    if tok.vocab_size > config.vocab_size:
        raise ValueError(
            f"tokenizer: {tok.vocab_size} ids do not fit config '{config.name}' "
            f"(vocab_size {config.vocab_size})"
        )
    return tok


def _data(config: T5Config, opts: TrainOptions, out: Path, *, reuse_tokenizer: bool):
    """Tokenizer, training dataset and held-out batches of a run."""
    from lshsim.t5.data.corpus import load_corpus, split_documents
    from lshsim.t5.data.spans import build_dataset

    docs = load_corpus(_corpus(opts))
    train_docs, eval_docs = split_documents(docs, opts.eval_fraction, seed=opts.seed)
    tok = _tokenizer(config, opts, out, train_docs, reuse=reuse_tokenizer)
    kw = opts.span_options()
    train_ds = build_dataset(train_docs, tok, seed=opts.seed, **kw)
    kw["target_length"] = train_ds.target_length
    eval_ds = build_dataset(eval_docs, tok, seed=opts.seed + 1, **kw)
    eval_batches = eval_ds.eval_batches(opts.batch_size, opts.eval_batches)
    return tok, train_ds, eval_batches


def _held_out(config: T5Config, opts: TrainOptions, out: Path):
    """Tokenizer and held-out dataset of a recorded run, as :func:`_data` builds them.

    The training set is built only for a run whose ``target_length`` was not recorded.
    """
    from lshsim.t5.data.corpus import load_corpus, split_documents
    from lshsim.t5.data.spans import build_dataset

    docs = load_corpus(_corpus(opts))
    train_docs, eval_docs = split_documents(docs, opts.eval_fraction, seed=opts.seed)
    tok = _tokenizer(config, opts, out, train_docs, reuse=True)
    kw = opts.span_options()
    if kw["target_length"] is None:
        kw["target_length"] = build_dataset(train_docs, tok, seed=opts.seed, **kw).target_length
    return tok, build_dataset(eval_docs, tok, seed=opts.seed + 1, **kw)


def held_out_dataset(config: T5Config, opts: TrainOptions, out: Path):
    """``(tokenizer, held-out dataset)`` of a recorded run, as ``lshsim eval`` builds them."""
    return _held_out(config, opts, Path(out))


def _corpus(opts: TrainOptions) -> list[str] | None:
    """The corpus paths as :func:`lshsim.t5.data.corpus.load_corpus` takes them."""
    return None if opts.corpus is None else list(opts.corpus)


def _special_ids(tok) -> tuple[int, ...]:
    """Ids left out of the content accuracy: the tokenizer's sentinels and EOS."""
    return (*tok.sentinel_ids, tok.eos_id)


def _primary() -> bool:
    """Whether this process writes the run's files (process 0 of a multi-host run)."""
    import jax

    return jax.process_index() == 0


def _append_metrics(out: Path, record: dict) -> None:
    if not _primary():
        return
    with open(out / ckpt.METRICS_FILE, "a") as f:
        f.write(json.dumps(record) + "\n")


def _run_options(config: T5Config, out: Path, resume: bool, given: dict) -> TrainOptions:
    """The options of the run in ``out``: recorded (``resume``) or built from ``given``.

    Raises:
        ValueError: another config or a disagreeing option on resume; an existing run without
            ``resume``; an invalid option.
    """
    if not resume:
        if ckpt.holds_run(out):  # run.json without a checkpoint: a start cut short
            raise ValueError(
                f"out: {out} already holds a training run; pass --resume to continue it or "
                "choose another --out"
            )
        return TrainOptions.from_config(config, **given)
    saved_cfg, recorded = ckpt.read_run(out)
    if saved_cfg != config:
        diff = [k for k, v in config.to_dict().items() if saved_cfg.to_dict().get(k) != v]
        raise ValueError(
            f"checkpoint: {out} was trained with config '{saved_cfg.name}', not "
            f"'{config.name}' (differs in {', '.join(diff)})"
        )
    new = TrainOptions.from_config(config, **given).to_dict()
    for k, v in given.items():
        if k in ("keep_checkpoints", "accumulate"):  # may change on resume (same update)
            continue
        if v is not None and new[k] != recorded.get(k):
            name = "batch" if k == "batch_size" else k
            raise ValueError(
                f"{name}: the run in {out} used {recorded.get(k)!r}; resume with the same value"
            )
    opts = TrainOptions.from_dict(recorded)
    changed = {k: new[k] for k in ("keep_checkpoints", "accumulate") if given.get(k) is not None}
    return dataclasses.replace(opts, **changed)


@dataclasses.dataclass
class _Session:
    """One call of :func:`train`: the run's pieces, and its state as the steps advance."""

    config: T5Config
    opts: TrainOptions
    out: Path
    mesh: Any
    mngr: Any
    train_ds: Any
    step_fn: Callable
    eval_fn: Callable
    eval_batches: list
    state: Any
    start: int

    def evaluate(self, step: int) -> dict:
        """Evaluate the current parameters on the held-out batches and record it."""
        from lshsim.t5.steps import evaluate

        ev = evaluate(self.eval_fn, self.state["params"], self.eval_batches)
        _append_metrics(self.out, {"step": step, "split": "eval", **ev})
        return ev


def _initial_state(config, opts, optimizer, mngr, out: Path, resume, accept, placement):
    """``(state, start)``: the newest good checkpoint's when resuming one, else a fresh state.

    ``placement`` is ``(mesh, abstract_state, shardings)``: the state is placed with the
    shardings (a fresh one drawn in place, :func:`lshsim.t5.sharding.init_state_on`).
    Resuming passes over (with a warning) and deletes newer checkpoints that are unreadable,
    have non-finite parameters or fail ``accept`` (the held-out loss check), and drops the
    metric records after the step resumed from.
    """
    from lshsim.t5 import sharding

    mesh, abstract, shardings = placement
    if resume and mngr.all_steps():
        state, passed = ckpt.restore_good(
            mngr,
            abstract,
            accept=accept,
            action="resuming from",
            quiet=not _primary(),
            shardings=shardings,
        )
        start = int(state["step"])
        for step in passed:  # every process: orbax deletes on process 0 and waits for all
            ckpt.delete(mngr, step)
        if _primary():
            ckpt.truncate_metrics(out, start)
        return state, start
    # Compiled with the mesh's shardings: each device draws its own shards, the same values
    # as an unsharded run's.
    state = sharding.init_state_on(mesh, config, optimizer, shardings, opts.seed)
    if _primary():
        (out / ckpt.METRICS_FILE).unlink(missing_ok=True)
    return state, 0


def _held_out_check(eval_fn, batches, evals=None) -> Callable[[dict], str | None]:
    """``accept(state)`` for :func:`lshsim.t5.checkpoint.restore_good`: a finite held-out loss.

    ``evals``: a list to append each evaluation (with its ``step``) to.
    """
    from lshsim.t5.steps import evaluate

    def accept(state: dict) -> str | None:
        ev = evaluate(eval_fn, state["params"], batches)
        if evals is not None:
            evals.append({"step": int(state["step"]), **ev})
        return (
            None if math.isfinite(ev["loss"]) else f"has a non-finite held-out loss ({ev['loss']})"
        )

    return accept


def _session(config, opts, out, mesh, mngr, optimizer, tok, train_ds, eval_host, resume):
    """Restore or initialise the state, place it on the mesh, compile the train and eval steps.

    Parameters and optimiser state are placed by :func:`lshsim.t5.sharding.state_shardings`
    (split over ``model``, replicated over ``data``); batches are split over ``data``.
    """
    from lshsim.t5 import sharding
    from lshsim.t5.steps import make_train_step

    abstract, shardings = sharding.train_state_shardings(config, optimizer, mesh)
    eval_fn = sharding.eval_step_on(mesh, config, _special_ids(tok), shardings["params"])
    eval_batches = [sharding.shard_batch(b, mesh) for b in eval_host]
    accept = _held_out_check(eval_fn, eval_batches)
    placement = (mesh, abstract, shardings)
    state, start = _initial_state(config, opts, optimizer, mngr, out, resume, accept, placement)
    step_fn = sharding.jit_on(
        mesh,
        make_train_step(config, optimizer, opts.seed, opts.accumulate),
        in_shardings=(shardings, sharding.batch_sharded(mesh)),
        out_shardings=(shardings, sharding.replicated(mesh)),
        donate_argnums=0,
    )
    return _Session(
        config, opts, out, mesh, mngr, train_ds, step_fn, eval_fn, eval_batches, state, start
    )


def _log_step(s: _Session, step: int, metrics, good: ckpt.GoodCheckpoint, bar, on_step) -> float:
    """Check and record one step's train metrics; return its loss.

    Raises:
        NonFiniteLossError: the loss or the updated parameters are NaN or infinite.
    """
    import jax

    from lshsim.t5.steps import learning_rate as lr_at

    done = step + 1
    m = jax.device_get(metrics)
    good.check(done, m)
    train_loss = float(m["loss"])
    record = {
        "step": done,
        "split": "train",
        "loss": train_loss,
        "z_loss": float(m["z_loss"]),
        "router_loss": float(m["router_loss"]),
        "accuracy": float(m["accuracy"]),
        "lr": lr_at(step, s.opts.learning_rate, s.opts.warmup_steps),
    }
    _append_metrics(s.out, record)
    bar.set_postfix(loss=f"{train_loss:.3f}", acc=f"{record['accuracy']:.3f}")
    if on_step is not None:
        on_step(done, record)
    return train_loss


def _step_checks(s: _Session, step: int, metrics, good: ckpt.GoodCheckpoint, flags, bar, on_step):
    """Log (or only check) step ``step``'s metrics and evaluate, as ``flags`` say.

    ``flags`` is ``(log, evaluate)``. Returns ``(train_loss or None, eval or None)``.

    Raises:
        NonFiniteLossError: a non-finite loss, held-out loss or parameters; the pending
            checkpoint is deleted first.
    """
    import jax

    from lshsim.t5 import NonFiniteLossError

    log, evaluate = flags
    done, loss, ev = step + 1, None, None
    try:
        if log:
            loss = _log_step(s, step, metrics, good, bar, on_step)
        elif good.pending is not None:  # one host sync per checkpoint, to confirm it
            good.check(done, jax.device_get(metrics))
        if evaluate:
            ev = s.evaluate(done)
            if not math.isfinite(ev["loss"]):
                raise good.stop(f"held-out loss: non-finite ({ev['loss']}) at step {done}")
    except NonFiniteLossError:
        good.discard(s.mngr)
        raise
    return loss, ev


def _run_steps(s: _Session, steps: int, every: tuple[int, int, int], progress: bool, on_step):
    """Steps ``s.start .. steps`` with logging, evaluations and checkpoints.

    ``every`` is ``(log_every, eval_every, checkpoint_every)``. Returns ``(train_loss,
    final_eval or None, (time, step) after the first step or None)``.
    """
    import jax
    from tqdm import tqdm

    from lshsim.t5 import sharding

    log_every, eval_every, checkpoint_every = every
    good = ckpt.GoodCheckpoint(s.out, last=s.start or None)  # a resumed one passed the checks
    train_loss, final, t_first = math.nan, None, None
    bar = tqdm(
        total=steps,
        initial=s.start,
        desc=f"train {s.config.name}",
        disable=not progress or not _primary(),
        unit="step",
        dynamic_ncols=True,
    )
    with bar:
        for step in range(s.start, steps):
            batch = sharding.shard_batch(s.train_ds.batch(step, s.opts.batch_size), s.mesh)
            s.state, metrics = s.step_fn(s.state, batch)
            done = step + 1
            if t_first is None:
                jax.block_until_ready(metrics["loss"])
                t_first = (time.perf_counter(), done)
            is_ckpt = done % checkpoint_every == 0 or done == steps
            flags = (done % log_every == 0 or is_ckpt, done % eval_every == 0 or done == steps)
            loss, ev = _step_checks(s, step, metrics, good, flags, bar, on_step)
            train_loss = train_loss if loss is None else loss
            final = final if ev is None else ev
            if is_ckpt:
                ckpt.save(s.mngr, done, s.state)
                good.saved(done, confirmed=ev is not None)
            bar.update(1)
    return train_loss, final, t_first


def train(
    config: T5Config | str,
    out: str | Path,
    *,
    steps: int,
    resume: bool = False,
    corpus: Sequence[str] | None = None,
    batch_size: int | None = None,
    input_length: int | None = None,
    target_length: int | None = None,
    seed: int | None = None,
    learning_rate: float | None = None,
    warmup_steps: int | None = None,
    tokenizer: str | None = None,
    keep_checkpoints: int | None = None,
    accumulate: int | None = None,
    eval_every: int | None = None,
    checkpoint_every: int | None = None,
    log_every: int = 1,
    devices: int | None = None,
    mesh: str | None = None,
    progress: bool = True,
    on_step: Callable[[int, dict], None] | None = None,
    options: TrainOptions | None = None,
) -> dict[str, Any]:
    """Pretrain (or continue pretraining) a T5 with span corruption; return a summary.

    Args:
        config: a config or its name.
        out: the run directory (created).
        steps: train until this many steps are done in total.
        resume: continue the run in ``out`` from its latest checkpoint. Its recorded options
            are used; explicitly given ones must agree with them.
        corpus: text / JSON-lines files or directories; ``None``: the embedded corpus.
        batch_size: examples per step (a multiple of the device count).
        input_length: encoder tokens per example after span corruption.
        target_length: decoder tokens (default: what span corruption needs).
        seed: seeds parameters, data order, noise masks and dropout.
        learning_rate: base of the rsqrt schedule (T5: 1.0).
        warmup_steps: constant-rate steps of the schedule.
        tokenizer: a SentencePiece ``.model`` to use instead of training one.
        keep_checkpoints: the newest checkpoints kept (default 3, at least 2): ``resume``
            falls back to the newest good one when the latest is damaged.
        accumulate: micro-batches per update (divides the batch; may change on resume).
        eval_every: evaluate the held-out batches every this many steps (default: 4 times).
        checkpoint_every: checkpoint every this many steps (default: 4 times, and at the end).
        log_every: write train metrics every this many steps.
        devices: devices of a data-parallel mesh (``data=devices, model=1``; default: all).
        mesh: ``"data=A,model=B"``: ``A x B`` devices (all of them), the batch split over
            ``data`` and the parameters over ``model`` (see :mod:`lshsim.t5.sharding`);
            not with ``devices``.
        progress: show a progress bar.
        on_step: called as ``on_step(step, metrics)`` after each logged step (tests use it to
            simulate a kill).
        options: all the run's options at once, instead of the keywords from ``corpus`` to
            ``tokenizer`` (its fields that are not ``None`` count as given on resume).

    Returns:
        dict with ``step``, ``initial_eval``, ``final_eval``, ``train_loss``, ``out``,
        ``examples_per_second`` (after the first, compiling, step). The evaluations hold
        ``loss``, ``accuracy``, ``tokens`` and the span-content ``content_loss``,
        ``content_accuracy``, ``content_tokens`` (see :func:`evaluate_run`).

    Raises:
        ValueError: bad options, a missing or empty corpus, lengths too short for span
            corruption, an existing run without ``resume``, a checkpoint from another config.
        NonFiniteLossError: the loss, the held-out loss or the parameters became NaN or
            infinite; the last good checkpoint (see
            :class:`lshsim.t5.checkpoint.GoodCheckpoint`) is the newest one left.
    """
    config = ckpt.resolved_paths(get_config(config))  # run.json records paths absolute
    steps = check_int("steps", steps, 1)
    log_every = check_int("log_every", log_every, 1)
    out = Path(out)
    given = {
        "corpus": list(corpus) if corpus else None,
        "batch_size": batch_size,
        "input_length": input_length,
        "target_length": target_length,
        "seed": seed,
        "learning_rate": learning_rate,
        "warmup_steps": warmup_steps,
        "tokenizer": tokenizer,
        "keep_checkpoints": keep_checkpoints,
        "accumulate": accumulate,
    }
    if options is not None:
        if any(v is not None for v in given.values()):
            raise ValueError("options: pass either options or the option keywords, not both")
        given = {k: v for k, v in options.to_dict().items() if v is not None}
    opts = _run_options(config, out, resume, given)
    check_train_fits(config, opts.batch_size // opts.accumulate, opts.input_length)
    from lshsim.t5 import sharding

    the_mesh = sharding.mesh_from_options(mesh, devices)
    every = (
        log_every,
        max(1, steps // 4) if eval_every is None else check_int("eval_every", eval_every, 1),
        max(1, steps // 4)
        if checkpoint_every is None
        else check_int("checkpoint_every", checkpoint_every, 1),
    )
    return _train(config, opts, out, steps, every, resume, the_mesh, progress, on_step)


def _train(config, opts, out, steps, every, resume, mesh, progress, on_step) -> dict:
    """:func:`train` once its options are settled: data, state, the steps, the summary."""
    import jax

    from lshsim.t5 import distributed, sharding
    from lshsim.t5.steps import make_optimizer

    sharding.check_batch(opts.batch_size, mesh)
    tok, train_ds, eval_host = _data(config, opts, out, reuse_tokenizer=resume)
    opts = dataclasses.replace(opts, target_length=train_ds.target_length)
    out.mkdir(parents=True, exist_ok=True)
    distributed.barrier("lshsim-options")  # every process checked --out before any writes
    if not resume and _primary():
        tok.save(out / ckpt.TOKENIZER_FILE)
        ckpt.write_run(out, config, opts.to_dict())
    ckpt.record_mesh(out, mesh)  # process 0 writes; a change of mesh is noted
    optimizer = make_optimizer(config, opts.learning_rate, opts.warmup_steps)
    with ckpt.manager(out, max_to_keep=opts.keep_checkpoints) as mngr:
        s = _session(config, opts, out, mesh, mngr, optimizer, tok, train_ds, eval_host, resume)
        initial = s.evaluate(0) if s.start == 0 else None
        train_loss, final, t_first = _run_steps(s, steps, every, progress, on_step)
        jax.block_until_ready(s.state["params"])
        t_end = time.perf_counter()
        timed_steps = steps - t_first[1] if t_first else 0
        eps = timed_steps * opts.batch_size / (t_end - t_first[0]) if timed_steps else math.nan
        if final is None:
            final = s.evaluate(steps)
        return {
            "step": steps,
            "initial_eval": initial,
            "final_eval": final,
            "train_loss": train_loss,
            "out": str(out),
            "examples_per_second": eps,
        }


def restore_run(out: str | Path, step: int | None = None) -> tuple[T5Config, dict, dict]:
    """``(config, options, state)`` of a recorded run's checkpoint (default: the latest good).

    ``options`` is the recorded dict of ``run.json`` (see :meth:`TrainOptions.from_dict`);
    ``state`` holds ``params``, ``opt_state`` and ``step``, restored on the host. Without
    ``step``, a latest checkpoint that is unreadable or has non-finite parameters is passed
    over for the newest good one, with a warning on stderr.

    Raises:
        ValueError: not a run directory, no checkpoint (at ``step``), none usable, or one that
            is unreadable, non-finite or does not fit the recorded config (at ``step``).
    """
    from lshsim.t5.steps import abstract_state, make_optimizer

    out = Path(out)
    config, opts = ckpt.read_pretraining_run(out)
    optimizer = make_optimizer(config, opts["learning_rate"], opts["warmup_steps"])
    with ckpt.manager(out, read_only=True) as mngr:
        if step is None:
            state, _ = ckpt.restore_good(mngr, abstract_state(config, optimizer))
        else:
            state = ckpt.restore(mngr, abstract_state(config, optimizer), step)
    return config, opts, state


def held_out_tokenizer(
    config: T5Config, opts: TrainOptions | dict[str, Any], out: Path | None
) -> tuple[Any, list[str]]:
    """The tokenizer and held-out documents a run (``out``) uses, or would use with ``opts``.

    A recorded run's saved tokenizer is reused; otherwise one is trained (and cached) on the
    training split, as :func:`train` does.

    Args:
        config: the run's config.
        opts: its options (or their recorded dict, as :func:`restore_run` returns it).
        out: the run directory, or ``None`` for options of no recorded run.

    Returns:
        ``(tokenizer, held-out documents)``.
    """
    from lshsim.t5.data.corpus import load_corpus, split_documents

    if isinstance(opts, dict):
        opts = TrainOptions.from_dict(opts)
    docs = load_corpus(_corpus(opts))
    train_docs, eval_docs = split_documents(docs, opts.eval_fraction, seed=opts.seed)
    reuse = out is not None
    tok = _tokenizer(config, opts, Path(out) if reuse else Path("."), train_docs, reuse=reuse)
    return tok, eval_docs


def evaluate_run(
    checkpoint: str | Path,
    *,
    step: int | None = None,
    examples: int | None = None,
    batch_size: int | None = None,
    mesh: str | None = None,
    expert_impl: str | None = None,
) -> dict[str, Any]:
    """Held-out loss and span accuracy of a run's checkpoint (default: the latest).

    Args:
        checkpoint: a run directory of :func:`train`.
        step: the checkpoint step (default: the latest).
        examples: held-out examples to evaluate, rounded up to whole batches. ``None``: the
            run's own evaluation (``eval_batches`` batches of its batch size, what ``train``
            records as ``final_eval``). Example ``k`` is chunk ``k mod held_out_chunks`` of the
            held-out split with span mask ``k``, so the first ``4 * batch`` examples are the
            run's own evaluation (past ``held_out_chunks`` the text repeats with new masks).
        batch_size: examples per evaluation batch (default: the run's batch size; at most
            ``examples``). Only the batching changes, not the examples.
        mesh: ``"data=A,model=B"`` to evaluate on (default: one device); the
            checkpoint is restored straight into its shardings, whatever mesh wrote it.
        expert_impl: how rank-``r`` experts are computed (``gather``, ``ragged``, ``auto``;
            default: the run's own): the same numbers, another memory footprint.

    Returns:
        ``config``, ``step``; ``loss`` (cross-entropy per target token, no z-loss),
        ``accuracy`` and ``tokens`` over all target tokens (spans, sentinels, EOS);
        ``content_loss``, ``content_accuracy`` and ``content_tokens`` over the span contents
        only (sentinels and EOS left out: early in training they are most of what a model
        gets right); ``examples`` and ``held_out_chunks`` (distinct held-out chunks).

    Without ``step``, a latest checkpoint that is unreadable, has non-finite parameters or a
    non-finite held-out loss is passed over for the newest good one, with a one-line warning
    on stderr.

    Raises:
        ValueError: if ``checkpoint`` is not a run directory, has no checkpoint (at ``step``)
            or none usable, the one at ``step`` is unreadable or non-finite, or ``examples`` or
            ``batch_size`` is not an integer >= 1.
    """
    from lshsim.t5 import sharding
    from lshsim.t5.steps import make_optimizer

    if examples is not None:
        examples = check_int("examples", examples, 1)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, 1)
    out = Path(checkpoint)
    config, recorded = ckpt.read_pretraining_run(out, "eval")
    if expert_impl is not None:
        config = config.replace(expert_impl=expert_impl)
    opts = TrainOptions.from_dict(recorded)
    optimizer = make_optimizer(config, opts.learning_rate, opts.warmup_steps)
    the_mesh = sharding.make_mesh(1, 1) if mesh is None else sharding.mesh_from_options(mesh)
    abstract, shardings = sharding.train_state_shardings(config, optimizer, the_mesh)
    with ckpt.manager(out, read_only=True) as mngr:
        ckpt.check_step(mngr, step)  # before building the held-out data
        if examples is None:
            examples = opts.eval_batches * opts.batch_size
        batch = min(batch_size or opts.batch_size, examples)
        sharding.check_batch(batch, the_mesh)
        check_train_fits(config, batch, opts.input_length, training=False)
        tok, ds = _held_out(config, opts, out)
        batches = ds.eval_batches(batch, -(-examples // batch))
        eval_fn = sharding.eval_step_on(the_mesh, config, _special_ids(tok), shardings["params"])
        evals: list[dict] = []
        accept = _held_out_check(eval_fn, batches, evals=evals)
        if step is None:
            ckpt.restore_good(
                mngr, abstract, accept=accept, action="evaluating", shardings=shardings
            )
        else:
            accept(ckpt.restore(mngr, abstract, step, shardings))
    ev = evals[-1]
    return {
        "config": config.name,
        "step": ev.pop("step"),
        **ev,
        "examples": len(batches) * batch,
        "held_out_chunks": ds.num_chunks,
    }
