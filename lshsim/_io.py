"""Atomic file writes: a reader never sees a half-written file, and a crash leaves none.

And the other side: :func:`read_json` reads a JSON file whose every failure (a missing or
unreadable file, bytes that are not UTF-8, truncated or damaged JSON, nesting too deep, a
repeated key, numbers refused) is one ``ValueError`` line naming the file, and
:func:`json_field` checks a field's type the same way. Derived files that are worth keeping
between runs live under :func:`default_cache_dir`.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import stat
import sys
from pathlib import Path


def _open_temporary(path: Path) -> tuple[int, Path]:
    """Create a fresh temporary file beside ``path``; return its descriptor and name.

    The file is opened with mode ``0o666``, so the kernel applies the process's umask (and a
    folder's default ACL) exactly as for a plain ``open(path, "w")``: ``0o644`` under umask
    022. The umask is never read or changed, so this is thread-safe. A file replacing an
    existing ``path`` keeps that file's permission bits, as ``open`` does.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue
        break
    try:
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
    except FileNotFoundError:
        pass
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    return fd, tmp


def default_cache_dir() -> Path:
    """The folder of lshsim's cached derived files (trained tokenizers, the embedded corpus).

    Returns:
        ``$LSHSIM_CACHE`` if set, else ``~/.cache/lshsim`` (created by the first write).
    """
    env = os.environ.get("LSHSIM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "lshsim"


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename.

    The parent folder is created. Text is written as UTF-8. A new file gets the mode a plain
    ``open(path, "w")`` would give it (``0o666`` less the umask: ``0o644`` under umask 022);
    a replaced file keeps its mode. On any error the temporary file is removed and ``path`` is
    untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = _open_temporary(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def check_output_dir(path: str | Path, option: str = "--out") -> Path:
    """Check, before any work, that ``path`` is a folder this process can create or write into.

    Nothing is created. Call it at the start of a command that writes into ``path``, so a bad
    output path fails in a second with one line instead of after the computation.

    Args:
        path: the output folder (it may not exist yet).
        option: how the caller names the parameter in the message (e.g. ``--out``).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: one line naming ``option``: ``path`` is empty or blank, an existing file,
            lies under a file, or neither it nor its nearest existing parent folder is writable.
    """
    if not str(path).strip():
        raise ValueError(f"{option}: {str(path)!r} is no folder name")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option}: {path} is an existing file, not a folder")
    ancestor = path
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"{option}: {path} lies under {ancestor}, which is a file")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ValueError(f"{option}: {ancestor} is not writable")
    return path


#: What :func:`json_type` calls each JSON value.
_JSON_TYPES = (
    (bool, "a boolean"),
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "an object"),
)


def json_type(value: object) -> str:
    """What a parsed JSON value is, for a message: ``null``, ``a list``, ``an object``, ...

    Args:
        value: a value :func:`json.loads` returned (or part of one).

    Returns:
        ``null``, ``a boolean``, ``an integer``, ``a number``, ``a string``, ``a list`` or
        ``an object`` (``a <type name>`` for anything else).
    """
    if value is None:
        return "null"
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"


class _Refused(ValueError):
    """Raised inside :func:`parse_json`'s hooks: the text is JSON, but not JSON we take."""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    """``object_pairs_hook``: an object that repeats a key is refused (which one would win?)."""
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(f"the key {key!r:.60} appears twice in one object")
    return doc


