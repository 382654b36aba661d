"""The examples of README.md and docs/: extraction, the manifest, and the output comparison.

An *example* is a fenced block in ``bash``, ``console``, ``sh``, ``shell`` or ``python`` (or an
untagged block whose lines start with ``lshsim`` or ``python``). ``docs/examples.toml`` says how
the tests treat each one, by its id (``FILE::first line``):

- ``run``: every ``lshsim`` command (in process) or the Python code runs as shown; where the
  block shows output, each shown line must match a line of the real output, every number to
  the digits shown (``...`` lines are elisions; keys in ``volatile`` are checked by name only);
  output shown without an elision must be the whole output (a line the command now prints
  that the page lacks fails too).
- ``quick``: run with the documented quick flag in ``quick`` appended or swapped in.
- ``parse``: every ``lshsim`` command's options are parsed by the real parser (an unknown or
  renamed option fails), every ``python experiments/X.py`` command's options are looked up in
  the script's ``--help``, Python code is compiled; ``reason`` says why it does not run.
- ``none``: not lshsim (installs, git, SLURM's own tools); ``reason`` says what it is.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "docs" / "examples.toml"
LANGS = {"bash", "console", "sh", "shell", "python"}
HOWS = {"run", "quick", "parse", "none"}
# docs/cli/ belongs to the CLI vocabulary (tests/cli/test_vocabulary.py checks it); the proofs'
# pages are rendered from proofs/, which hold no commands; the tutorials' code cells run in
# docs/execute.py (their plain fenced blocks are examples here)
EXCLUDED = ("docs/cli/", "docs/_build/", "docs/proofs/")


@dataclass(frozen=True)
class Example:
    """One fenced example block.

    Attributes:
        id: ``FILE::first line`` (``#2``, ``#3`` appended to repeats within a file).
        file: the path relative to the repository.
        line: the block's first line number (1-based).
        lang: the fence's language (``""`` when untagged).
        text: the block's content.
    """

    id: str
    file: str
    line: int
    lang: str
    text: str


def doc_files() -> list[Path]:
    """README.md and the Markdown pages under docs/ that hold examples."""
    files = [ROOT / "README.md"]
    for path in sorted((ROOT / "docs").rglob("*.md")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(EXCLUDED):
            files.append(path)
    return files


def _is_example(lang: str, text: str) -> bool:
    if lang in LANGS:
        return True
    if lang:
        return False
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return any(ln.startswith(("lshsim ", "python ", "$ ")) for ln in lines)


def extract(path: Path) -> list[Example]:
    """The example blocks of one Markdown file, in order."""
    rel = path.relative_to(ROOT).as_posix()
    out: list[Example] = []
    seen: dict[str, int] = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,})\s*([A-Za-z]*)", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
            i += 1
        i += 1
        text = "\n".join(body)
        if lang.startswith("{") or not _is_example(lang, text):
            continue
        first = next((ln.strip() for ln in body if ln.strip()), "")
        first = first.removeprefix("$ ")
        if not first.startswith("#"):
            first = first.split("  #")[0].strip()
        key = f"{rel}::{first}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key += f"#{seen[key]}"
        out.append(Example(key, rel, start + 1, lang, text))
    return out


def all_examples() -> list[Example]:
    """Every example of README.md and docs/."""
    return [ex for path in doc_files() for ex in extract(path)]


def manifest() -> dict[str, dict]:
    """``docs/examples.toml``: example id -> its entry (``how``, ``reason``, ...)."""
    data = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    return {entry["id"]: entry for entry in data["example"]}


# --- commands --------------------------------------------------------------------------------


@dataclass
class Command:
    """One shell command of an example and the output shown after it (console blocks)."""

    argv: list[str]
    shown: list[str]


def commands(ex: Example) -> list[Command]:
    """The shell commands of a bash/console example (continuations joined, comments cut)."""
    out: list[Command] = []
    joined: list[tuple[str, bool]] = []  # (line, is_command)
    pending = ""
    console = ex.lang == "console"
    for raw in ex.text.splitlines():
        line = raw.rstrip()
        if console and not pending and not line.startswith("$ "):
            joined.append((line, False))
            continue
        if console and not pending:
            line = line[2:]
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        joined.append((pending + line, True))
        pending = ""
    for line, is_cmd in joined:
        if not is_cmd:
            if out:
                out[-1].shown.append(line)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            words = shlex.split(stripped, comments=True)
        except ValueError:
            words = stripped.split()
        # split on && and ; (the README's set-up commands chain several)
        cur: list[str] = []
        for w in [*words, "&&"]:
            if w in ("&&", ";", "||"):
                if cur:
                    out.append(Command(cur, []))
                cur = []
            else:
                cur.append(w)
    return out


# --- output comparison -----------------------------------------------------------------------

_NUM = re.compile(r"^([\[\(]?)([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)([\]\),;:%]*)$")


def _num_matches(shown: str, actual: str) -> bool:
    """Whether ``actual`` rounds to ``shown`` at the digits ``shown`` has."""
    try:
        a = float(actual)
    except ValueError:
        return False
    mant, _, exp = shown.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    scale = 10.0 ** (int(exp) if exp else 0)
    tol = 0.5 * 10.0**-decimals * scale
    return abs(a - float(shown)) <= tol * (1 + 1e-9) + 1e-300


def line_matches(shown: str, actual: str, volatile: frozenset[str] = frozenset()) -> bool:
    """Whether an output line shown in the docs matches a real output line.

    Words must be equal, numbers equal to the digits shown; a line whose first word is in
    ``volatile`` (e.g. ``seconds``) matches any numbers.
    """
    s, a = shown.split(), actual.split()
    if len(s) != len(a):
        return False
    wild = bool(s) and s[0] in volatile
    for x, y in zip(s, a, strict=True):
        mx, my = _NUM.match(x), _NUM.match(y)
        if mx and my and mx.group(1) == my.group(1) and mx.group(3) == my.group(3):
            if not wild and not _num_matches(mx.group(2), my.group(2)):
                return False
        elif x != y:
            return False
    return True


def output_mismatches(shown: list[str], actual: str, volatile=frozenset()) -> list[str]:
    """The shown output lines that match no line of the actual output."""
    lines = actual.splitlines()
    bad = []
    for line in shown:
        if not line.strip() or line.strip() == "...":
            continue
        if not any(line_matches(line, got, frozenset(volatile)) for got in lines):
            bad.append(line)
    return bad
