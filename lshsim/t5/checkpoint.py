"""Checkpoints of a training run, with orbax, and the run's metadata.

A run directory holds::

    run.json          the model config and the training options (written atomically; the
                      options are ``lshsim.t5.options.TrainOptions.to_dict()``), and the mesh
                      and process count of the latest session (informational: a run may
                      resume on another mesh; the checkpoints restore onto any)
    spm.model         the SentencePiece tokenizer the run uses
    metrics.jsonl     one JSON object per logged step (``split`` is ``train`` or ``eval``)
    checkpoints/<step>/  orbax checkpoints of {step, params, opt_state}

Orbax writes each checkpoint under a temporary name and renames it when complete, so a run
killed mid-save leaves the previous checkpoint as the latest one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lshsim._io import json_field, parse_json, read_json, write_atomic
from lshsim.t5.configs import T5Config

RUN_FILE = "run.json"
TOKENIZER_FILE = "spm.model"
METRICS_FILE = "metrics.jsonl"
CHECKPOINT_DIR = "checkpoints"


def resolved_paths(config: T5Config) -> T5Config:
    """``config`` with its file path (``engram_tokenizer``) absolute, from the current folder.

    ``run.json`` records the path resolved (:func:`write_run`), so a run is read, evaluated
    and fine-tuned from any folder.
    """
    path = config.engram_tokenizer
    if path and not os.path.isabs(path):
        return config.replace(engram_tokenizer=os.path.abspath(path))
    return config


def _recorded_paths(config: T5Config, where: str) -> T5Config:
    """A recorded config's file path, absolute.

    An older run's relative path is read from the current folder: lshsim recorded it as
    given, relative to the folder the run was made in, and did not record that folder.
    """
    path = config.engram_tokenizer
    if not path or os.path.isabs(path):
        return config
    if not os.path.isfile(path):
        raise ValueError(
            f"{where}: engram_tokenizer {path!r} is a relative path that names no file from "
            "the current folder (older runs recorded it relative to the folder they were made "
            "in): run from that folder, or write the absolute path into the file"
        )
    return resolved_paths(config)


def write_run(out: Path, config: T5Config, options: dict[str, Any]) -> None:
    """Record the config and training options of the run in ``out/run.json``.

    The config's file path is recorded absolute (:func:`resolved_paths`).
    """
    doc = {"config": resolved_paths(config).to_dict(), "train": options}
    write_atomic(out / RUN_FILE, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def record_mesh(out: Path, mesh) -> None:
    """Record ``mesh`` (its axis sizes) and the process count in ``out/run.json``.

    A run resumed on another mesh than the one recorded is allowed: its checkpoints restore
    onto any mesh (:func:`restore` with the target shardings). The change is noted in one
    line on stderr and the new mesh recorded. Only process 0 of several writes.
    """
    import jax

    if jax.process_index() != 0:
        return
    path = Path(out) / RUN_FILE
    doc = json.loads(path.read_text())
    now = {"mesh": {str(k): int(v) for k, v in mesh.shape.items()}}
    now["processes"] = jax.process_count()
    before = {k: doc[k] for k in now if k in doc}
    if before == now:
        return
    if before:
        print(
            f"lshsim: note: the run in {out} was saved on {_describe(before)}; it continues on "
            f"{_describe(now)}",
            file=sys.stderr,
            flush=True,
        )
    write_atomic(path, json.dumps({**doc, **now}, indent=1, sort_keys=True) + "\n")


def _describe(record: dict) -> str:
    """``mesh data=2,model=2 (2 processes)``."""
    axes = ",".join(f"{k}={v}" for k, v in record.get("mesh", {}).items()) or "an unknown mesh"
    n = record.get("processes")
    return f"mesh {axes}" + (f" ({n} processes)" if n and n > 1 else "")


def read_run(out: Path) -> tuple[T5Config, dict[str, Any]]:
    """The config and training options recorded in ``out/run.json``.

    The options of a pretraining run are checked as
    :meth:`lshsim.t5.options.TrainOptions.from_dict` reads them. A relative
    ``engram_tokenizer`` (recorded by an older lshsim) is read from the current folder
    (:func:`_recorded_paths`).

    Raises:
        ValueError: ``out`` is not a run directory, or its ``run.json`` is unreadable, not
            JSON or holds an invalid config or option (one line naming the file and the field).
    """
    from lshsim.t5.options import TrainOptions

    path = Path(out) / RUN_FILE
    if not path.is_file():
        raise ValueError(f"checkpoint: {out} is not a training run directory (no {RUN_FILE})")
    where = f"checkpoint: {path}"
    doc = read_json(path, where=where)
    recorded = json_field(doc, "train", "object", where)
    try:
        config = T5Config.from_dict(json_field(doc, "config", "object", where))
        if recorded.get("kind") != "finetune":  # a fine-tuning run's are lshsim.t5.finetune's
            TrainOptions.from_dict(recorded)
    except (TypeError, ValueError, OverflowError) as e:  # OverflowError: an int no float holds
        if str(e).startswith(where):
            raise
        raise ValueError(f"{where}: not a valid run file ({' '.join(str(e).split())})") from None
    return _recorded_paths(config, where), recorded


def read_pretraining_run(out: Path, command: str = "") -> tuple[T5Config, dict[str, Any]]:
    """:func:`read_run` of a pretraining run (``lshsim train``): a fine-tuning run is refused.

    Args:
        out: the run folder.
        command: what reads the pretraining run, for the message (``eval``), if known.

    Raises:
        ValueError: as :func:`read_run`, or ``out`` holds a fine-tuning run (one line: its
            held-out span corruption is its pretrained run's; its dev scores are in its
            metrics).
    """
    config, recorded = read_run(out)
    if recorded.get("kind") == "finetune":
        which = f", which {command} reads" if command else ""
        raise ValueError(
            f"checkpoint: {out} is a fine-tuning run (lshsim finetune), not a pretraining run "
            f"(lshsim train){which}; its dev scores are in {Path(out) / METRICS_FILE}"
        )
    return config, recorded


def manager(out: Path, *, max_to_keep: int = 2, read_only: bool = False):
    """An orbax ``CheckpointManager`` over ``out/checkpoints`` (synchronous saves).

    ``max_to_keep``: the newest checkpoints kept (``TrainOptions.keep_checkpoints``; at least 2
    so that a damaged or diverged latest one leaves a checkpoint to fall back to).
    ``read_only`` only means "do not create the directory"; callers do not save then.
    """
    import orbax.checkpoint as ocp

    # Not orbax's read_only mode, which logs warnings about the options it overrides.
    options = ocp.CheckpointManagerOptions(
        max_to_keep=max_to_keep, create=not read_only, enable_async_checkpointing=False
    )
    return ocp.CheckpointManager(Path(out).absolute() / CHECKPOINT_DIR, options=options)


def warn(message: str) -> None:
    """Print ``lshsim: warning: <message>`` (one line) on stderr."""
    print(f"lshsim: warning: {message}", file=sys.stderr, flush=True)


def save(mngr, step: int, state: dict) -> None:
    """Save ``state`` (a pytree) as checkpoint ``step`` and wait until it is complete."""
    import orbax.checkpoint as ocp

    mngr.save(step, args=ocp.args.StandardSave(state), force=True)
    mngr.wait_until_finished()


def delete(mngr, step: int) -> None:
    """Remove checkpoint ``step`` (one that is not good: damaged, or after a divergence).

    Every process of a multi-process run calls it: orbax removes the files on process 0 and
    waits for all processes (a call on process 0 alone would wait for the others forever).
    """
    from lshsim.t5 import distributed

    try:
        mngr.delete(step)
    except Exception:  # orbax cannot read a damaged step's metadata
        if distributed.is_primary():
            shutil.rmtree(Path(mngr.directory) / str(step), ignore_errors=True)
        distributed.barrier(f"lshsim-delete-{step}")
    mngr.reload()


class UnusableCheckpointError(ValueError):
    """A checkpoint that exists but cannot be used; ``reason`` says why, as a predicate."""

    def __init__(self, run: Path, step: int, reason: str):
        super().__init__(f"checkpoint: step {step} in {run} {reason}")
        self.step = step
        self.reason = reason


def _run_dir(mngr) -> Path:
    return Path(mngr.directory).parent


def check_step(mngr, step: int | None = None) -> int:
    """The checkpoint step to use: ``step`` if the run has it, else the latest.

    Raises:
        ValueError: the run has no checkpoint, or none at ``step`` (naming the steps it has).
    """
    steps = sorted(mngr.all_steps())
    if not steps:
        raise ValueError(f"checkpoint: no checkpoint in {_run_dir(mngr)}")
    if step is None:
        return steps[-1]
    if step not in steps:
        have = ", ".join(str(s) for s in steps)
        raise ValueError(
            f"checkpoint: no checkpoint for --step {step} in {_run_dir(mngr)} (steps: {have})"
        )
    return step


def with_shardings(abstract_state: dict, shardings=None) -> dict:
    """``abstract_state`` with each leaf's target sharding, for orbax to restore onto.

    Args:
        abstract_state: the state's shapes and dtypes (``jax.ShapeDtypeStruct`` leaves).
        shardings: one ``jax.sharding.Sharding`` for every leaf, or a pytree of them shaped
            like ``abstract_state``; ``None``: this process's first device.

    Returns:
        The same structure with ``ShapeDtypeStruct(shape, dtype, sharding=...)`` leaves: a
        checkpoint restores onto these, whatever mesh it was saved from.
    """
    import jax

    if shardings is None:
        shardings = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
    if isinstance(shardings, jax.sharding.Sharding):
        shardings = jax.tree_util.tree_map(lambda _: shardings, abstract_state)
    return jax.tree_util.tree_map(
        lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract_state, shardings
    )


def restore(mngr, abstract_state: dict, step: int | None = None, shardings=None) -> dict:
    """Restore checkpoint ``step`` (default: the latest) into the structure of ``abstract_state``.

    ``shardings``: where to put it (see :func:`with_shardings`; default this process's first
    device). A checkpoint saved on any mesh restores onto any other.

    Raises:
        ValueError: there is no checkpoint (at ``step``), or its shapes do not fit
            ``abstract_state``; :class:`UnusableCheckpointError`: it is unreadable (truncated or
            emptied files, a missing item) or its parameters are not finite.
    """
    target = with_shardings(abstract_state, shardings)
    return _restore_step(mngr, target, check_step(mngr, step))


def restore_good(
    mngr,
    abstract_state: dict,
    *,
    accept: Callable[[dict], str | None] | None = None,
    action: str = "using",
    quiet: bool = False,
    shardings=None,
) -> tuple[dict, list[int]]:
    """The newest good checkpoint: readable, finite parameters, and accepted by ``accept``.

    Checkpoints are tried newest first; each one passed over is named in one warning line
    (``checkpoint step 40 in runs/x is unreadable (truncated data: ...); resuming from step
    30`` for ``action="resuming from"``).

    Args:
        mngr: the run's checkpoint manager.
        abstract_state: the structure to restore into.
        accept: ``accept(state)`` returns ``None`` for a good state, or why it is not (a
            predicate such as ``"has a non-finite held-out loss (nan)"``).
        action: what the caller does with the checkpoint found, for the warning.
        quiet: no warning (the caller reports the steps passed over itself).
        shardings: where to restore to (see :func:`with_shardings`).

    Returns:
        ``(state, passed_over)``: the restored state and the steps passed over (all newer).

    Raises:
        ValueError: no checkpoint at all, none usable, or one that does not fit the model.
    """
    passed: list[tuple[int, str]] = []
    target = with_shardings(abstract_state, shardings)
    for step in sorted(mngr.all_steps(), reverse=True):
        try:
            state = _restore_step(mngr, target, step)
            reason = accept(state) if accept is not None else None
        except UnusableCheckpointError as e:
            reason = e.reason
        if reason is None:
            if passed and not quiet:
                warn(f"{_passed_over(mngr, passed)}; {action} step {step}")
            return state, [s for s, _ in passed]
        passed.append((step, reason))
    if not passed:
        raise ValueError(f"checkpoint: no checkpoint in {_run_dir(mngr)}")
    raise ValueError(f"{_passed_over(mngr, passed)}: no usable checkpoint left")


def _passed_over(mngr, passed: list[tuple[int, str]]) -> str:
    """``checkpoint step 6 in runs/x is unreadable (...); step 4 has non-finite parameters``."""
    (step, reason), rest = passed[0], passed[1:]
    return "; ".join(
        [f"checkpoint step {step} in {_run_dir(mngr)} {reason}"]
        + [f"step {s} {r}" for s, r in rest]
    )


def _restore_step(mngr, abstract_state: dict, step: int) -> dict:
    """Restore checkpoint ``step``, checking its files before and its parameters after."""
    import orbax.checkpoint as ocp

    run, step_dir = _run_dir(mngr), Path(mngr.directory) / str(step)
    damage = _damaged_files(step_dir)
    if damage:
        raise UnusableCheckpointError(run, step, f"is unreadable ({damage})")
    _check_shapes(step_dir / "default", abstract_state, step)
    try:
        state = mngr.restore(step, args=ocp.args.StandardRestore(abstract_state))
    except Exception as e:  # tensorstore raises bare Exception on bad data
        raise UnusableCheckpointError(run, step, f"is unreadable ({_read_error(e)})") from None
    if not params_finite(state["params"]):
        raise UnusableCheckpointError(run, step, "has non-finite parameters")
    return state


def _damaged_files(step_dir: Path) -> str | None:
    """What is missing or empty among a checkpoint's files, before orbax reads them."""
    item = step_dir / "default"
    if not item.is_dir():
        return "no default/ directory"
    meta = item / "_METADATA"
    if not meta.is_file():
        return "no default/_METADATA"
    try:
        parse_json(meta.read_text(), str(meta))
    except ValueError:  # not UTF-8, not JSON, nested too deeply
        empty = meta.stat().st_size == 0
        return "default/_METADATA is " + ("empty" if empty else "not valid JSON")
    for manifest in sorted(item.rglob("manifest.ocdbt")):
        if manifest.stat().st_size == 0:
            return f"{manifest.relative_to(step_dir)} is empty"
    return None


