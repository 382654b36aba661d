"""Checks of the model commands' options, in the CLI's spelling, before any work.

Only an omitted option takes its default (the parsers' defaults are ``None``): a given value
out of range is an error naming the option and the range (:func:`check_ranges`), never "the
default"; an option that has no effect in the given combination is an error naming both
(:func:`check_effective`); an output or run folder that cannot be what the command needs is
an error before anything is computed (:func:`check_run_dir`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lshsim._io import check_output_dir
from lshsim._validate import check_int
from lshsim.t5.lookups import LOOKUPS
from lshsim.t5.memory_methods import METHODS

#: The ranges of the options that the library does not check itself, or reads 0 as "the
#: default" for: argparse dest -> ``(lo, hi)`` (``hi`` ``None``: no upper bound). The library
#: checks the others (``--steps``, ``--batch``, ``--lr``, ``--blocks``, ...) before any work, with
#: its own one-line messages.
TRAIN_RANGES = {
    "eval_every": (1, None),
    "checkpoint_every": (1, None),
    "keep_checkpoints": (2, None),
    "init_timeout": (1, 7 * 86400),  # a week; JAX's client overflows on 10^12 s
    "devices": (1, None),  # the devices there are: checked when JAX starts
}
#: ``eval`` and ``probe``: a checkpoint step.
STEP_RANGES = {"step": (0, None)}
#: The memory flags whose 0 the config reads as "the default"; a lookup's bucket index is an
#: int32 (a larger table cannot be addressed).
MEMORY_RANGES = {"extra": (1, None), "buckets": (1, 2**31 - 1)}
#: The commands that trace the model (``plan``, ``cost``): one traced block per wide-embedding
#: block, so K = 256 takes about 20 s to compile and 10^5 never ends.
TRACE_RANGES = {"K": (1, 256)}


def _needs(field: str, registry: dict) -> tuple:
    """``((flag,), field, names)`` per flag of the registry's items: the items that it tunes."""
    flags = dict.fromkeys(f for item in registry.values() for f in item.flags)
    return tuple(
        ((f,), field, tuple(name for name, item in registry.items() if f in item.flags))
        for f in flags
    )


#: Options that need a memory method / a K-block wide one / a lookup / a given lookup, from
#: each method's and lookup's ``flags`` (:mod:`lshsim.t5.memory_methods`, :mod:`lshsim.t5.lookups`).
NEEDS = (*_needs("memory", METHODS), *_needs("lookup", LOOKUPS))


def flag(dest: str) -> str:
    """The command-line spelling of a ``dest``: ``input_length`` -> ``--input-length``."""
    from lshsim.cli.vocabulary import DEST_FLAGS

    return DEST_FLAGS.get(dest, "--" + dest.replace("_", "-"))


def default_dtype(backend: str) -> str:
    """The compute dtype a model command uses when ``--dtype`` is not given.

    Args:
        backend: JAX's platform name (``cpu``, ``gpu``, ``cuda``, ``rocm``, ``tpu``).

    Returns:
        ``float32`` on CPU, ``bfloat16`` on an accelerator (``train`` and ``plan`` alike).
    """
    return "float32" if backend == "cpu" else "bfloat16"


