"""Reading the fine-tuning data files: every failure is one line naming the file and the place.

The task readers (:mod:`lshsim.t5.finetune.tasks`) take their text through these helpers, so
a file that is missing, unreadable, not UTF-8, binary, truncated, not JSON (or JSON nested too
deeply, or with an integer of more digits than Python converts), or that holds a value of the
wrong type anywhere (a list where an object goes, a number where a string goes, a string that
is no Unicode text) is a :class:`ValueError` of one line::

    data: glue/SST-2/train.tsv line 7: unknown label 'great' (expected ...)
    data: SQuAD/dev-v1.1.json data[0].paragraphs[2]: expected an object, got an integer

The ``where`` of a message is the line (JSON lines, TSV) and the path inside the record
(``questions[0].answers[1]``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lshsim._io import json_type

__all__ = [
    "class_id",
    "fail",
    "field",
    "items",
    "place",
    "read_json",
    "read_jsonl",
    "read_lines",
    "read_text",
]


def fail(path: Path, where: str, message: str) -> ValueError:
    """The one-line error ``data: <path><where>: <message>`` (``where`` starts with a space)."""
    return ValueError(f"data: {path}{where}: {message}")


def read_text(path: Path) -> str:
    """The file's text, UTF-8 (a leading byte order mark dropped, as MRPC's files have one).

    Raises:
        ValueError: no such file, unreadable, or not UTF-8 text (binary data included).
    """
    if not path.is_file():
        raise ValueError(f"data: no such file {path}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise fail(path, "", f"cannot read it ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if "\x00" in text:
        raise fail(path, "", "not text (it holds NUL bytes: a binary file?)")
    return text


def read_lines(path: Path) -> list[str]:
    """The file's lines (carriage returns dropped, trailing blank lines removed).

    Raises:
        ValueError: as :func:`read_text`, or the file is empty.
    """
    lines = [ln.rstrip("\r") for ln in read_text(path).split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise fail(path, "", "empty file")
    return lines


def _parse(path: Path, where: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(path, where, f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise fail(path, where, "not JSON this reader takes (nested too deeply)") from None
    except ValueError as exc:  # an integer of more digits than int() converts
        why = " ".join(str(exc).split())[:80]
        raise fail(path, where, f"not JSON this reader takes ({why})") from None


def read_jsonl(path: Path) -> list[tuple[str, dict]]:
    """``(" line N", record)`` for each non-blank line, each a JSON object.

    Raises:
        ValueError: as :func:`read_lines`, a line that is not JSON, or not an object.
    """
    out = []
    for n, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        where = f" line {n}"
        rec = _parse(path, where, line)
        if not isinstance(rec, dict):
            raise fail(path, where, f"expected a JSON object, got {json_type(rec)}")
        out.append((where, rec))
    return out


def read_json(path: Path) -> Any:
    """The file's one JSON document.

    Raises:
        ValueError: as :func:`read_text`, an empty file, or not JSON.
    """
    text = read_text(path)
    if not text.strip():
        raise fail(path, "", "empty file")
    return _parse(path, "", text)


def place(where: str, key: str) -> str:
    """``where`` extended by ``key`` (the place of a nested value, for a message).

    ``""`` -> `` data``, `` line 3`` -> `` line 3 passage``, `` line 3 passage`` ->
    `` line 3 passage.questions``.
    """
    if not where or re.fullmatch(r" line [0-9]+", where):
        return f"{where} {key}"
    return f"{where}.{key}"


def _check_text(path: Path, where: str, key: str, value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise fail(path, where, f"field {key!r} is not Unicode text (a lone surrogate)") from None
    return value


def field(path: Path, where: str, rec: Any, key: str, kind: type | tuple = str) -> Any:
    """``rec[key]``, checked: ``rec`` is an object, the field is there and of type ``kind``.

    Args:
        path: the file (named in an error).
        where: the place of ``rec`` in the file (`` line 3``, `` line 3 passage``).
        rec: the JSON value that should be an object holding ``key``.
        key: the field.
        kind: its type(s); a string must be Unicode text (not a lone surrogate, which JSON
            can escape).

    Returns:
        The value.

    Raises:
        ValueError: one line naming the file, the place and the field.
    """
    if not isinstance(rec, dict):
        raise fail(path, where, f"expected an object with field {key!r}, got {json_type(rec)}")
    if key not in rec:
        raise fail(path, where, f"missing field {key!r}")
    value = rec[key]
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        want = " or ".join(json_type(k()) for k in kinds)
        raise fail(path, where, f"field {key!r} must be {want}, got {json_type(value)}")
    if isinstance(value, str):
        _check_text(path, where, key, value)
    return value


def items(path: Path, where: str, rec: Any, key: str, *, optional: bool = False) -> list:
    """``[(place, item)]`` of the list ``rec[key]`` (``place``: ``where key[i]``).

    Args:
        path: the file.
        where: the place of ``rec``.
        rec: the object holding the list.
        key: the list's field.
        optional: a missing field is an empty list.

    Raises:
        ValueError: ``rec`` is no object, the field is missing (unless ``optional``) or no list.
    """
    if optional and isinstance(rec, dict) and key not in rec:
        return []
    values = field(path, where, rec, key, list)
    inner = place(where, key)
    return [(f"{inner}[{i}]", v) for i, v in enumerate(values)]


def class_id(path: Path, where: str, value: Any, classes: tuple[str, ...]) -> int:
    """A label given as a class id (``0``, ``"1"``, ``True``) or a label word, checked.

    Raises:
        ValueError: any other label (one line naming the file, the place and the label).
    """
    raw = value
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, str) and value in classes:
        return classes.index(value)
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,9}", value.strip()):
        value = int(value.strip())
    if isinstance(value, int) and 0 <= value < len(classes):
        return value
    allowed = ", ".join(classes)
    shown = repr(raw) if len(repr(raw)) <= 60 else repr(raw)[:57] + "..."
    raise fail(path, where, f"unknown label {shown} (expected a class id or one of {allowed})")
