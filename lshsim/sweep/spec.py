"""A sweep's SPEC: reading it (TOML or JSON), checking it, and its canonical form and hash.

A SPEC is ``{"seed": s, "grids": [{"command": "simulate" | "theory", OPTION: [values], ...}]}``.
The options of a command are those of its CLI parser (:func:`lshsim.cli.simulate.add_parsers`),
spelled without dashes, with the parser's types and choices: nothing here lists them, so the
sweep follows the CLI. Three options are not sweep axes: ``seed`` (each cell's seed derives
from the sweep's, :mod:`lshsim.sweep.cells`), ``threads`` (the numbers do not depend on it) and
``json`` (output only).

The canonical spec (:func:`canonical`) has every value converted to its option's type, so a
reformatted file (TOML or JSON, ``1`` or ``1.0`` for a float option) is the same sweep; its
SHA-256 (:func:`spec_hash`) is what ``--resume`` compares.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lshsim._validate import NOT_NUMBERS, check_int

#: The commands a grid may run (each has a runner in :mod:`lshsim.sweep.runner`).
COMMANDS = ("simulate", "theory")
#: CLI options that are not sweep axes, and why.
NOT_AXES = {
    "seed": "each cell's seed derives from the top-level seed and the cell's options",
    "threads": "the numbers do not depend on it",
    "json": "it only changes the command's output",
    "topk": "a different quantity (the top-k overlap); not a sweep axis yet",
    "half_cosines": "product keys at two half-cosines; not a sweep axis yet",
    "far": "rho_lsh and amplification are not sweep results yet",
    "tables": "rho_lsh and amplification are not sweep results yet",
    "concat": "rho_lsh and amplification are not sweep results yet",
}
#: Options the CLI accepts only with ``--overlap`` (with ``--cosine`` they have no effect).
SENTENCE_ONLY = {"simulate": ("length", "vocab"), "theory": ("dim", "length", "vocab", "cosines")}


@dataclass(frozen=True)
class Option:
    """One option of a command, read from its CLI parser.

    Attributes:
        name: the option as the CLI spells it without dashes (the parser's ``dest``).
        kind: ``"int"``, ``"float"`` or ``"str"``.
        choices: the allowed values, or None for any value of the kind.
        default: the CLI's default (None where the library's applies).
        required: whether every cell must give it.
    """

    name: str
    kind: str
    choices: tuple[str, ...] | None
    default: Any
    required: bool


@dataclass(frozen=True)
class Command:
    """A command's sweep options and its groups of which exactly one must be given."""

    name: str
    options: dict[str, Option]
    one_of: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Spec:
    """A checked SPEC in canonical form.

    Attributes:
        seed: the sweep's seed, an int >= 0.
        grids: each grid as ``{"command": name, option: [values], ...}`` (values converted to
            the option's type, options in the command parser's order).
    """

    seed: int
    grids: tuple[dict, ...]

    def canonical(self) -> dict:
        """The JSON-ready canonical spec (what ``_sweep.json`` stores)."""
        return {"seed": self.seed, "grids": [dict(g) for g in self.grids]}

    def sha256(self) -> str:
        """The SHA-256 of the canonical spec (sorted keys, compact JSON)."""
        return spec_hash(self.canonical())


def spec_hash(canonical: Mapping) -> str:
    """The SHA-256 hex digest of a canonical spec's compact, key-sorted JSON.

    Args:
        canonical: :meth:`Spec.canonical`'s dict.

    Returns:
        64 hex digits.
    """
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def commands() -> dict[str, Command]:
    """Every sweepable command's options, read from the CLI parsers of ``simulate``/``theory``.

    Read again whenever the family registry changes (a registered family brings options).

    Returns:
        Command name -> :class:`Command`.
    """
    from lshsim.hashing import FAMILIES

    return _commands(tuple(FAMILIES.items()))


