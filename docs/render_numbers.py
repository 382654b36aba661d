"""Result numbers in README.md, ARCHITECTURE.md and docs/ rendered from the files of figures/.

A result number is never typed by hand: the pages hold it between two HTML comments (GitHub and
the built site show neither) that say where it comes from::

    held-out loss <!--r routing_trained.json#/data/lookups/softmax/loss_after :.2f-->4.87<!--/r-->

The opening comment holds a *source* and options:

- the source: ``FILE#/POINTER`` (FILE under figures/, POINTER a JSON pointer whose segments are
  keys or list indices; ``*`` takes every element, ``KEY=VALUE`` the one list element whose
  ``KEY`` equals ``VALUE``), or ``=NAME`` / ``=NAME:ARG``, a quantity computed from several
  numbers (:data:`docs.number_sources.DERIVED`);
- reducers applied in order to the value: ``min``, ``max``, ``mean``, ``sum``, ``len``,
  ``abs``, ``neg``, ``pct`` (times 100), ``sec2min`` (seconds to minutes), ``first``, ``last``
  (a list of lists, from ``*`` under ``*``, is flattened first);
- the format, ``:SPEC`` (Python's format mini-language; the one rounding rule is Python's
  ``format``: the nearest decimal of the stored binary value, ties to even). Without it a
  number is shown as ``:g`` and text as it is.

A table rendered whole from the results sits between ``<!--table NAME-->`` and ``<!--/table-->``
on lines of their own (:data:`docs.number_sources.TABLES`).

Kinds (:mod:`lshsim.studies.kinds`): a number whose kind is ``platform`` (downstream of XLA or
torch) or ``timing`` (a measured time on one machine) must be shown with its caveat and machine:
its paragraph, or the one just before it (a table's caption), holds ``<!--r =machine:FILE-->``
for the same file (:func:`docs.number_sources.machine`).

The docs build renders every page as Sphinx reads it (``docs/conf.py``, the values are replaced
and the comments dropped), so the site always shows the committed results; the pages' text is
checked current by ``tests/docs/test_numbers.py`` (README.md is not built). After ``lshsim
reproduce`` or a benchmark rewrote figures/, ``python docs/render_numbers.py --write`` renders the
pages again; ``python docs/render_numbers.py`` lists what is stale and exits 1 when anything is;
``--unmarked`` lists the prose numbers that look like results (times, sizes, percentages,
ratios, decimals of three places) but are typed by hand (:func:`unmarked`; the test allows
only the inputs and goals it lists).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python docs/render_numbers.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from docs.number_sources import Sources

ROOT = Path(__file__).resolve().parents[1]
#: ``<!--r SOURCE [REDUCER ...] [:SPEC]-->TEXT<!--/r-->``.
MARKER = re.compile(r"<!--r (?P<spec>[^>]*?)\s*-->(?P<text>(?:(?!<!--).)*?)<!--/r-->", re.S)
#: ``<!--table NAME-->`` ... ``<!--/table-->``, each on a line of its own.
TABLE = re.compile(r"(?m)^<!--table (?P<name>[\w.-]+)-->\n(?P<text>(?:.*\n)*?)<!--/table-->$")
#: The kinds that must be shown with their caveat and machine.
NEEDS_CAVEAT = ("platform", "timing")
REDUCERS = {
    "min": min,
    "max": max,
    "sum": sum,
    "len": len,
    "first": lambda v: v[0],
    "last": lambda v: v[-1],
    "mean": lambda v: sum(v) / len(v),
    "abs": abs,
    "neg": lambda v: -v,
    "pct": lambda v: 100 * v,
    "sec2min": lambda v: v / 60,
}


def pages() -> list[Path]:
    """The pages whose numbers are rendered: README.md, ARCHITECTURE.md, docs/ and proofs/.

    The tutorials' sources are left out: their notebooks are stored executed (a source edited
    after its run fails ``tests/docs/test_tutorials.py``), and the build renders the markers of
    the stored notebooks as it reads them.

    Returns:
        The Markdown paths, sorted; the generated API pages and the build folder left out.
    """
    skip = ("docs/_build/", "docs/api/_generated/", "docs/tutorials/src/", "docs/proofs/")
    docs = sorted(
        p
        for p in (ROOT / "docs").rglob("*.md")
        if not p.relative_to(ROOT).as_posix().startswith(skip)
    )
    proofs = sorted((ROOT / "proofs").glob("*.md"))
    return [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *docs, *proofs]


@dataclass(frozen=True)
class Number:
    """One marked number of a page.

    Attributes:
        spec: the opening comment's text (source, reducers, format).
        shown: the text between the comments now.
        rendered: the text the results give.
        kind: the number's kind (``exact``, ``monte_carlo``, ``platform``, ``timing``, ...).
        files: the files of figures/ it was read from.
        start: its offset in the page.
    """

    spec: str
    shown: str
    rendered: str
    kind: str
    files: tuple[str, ...]
    start: int


def _flat(value: list) -> list:
    """A list of lists (``*`` under ``*``) as one list."""
    return [x for v in value for x in (_flat(v) if isinstance(v, list) else [v])]


def render_one(spec: str, sources: Sources) -> tuple[str, str, tuple[str, ...]]:
    """Render one marker's spec.

    Args:
        spec: ``SOURCE [REDUCER ...] [:SPEC]``.
        sources: the result files.

    Returns:
        ``(text, kind, files)``.

    Raises:
        ValueError: an unknown source, key, reducer or format.
    """
    words = spec.split()
    if not words:
        raise ValueError("an empty <!--r --> marker")
    fmt = words.pop()[1:] if len(words) > 1 and words[-1].startswith(":") else None
    source, reducers = words[0], words[1:]
    with sources.reading() as read:
        value = sources.value(source)
    for name in reducers:
        if name not in REDUCERS:
            raise ValueError(f"{spec!r}: unknown reducer {name!r}; choose from {sorted(REDUCERS)}")
        value = REDUCERS[name](_flat(value) if isinstance(value, list) else value)
    if fmt is None:
        text = value if isinstance(value, str) else format(value, "g")
    else:
        try:
            text = format(value, fmt)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{spec!r}: cannot format {value!r} as {fmt!r} ({err})") from None
    return text, sources.worst_kind(read), tuple(sorted({f for f, _ in read}))


def numbers(text: str, sources: Sources) -> list[Number]:
    """Every marked number of a page's text, rendered.

    Args:
        text: the page.
        sources: the result files.

    Returns:
        The numbers in page order.
    """
    out = []
    for m in MARKER.finditer(text):
        rendered, kind, files = render_one(m.group("spec"), sources)
        out.append(Number(m.group("spec"), m.group("text"), rendered, kind, files, m.start()))
    return out


def render(text: str, sources: Sources, keep_markers: bool = True) -> str:
    """A page's text with every marked number and table rendered from the results.

    Args:
        text: the page.
        sources: the result files.
        keep_markers: keep the comments (the committed page) or drop them (the built site).

    Returns:
        The new text.
    """

    def number(m: re.Match) -> str:
        value = render_one(m.group("spec"), sources)[0]
        return f"<!--r {m.group('spec')}-->{value}<!--/r-->" if keep_markers else value

    def table(m: re.Match) -> str:
        body = sources.table(m.group("name"))
        return f"<!--table {m.group('name')}-->\n{body}<!--/table-->" if keep_markers else body

    return MARKER.sub(number, TABLE.sub(table, text))


def _block(text: str, offset: int) -> tuple[str, str]:
    """The paragraph (blank-line delimited block) holding ``offset``, and the one before it."""
    blocks = [(m.start(), m.group(0)) for m in re.finditer(r"(?:[^\n]+\n?)+", text)]
    for i, (start, block) in enumerate(blocks):
        if start <= offset < start + len(block):
            return block, blocks[i - 1][1] if i else ""
    return "", ""


def problems(path: Path, sources: Sources) -> list[str]:
    """What is wrong with one page: stale numbers and tables, and numbers without their caveat.

    Args:
        path: the page.
        sources: the result files.

    Returns:
        One line per problem (empty when the page is current).
    """
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    out = []
    if text.count("<!--r ") != len(MARKER.findall(text)):
        out.append(f"{name}: a <!--r ...--> marker without its <!--/r--> (or holding a comment)")
    for m in TABLE.finditer(text):
        if sources.table(m.group("name")) != m.group("text"):
            out.append(f"{name}: table {m.group('name')} is stale")
    for n in numbers(text, sources):
        line = text.count("\n", 0, n.start) + 1
        if n.shown != n.rendered:
            out.append(
                f"{name}:{line}: {n.spec!r} shows {n.shown!r}, the results give {n.rendered!r}"
            )
        if n.kind in NEEDS_CAVEAT:
            here, before = _block(text, n.start)
            wanted = [f"<!--r =machine:{f}-->" for f in n.files]
            if not all(w in here or w in before for w in wanted):
                out.append(
                    f"{name}:{line}: {n.spec!r} is {n.kind}: its paragraph (or the one before) "
                    f"must show {' and '.join(wanted)}"
                )
    return out


#: What a hand-typed result looks like (the kinds of numbers that drift): a time, a size, a
#: percentage or a ratio (``1.5x``), or a decimal with three or more places.
RESULT_LIKE = re.compile(
    r"(?<![\w.\-/^])[-+−]?\d[\d,]*(?:\.\d+)?(?:[-–]\d[\d,]*(?:\.\d+)?)?"
    r"(?: ?(?:%|ms\b|s\b|min\b|minutes\b|seconds\b|hours\b|GB\b|GiB\b|MB\b)|x(?![\w\d]))"
    r"|(?<![\w.\-/^])[-+−]?\d+\.\d{3,}(?![\w.])"
)
#: Numbers that look like results but state something else: a confidence level (the number),
#: or (the text just before it) a goal or threshold after a comparison, a default, an arXiv id.
NOT_RESULT = re.compile(r"(?:95|99|99\.9)%")
NOT_RESULT_AFTER = re.compile(r"(?:>=|<=|≥|≤|<|>|goal of|goal's|default|arXiv:?)\s*$")
#: What :func:`unmarked` blanks out first: marked numbers and tables, code (fenced and
#: inline), TeX, comments and link targets.
_NOT_PROSE = [
    TABLE,
    MARKER,
    re.compile(r"(?ms)^(```|~~~).*?^\1"),
    re.compile(r"(?s)\$\$.*?\$\$"),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"\$[^$\n]+\$"),
    re.compile(r"(?s)<!--.*?-->"),
    re.compile(r"\]\([^)]*\)"),
]


def unmarked(text: str) -> list[tuple[int, str, str]]:
    """Numbers in a page's prose that look like results but are not rendered from figures/.

    Args:
        text: the page.

    Returns:
        ``(line, number, the line's text)`` for each, in page order; the blanked-out parts keep
        their line breaks, so line numbers are the page's.
    """
    for pattern in _NOT_PROSE:
        text = pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        for m in RESULT_LIKE.finditer(line):
            before = line[max(0, m.start() - 12) : m.start()]
            if not NOT_RESULT.fullmatch(m.group(0)) and not NOT_RESULT_AFTER.search(before):
                out.append((i, m.group(0), line.strip()))
    return out


def main(argv: list[str] | None = None) -> int:
    """Check the pages' numbers, or write them (``--write``).

    Args:
        argv: the command line (default: ``sys.argv[1:]``).

    Returns:
        0 when every page is current (or was rewritten), 1 when any is stale.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="render the pages in place")
    parser.add_argument("--figures", type=Path, default=ROOT / "figures", help="result folder")
    parser.add_argument(
        "--unmarked", action="store_true", help="list prose numbers that look like results"
    )
    args = parser.parse_args(argv)
    if args.unmarked:
        for path in pages():
            for line, number, text in unmarked(path.read_text(encoding="utf-8")):
                print(f"{path.relative_to(ROOT)}:{line}: {number}  | {text[:90]}")
        return 0
    sources = Sources(args.figures)
    found = []
    for path in pages():
        if args.write:
            text = path.read_text(encoding="utf-8")
            new = render(text, sources)
            if new != text:
                path.write_text(new, encoding="utf-8")
                print(f"rendered {path.relative_to(ROOT)}")
        found += problems(path, sources)
    print("\n".join(found) if found else "every result number is current")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