def parse_json(
    text: str, where: str, *, finite: bool = False, max_digits: int | None = None
) -> object:
    """Parse JSON text; every way it can fail is a one-line ``ValueError`` naming ``where``.

    Refused beyond what :func:`json.loads` refuses: an object that repeats a key, nesting
    too deep for the parser, an integer of more than ``max_digits`` digits and, with
    ``finite``, ``NaN``, ``Infinity`` and numbers too large for a float.

    Args:
        text: the JSON text.
        where: what the message names first: the file, or the file and its line.
        finite: refuse non-finite numbers.
        max_digits: refuse integers longer than this (``None``: Python's own limit).

    Returns:
        The parsed value.

    Raises:
        ValueError: ``<where>: not valid JSON, truncated or damaged (<why>: line L column
            C)``, ``<where>: nested too deeply``, ``<where>: the key 'k' appears twice ...``.
    """

    def parse_int(digits: str) -> int:
        if max_digits is not None and len(digits.lstrip("-")) > max_digits:
            n = len(digits.lstrip("-"))
            raise _Refused(f"an integer of {n} digits (over {max_digits}: no float holds it)")
        return int(digits)

    def parse_float(number: str) -> float:
        value = float(number)
        if not math.isfinite(value):
            raise _Refused(f"the number {number:.40} is too large for a float")
        return value

    def parse_constant(name: str) -> float:
        raise _Refused(f"{name} is not a number JSON allows")

    hooks: dict = {"parse_constant": parse_constant, "parse_float": parse_float} if finite else {}
    if max_digits is not None:
        hooks["parse_int"] = parse_int
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, **hooks)
    except json.JSONDecodeError as exc:
        why = f"{exc.msg}: line {exc.lineno} column {exc.colno}"
        raise ValueError(f"{where}: not valid JSON, truncated or damaged ({why})") from None
    except RecursionError:
        raise ValueError(f"{where}: nested too deeply to be one of lshsim's files") from None
    except ValueError as exc:  # ours, or Python's limit on an integer's digits
        raise ValueError(f"{where}: {' '.join(str(exc).split())}") from None


def read_json(
    path: str | Path,
    *,
    where: str | None = None,
    expect: type | None = dict,
    finite: bool = False,
    max_digits: int | None = None,
) -> object:
    """Read a JSON file; every way it can fail is a one-line ``ValueError`` naming the file.

    The file must be UTF-8 (no byte-order mark) and hold one JSON value (of type ``expect``),
    parsed as by :func:`parse_json`.

    Args:
        path: the file.
        where: how messages name the file (default: its path), e.g. ``checkpoint: PATH``.
        expect: the type of the top-level value (``dict``: an object; ``None``: any).
        finite: refuse ``NaN``, ``Infinity`` and numbers too large for a float.
        max_digits: refuse integers longer than this.

    Returns:
        The parsed value.

    Raises:
        ValueError: ``WHERE: why``: no such file, a folder, unreadable, not UTF-8
            text, not valid JSON (truncated), nested too deeply, a repeated key, a number
            refused, or not ``expect``.
    """
    path = Path(path)
    where = str(path) if where is None else where
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ValueError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{where}: a folder, not a file") from None
    except OSError as exc:
        raise ValueError(f"{where}: unreadable ({exc.strerror or type(exc).__name__})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{where}: not UTF-8 text (byte {raw[exc.start]:#04x} at offset {exc.start})"
        ) from None
    doc = parse_json(text, where, finite=finite, max_digits=max_digits)
    if expect is not None and not isinstance(doc, expect):
        want = json_type(expect())
        raise ValueError(f"{where}: holds {json_type(doc)}, not {want}")
    return doc


def json_field(doc: dict, key: str, kind: str, where: str, *, optional: bool = False):
    """``doc[key]``, checked to be of the JSON ``kind``; else a one-line ``ValueError``.

    Args:
        doc: a parsed JSON object.
        key: the field.
        kind: ``object``, ``list``, ``string``, ``integer`` (a boolean is not one),
            ``number`` (an integer or float a float64 holds finite; not a boolean) or
            ``boolean``.
        where: what the message names first (the file, and where in it ``doc`` is).
        optional: a missing field or ``null`` is ``None`` instead of an error.

    Returns:
        The value.

    Raises:
        ValueError: ``<where>: field 'key' is missing`` or ``... must be a string, got a list``.
    """
    value = doc.get(key)
    if value is None:
        if optional:
            return None
        missing = key not in doc
        raise ValueError(f"{where}: field {key!r} " + ("is missing" if missing else "is null"))
    number = isinstance(value, int | float) and not isinstance(value, bool)
    ok = {
        "object": lambda: isinstance(value, dict),
        "list": lambda: isinstance(value, list),
        "string": lambda: isinstance(value, str),
        "integer": lambda: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda: number and abs(value) <= sys.float_info.max,  # finite, as a float
        "boolean": lambda: isinstance(value, bool),
    }[kind]()
    if not ok:
        article = "an" if kind[0] in "aeiou" else "a"
        got = json_type(value)
        if number and not abs(value) <= sys.float_info.max:
            got = repr(value) if isinstance(value, float) else "an integer no float holds"
        raise ValueError(f"{where}: field {key!r} must be {article} {kind}, got {got}")
    return value