@functools.cache
def _commands(_families: tuple) -> dict[str, Command]:
    from lshsim.cli.simulate import add_parsers

    root = argparse.ArgumentParser(add_help=False)
    sub = root.add_subparsers(dest="command")
    add_parsers(sub)
    out = {}
    for name in COMMANDS:
        parser = sub.choices[name]
        options = {}
        # argparse keeps a parser's actions and groups in these (long-stable) attributes
        for action in parser._actions:
            if action.dest in NOT_AXES or not action.option_strings or action.nargs == 0:
                continue  # help, flags without a value, and the non-axes
            kind = {int: "int", float: "float"}.get(action.type, "str")
            choices = tuple(action.choices) if action.choices is not None else None
            options[action.dest] = Option(
                action.dest, kind, choices, action.default, bool(action.required)
            )
        groups = tuple(  # a non-axis (theory's --half-cosines) is never one of a cell's
            tuple(a.dest for a in g._group_actions if a.dest not in NOT_AXES)
            for g in parser._mutually_exclusive_groups
            if g.required
        )
        out[name] = Command(name, options, groups)
    return out


def load_spec(path: str | Path, seed: int | None = None) -> Spec:
    """Read and check a SPEC file (``.toml`` or ``.json``, UTF-8 with or without a BOM).

    Args:
        path: the SPEC file.
        seed: the sweep's seed (``lshsim sweep --seed``), in place of the file's ``seed``.

    Returns:
        The checked :class:`Spec`.

    Raises:
        ValueError: one line naming the file and the problem: not a readable regular file,
            not UTF-8, bad syntax, a key given twice, an unknown key, command or option, a
            value of the wrong type or outside the option's choices, an empty axis, a missing
            required option.
    """
    path = Path(path)
    if path.suffix not in (".toml", ".json"):
        raise ValueError(f"SPEC: {path} must end in .toml or .json")
    if path.exists() and not path.is_file():  # a folder, or a FIFO that would block a read
        raise ValueError(f"SPEC: {path} is not a regular file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ValueError(f"SPEC: cannot read {path} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"SPEC: {path} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    try:
        raw = _parse_json(path, text) if path.suffix == ".json" else _parse_toml(path, text)
    except RecursionError:
        raise ValueError(f"SPEC: {path} is nested too deeply to be a spec") from None
    if seed is not None and isinstance(raw, Mapping):
        raw = {**raw, "seed": check_int("--seed", seed, 0)}
    try:
        return parse_spec(raw)
    except ValueError as exc:
        raise ValueError(in_spec_file(path, str(exc))) from None


def in_spec_file(path: str | Path, message: str) -> str:
    """A message about a SPEC, with its file named: ``SPEC <path>: <what>``.

    Args:
        path: the SPEC file.
        message: the message of :func:`parse_spec` (or of a cell of the spec), which names
            the field but not the file.

    Returns:
        One line naming the file, then the field and the problem.
    """
    for prefix in ("SPEC: ", "SPEC "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
            break
    return f"SPEC {path}: {message}"


def _parse_json(path: Path, text: str) -> Any:
    """Parse JSON, refusing a key given twice; every error is one line naming ``path``."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"SPEC: {path} is not valid JSON ({exc})") from None
    except ValueError as exc:  # a key given twice; an integer of more than 4300 digits
        raise ValueError(in_spec_file(path, _parse_error(exc))) from None


def _parse_error(exc: ValueError) -> str:
    """The message of a parser's ``ValueError`` that is not a syntax error."""
    if "integer string conversion" in str(exc):
        return "an integer has more digits than Python reads (4300); not a spec's value"
    return str(exc)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's dict, refusing a key given twice (TOML refuses it too)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {shown(key)} is given twice in one table")
        out[key] = value
    return out


def _parse_toml(path: Path, text: str) -> Any:
    """Parse TOML with ``tomllib`` (Python 3.11+) or ``tomli``; errors are one line."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib
        except ModuleNotFoundError:
            raise ValueError(
                "SPEC: TOML needs Python 3.11 or the tomli package (pip install tomli); "
                "or write the spec as JSON"
            ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"SPEC: {path} is not valid TOML ({exc})") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ValueError(in_spec_file(path, _parse_error(exc))) from None


def parse_spec(raw: Any) -> Spec:
    """Check a SPEC given as plain data (a parsed TOML or JSON document).

    Args:
        raw: ``{"seed": s, "grids": [...]}``; ``seed`` defaults to 0.

    Returns:
        The checked :class:`Spec` in canonical form.

    Raises:
        ValueError: one line naming the problem (see :func:`load_spec`).
    """
    if not isinstance(raw, Mapping):
        raise ValueError("SPEC: expected a table with 'seed' and 'grids'")
    unknown = sorted(set(raw) - {"seed", "grids"})
    if unknown:
        raise ValueError(f"SPEC: unknown key {shown(unknown[0])}; a spec has 'seed' and 'grids'")
    seed = check_int("SPEC seed", raw.get("seed", 0), 0)
    grids = raw.get("grids")
    if not isinstance(grids, list) or not grids:
        raise ValueError("SPEC: 'grids' must be a non-empty list of tables")
    return Spec(seed, tuple(_check_grid(i, g) for i, g in enumerate(grids)))


def _check_grid(i: int, grid: Any) -> dict:
    """Check grid ``i``; return it with typed values in the parser's option order."""
    where = f"grids[{i}]"
    if not isinstance(grid, Mapping):
        raise ValueError(f"{where}: expected a table of options")
    command = grid.get("command")
    if command not in COMMANDS:
        raise ValueError(
            f"{where}: command must be one of {', '.join(COMMANDS)}, got {shown(command)}"
        )
    cmd = commands()[command]
    where = f"{where} ({command})"
    for name in grid:
        if name == "command":
            continue
        if name in NOT_AXES:
            raise ValueError(f"{where}: {name!r} is not a sweep option: {NOT_AXES[name]}")
        if name not in cmd.options:
            raise ValueError(
                f"{where}: unknown option {shown(name)}; options: {', '.join(cmd.options)}"
            )
    for opt in cmd.options.values():
        if opt.required and opt.name not in grid:
            raise ValueError(f"{where}: option {opt.name!r} is required")
    for group in cmd.one_of:
        given = [g for g in group if g in grid]
        if len(given) != 1:
            got = ", ".join(given) if given else "neither"
            raise ValueError(f"{where}: give exactly one of {', '.join(group)}, got {got}")
    useless = [o for o in SENTENCE_ONLY[command] if o in grid] if "cosine" in grid else []
    if useless:
        raise ValueError(
            f"{where}: option {useless[0]!r} has no effect with cosine; it is a sentence-model "
            "option (use overlap)"
        )
    out: dict[str, Any] = {"command": command}
    for name, opt in cmd.options.items():
        if name in grid:
            out[name] = _check_axis(f"{where}: {name}", opt, grid[name])
    return out


def _check_axis(where: str, opt: Option, values: Any) -> list:
    """An axis as a list of typed values (a single value is a one-value axis)."""
    if not isinstance(values, list):
        values = [values]
    if not values:
        raise ValueError(f"{where}: empty axis; give at least one value")
    out = [check_value(where, opt, v) for v in values]
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated value in {shown(out)}")
    return out


def check_value(where: str, opt: Option, value: Any) -> Any:
    """One value of option ``opt``, converted to its kind, else a one-line ``ValueError``.

    Args:
        where: how the message names the axis.
        opt: the option.
        value: the value as parsed from the spec.

    Returns:
        The value as an ``int``, ``float`` or ``str``.
    """
    if opt.kind == "str":
        if not isinstance(value, str):
            raise ValueError(f"{where} must be text, got {shown(value)}")
    elif isinstance(value, NOT_NUMBERS) or not isinstance(value, int | float):
        raise ValueError(f"{where} must be a number, got {shown(value)}")
    elif opt.kind == "int":
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{where} must be an integer, got {shown(value)}")
        value = int(value)
        if not -(2**63) <= value < 2**63:  # a row stores it as an int64
            raise ValueError(f"{where} must be an integer in [-2^63, 2^63), got {shown(value)}")
    else:
        try:
            value = float(value)
        except OverflowError:  # an integer beyond the largest float
            raise ValueError(f"{where} must be a finite number, got {shown(value)}") from None
    if opt.kind == "float" and not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number, got {shown(value)}")
    if opt.choices is not None and value not in opt.choices:
        raise ValueError(
            f"{where} must be one of {', '.join(map(str, opt.choices))}, got {shown(value)}"
        )
    return value


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters, for a one-line message.

    Args:
        value: a value read from a spec.
        limit: the most characters kept.

    Returns:
        The ``repr`` (one line: ``repr`` escapes newlines), ``...`` where it was cut.
    """
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past 4300 digits; a deep nesting
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