def _read_error(exc: BaseException) -> str:
    """A short reason for an orbax / tensorstore read failure (its cause chain searched)."""
    texts, e = [], exc
    while e is not None and len(texts) < 8:
        texts.append(str(e))
        e = e.__cause__ or e.__context__
    text = "\n".join(texts)
    where = re.search(r'Error reading "([^"/]+)', text)
    array = f": {where.group(1)}" if where else ""
    for code, what in (
        ("OUT_OF_RANGE", "truncated data"),
        ("DATA_LOSS", "damaged data"),
        ("NOT_FOUND", "missing data"),
    ):
        if code in text:
            return what + array
    first = texts[0].strip().splitlines()[0] if texts[0].strip() else type(exc).__name__
    return first[:120]


def params_finite(params) -> bool:
    """Whether every parameter is finite (no NaN or infinity).

    One reduction on the parameters' devices, so every process of a multi-process run gets
    the same answer, also for parameters split over several processes.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    leaves = jax.tree_util.tree_leaves(params)
    if not leaves:
        return True
    ok = jax.jit(lambda xs: jnp.all(jnp.stack([jnp.isfinite(x).all() for x in xs])))(leaves)
    return bool(np.asarray(ok.addressable_data(0)))


def _shapes(tree) -> dict[str, tuple]:
    import jax

    return {
        "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path): tuple(leaf.shape)
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
    }


def _check_shapes(item_dir: Path, abstract_state: dict, step: int) -> None:
    """Compare a checkpoint's parameter shapes with the model's before restoring anything.

    (Orbax's own failure on a mismatch leaves pending coroutines behind; this check gives a
    clear message instead.)
    """
    import logging

    import orbax.checkpoint as ocp

    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # orbax warns that this step has no separate metadata file
    try:
        meta = ocp.StandardCheckpointer().metadata(item_dir)
    except (OSError, ValueError):
        return  # let restore report it
    finally:
        absl.setLevel(level)
    tree = getattr(meta, "item_metadata", meta)
    if not isinstance(tree, dict) and hasattr(tree, "tree"):
        tree = tree.tree
    try:
        saved = _shapes(tree["params"])
    except (KeyError, TypeError):
        return
    want = _shapes(abstract_state["params"])
    for name in sorted(set(saved) | set(want)):
        if saved.get(name) != want.get(name):
            raise ValueError(
                f"checkpoint: step {step} in {item_dir.parent.parent} does not fit this model "
                f"(parameter {name}: saved {saved.get(name)}, model {want.get(name)})"
            )


@dataclasses.dataclass
class GoodCheckpoint:
    """The last checkpoint known to be good, and the newest one not yet confirmed.

    A checkpoint is good when its parameters are finite (the step that produced them says so)
    and a loss computed from them is finite: the held-out loss evaluated at its step, else the
    training loss of the next step. Until then it is ``pending``; a run that stops on a
    non-finite value deletes it, so the last checkpoint left is the good one it reports.
    """

    out: Path
    last: int | None = None
    pending: int | None = None

    def stop(self, what: str):
        """The :class:`NonFiniteLossError` for ``what`` went non-finite, naming the last good."""
        from lshsim.t5 import NonFiniteLossError

        where = f"step {self.last}" if self.last is not None else "none"
        return NonFiniteLossError(f"{what}; last good checkpoint: {where} in {self.out}")

    def check(self, step: int, metrics: dict) -> None:
        """Check step ``step``'s fetched metrics: its loss, then its updated parameters.

        A finite loss confirms the pending checkpoint (the parameters it was computed from).

        Raises:
            NonFiniteLossError: the loss or the updated parameters are NaN or infinite.
        """
        if not bool(metrics["finite"]):
            raise self.stop(f"loss: non-finite ({float(metrics['loss'])}) at step {step}")
        self.confirm()
        if not bool(metrics["params_finite"]):
            raise self.stop(
                f"parameters: non-finite after step {step} (its loss "
                f"{float(metrics['loss']):.4g} was finite)"
            )

    def confirm(self) -> None:
        """The pending checkpoint is good (a loss computed from its parameters was finite)."""
        if self.pending is not None:
            self.last, self.pending = self.pending, None

    def saved(self, step: int, confirmed: bool) -> None:
        """Checkpoint ``step`` was written (``confirmed``: its held-out loss was finite)."""
        self.confirm()
        if confirmed:
            self.last = step
        else:
            self.pending = step

    def discard(self, mngr) -> None:
        """Delete the pending checkpoint (after a non-finite value: it is not good).

        Every process calls it (see :func:`delete`).
        """
        if self.pending is not None:
            delete(mngr, self.pending)
        self.pending = None


def read_metrics(out: Path, *, torn_last_line: bool = False) -> list[dict]:
    """All records of ``out/metrics.jsonl`` (empty if there is none).

    Args:
        out: the run directory.
        torn_last_line: drop an unreadable last line with a warning instead of failing: what a
            run killed in the middle of appending a record leaves (``--resume`` drops it; it
            always comes after the latest checkpoint, whose records are written before it).

    Raises:
        ValueError: a line that is not a JSON object with an integer ``step`` (naming the file
            and the line number).
    """
    path = Path(out) / METRICS_FILE
    if not path.is_file():
        return []
    lines = path.read_text(errors="replace").splitlines()
    last = max((n for n, line in enumerate(lines, 1) if line.strip()), default=0)
    records = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, METRICS_FILE)
            step = record.get("step") if isinstance(record, dict) else None
            if isinstance(step, bool) or not isinstance(step, int):
                raise ValueError
        except ValueError:
            where = f"{METRICS_FILE} line {n} in {Path(out)}"
            if torn_last_line and n == last:
                warn(f"{where} is not valid JSON (a torn record of a killed run); dropped it")
                continue
            raise ValueError(f"metrics: {where} is not a valid JSON record") from None
        records.append(record)
    return records


def truncate_metrics(out: Path, step: int) -> None:
    """Drop metric records after ``step`` (used when resuming from checkpoint ``step``)."""
    keep = [r for r in read_metrics(out, torn_last_line=True) if r["step"] <= step]
    write_atomic(Path(out) / METRICS_FILE, "".join(json.dumps(r) + "\n" for r in keep))


def saved_steps(out: Path) -> list[int]:
    """The steps of the finished checkpoints in ``out/checkpoints``, read from folder names.

    Orbax saves a checkpoint under a temporary name and renames it to its step when the save
    is complete, so a folder named by a number is a finished save. Nothing is imported (no
    orbax): a command's checks use it before any work.

    Args:
        out: a run folder (it need not exist).

    Returns:
        The steps, ascending (empty: no checkpoint).
    """
    folder = Path(out) / CHECKPOINT_DIR
    if not folder.is_dir():
        return []
    names = [p.name for p in folder.iterdir() if p.is_dir()]
    return sorted(int(n) for n in names if re.fullmatch(r"[0-9]+", n))


def holds_run(out: Path) -> bool:
    """Whether ``out`` holds a started run: its ``run.json`` and a first checkpoint.

    A run folder is complete or absent. ``train`` and ``finetune`` write ``run.json`` and
    ``spm.model`` when they start and the first checkpoint some steps later; a folder with
    ``run.json`` but no checkpoint is a start that was cut short (killed, or refused after
    writing by an older lshsim), which a new run into the folder overwrites.

    Args:
        out: a run folder (it need not exist).

    Returns:
        ``True`` when it holds ``run.json`` and at least one finished checkpoint.
    """
    return (Path(out) / RUN_FILE).is_file() and bool(saved_steps(out))