def check_micro_batch(batch: int, accumulate: int, data: int, option: str = "mesh") -> None:
    """Refuse a micro-batch that the ``data`` axis cannot split (``train`` and ``plan`` alike).

    Args:
        batch: examples per step.
        accumulate: micro-batches per step (divides ``batch``).
        data: devices along the mesh's ``data`` axis.
        option: the option that set ``data`` (``mesh``, or ``--devices``), named first.

    Raises:
        ValueError: ``mesh: data=2 must divide the micro-batch (batch / accumulate = 1)``.
    """
    if (batch // accumulate) % data:
        given = f"data={data}" if option == "mesh" else f"{data} devices (the data axis)"
        raise ValueError(
            f"{option}: {given} must divide the micro-batch (batch / accumulate = "
            f"{batch // accumulate})"
        )


def check_ranges(args: argparse.Namespace, ranges: dict[str, tuple[int, int | None]]) -> None:
    """Check the given integer options of ``ranges`` (argparse dest -> ``(lo, hi)``).

    Args:
        args: parsed arguments; an option absent from the command or not given (``None``)
            passes.
        ranges: e.g. :data:`TRAIN_RANGES`.

    Raises:
        ValueError: one line naming the first option out of range (``--eval-every must be an
            integer >= 1, got 0``).
    """
    for dest, (lo, hi) in ranges.items():
        value = getattr(args, dest, None)
        if value is not None:
            check_int(flag(dest), value, lo, hi)


def check_effective(args: argparse.Namespace, memory: str, lookup: str) -> None:
    """Refuse a given memory or lookup option that the model would ignore.

    Args:
        args: parsed arguments with the :func:`~lshsim.cli.model_flags.add_memory_flags` flags.
        memory: the model's memory method (``--memory``, else the config's).
        lookup: the model's lookup (``--lookup``, else the config's).

    Raises:
        ValueError: one line naming the option and what it needs, e.g. ``--blocks has no effect
            without --memory sum|sameup|altup``.
    """
    chosen = {"memory": memory, "lookup": lookup}
    for dests, field, allowed in NEEDS:
        if chosen[field] in allowed:
            continue
        for dest in dests:
            if getattr(args, dest, None) is not None:
                raise ValueError(
                    f"{flag(dest)} has no effect without --{field} {'|'.join(allowed)}"
                )


def check_run_dir(path: str, option: str) -> Path:
    """Check that ``path`` is an existing folder (a run to read or to ``--resume``).

    Args:
        path: the folder given on the command line.
        option: its option (``--checkpoint``, ``--out``), named in the message.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: one line naming ``option``: ``path`` does not exist or is not a folder.
    """
    run = Path(path)
    if not run.exists():
        raise ValueError(f"{option}: {run} does not exist (expected a `lshsim train` run folder)")
    if not run.is_dir():
        raise ValueError(f"{option}: {run} is a file, not a `lshsim train` run folder")
    return run


def routed_experts(config) -> bool:
    """Whether ``config`` has the rank-r experts of a routed lookup (what ``--expert-impl`` sets).

    Args:
        config: a :class:`~lshsim.t5.configs.T5Config`.

    Returns:
        True for ``--lookup tokenid|softmax|lsh`` (a routed lookup) with ``--rank r >= 1``.
    """
    from lshsim.t5.lookups.routed import RoutedLookup

    return isinstance(LOOKUPS.get(config.lookup), RoutedLookup) and config.expert_rank > 0


def check_eval_run(args: argparse.Namespace) -> None:
    """``eval --run``: a pretraining run, and ``--expert-impl`` only where it changes something.

    Args:
        args: ``eval``'s arguments (``run``, ``expert_impl``), the folder already checked.

    Raises:
        ValueError: one line: not a run folder, a fine-tuning run (its held-out data is its
            pretrained run's), or ``--expert-impl`` on a model without the rank-r experts of
            a routed lookup (``--lookup tokenid|softmax|lsh --rank r``), which it would ignore.
    """
    from lshsim.t5.checkpoint import read_pretraining_run

    config, _ = read_pretraining_run(Path(args.run), "eval")
    if getattr(args, "expert_impl", None) is not None and not routed_experts(config):
        raise ValueError(
            f"--expert-impl has no effect: the run in {args.run} has no rank-r experts "
            f"(lookup {config.lookup}, rank {config.expert_rank})"
        )


def check_train_out(args: argparse.Namespace) -> Path:
    """Check ``train --out``: a run folder to continue (``--resume``) or one it can create.

    Raises:
        ValueError: one line naming ``--out``.
    """
    if args.resume:
        check_run_dir(args.out, "--out")
    return check_output_dir(args.out, "--out")


#: Figure formats ``--figure`` takes, by suffix.
FIGURE_FORMATS = (".png", ".svg", ".pdf")


def check_figure(path: str | None) -> Path | None:
    """``--figure FILE``: a known suffix in an existing folder (checked before any work)."""
    if path is None:
        return None
    out = Path(path)
    if out.suffix.lower() not in FIGURE_FORMATS:
        raise ValueError(f"--figure must end in {', '.join(FIGURE_FORMATS)}, got {path!r}")
    if not out.parent.is_dir():
        raise ValueError(f"--figure: folder {out.parent} does not exist")
    return out
