"""Prose checked like code (issue 49): what the pages say about the code is derived from it.

- An option spelling retired for every command (in :data:`lshsim.cli.vocabulary.DEPRECATED`
  and accepted by no parser) appears nowhere in the pages, code or prose, except on the
  vocabulary page that lists the retired spellings. Spellings retired for some commands only
  are checked in command strings by ``tests/docs/test_checklist.py``.
- Every ``lshsim`` command is shown in the guide as ``lshsim NAME``.
- Every public package and top-level module of ``lshsim`` is named in the guide.
- Every claim id the pages mention exists in the registry (:data:`lshsim.theorems.claims.CLAIMS`),
  and a list of claims presented as a list (a claims table, a claims module's claims, the
  theorems page) holds exactly the registry's ids, in its order.

Cheap by design: the pages are read once, the parsers are walked in process.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from tests.docs.examples import ROOT

#: Pages generated from other files (their sources are checked) or by a build.
GENERATED = ("docs/_build/", "docs/api/_generated/")
#: The page that lists the retired spellings, on purpose.
VOCABULARY_PAGE = "docs/cli/vocabulary.md"


def _pages() -> dict[str, str]:
    """README.md, ARCHITECTURE.md, docs/**/*.md and proofs/*.md, each once (path -> text).

    The tutorials' sources (``docs/tutorials/src``) are included; ``docs/proofs/NAME.md`` is a
    copy the docs build makes of ``proofs/NAME.md`` and is read there.
    """
    paths = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "proofs").glob("*.md"))]
    for path in sorted((ROOT / "docs").rglob("*.md")):
        rel = path.relative_to(ROOT).as_posix()
        copy = rel.startswith("docs/proofs/") and (ROOT / "proofs" / path.name).exists()
        if not rel.startswith(GENERATED) and not copy:
            paths.append(path)
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths}


PAGES = _pages()
#: The guide: its pages and the site's front page.
GUIDE = {
    page: text
    for page, text in PAGES.items()
    if page.startswith("docs/guide/") or page == "docs/index.md"
}


# --- retired option spellings ------------------------------------------------------------------


@cache
def retired_everywhere() -> frozenset[str]:
    """The retired spellings no command accepts as its own option any more.

    Derived from :data:`~lshsim.cli.vocabulary.DEPRECATED` and the options of every parser
    (:func:`lshsim.cli.vocabulary_doc.option_uses`, the vocabulary page's walk of every
    ``lshsim`` sub-parser and the launcher's); an alias of a retired spelling is not an option
    string, so it does not count.

    Returns:
        The spellings, e.g. ``--checkpoint``.
    """
    from lshsim.cli.vocabulary import DEPRECATED
    from lshsim.cli.vocabulary_doc import option_uses

    return frozenset({old for _, old in DEPRECATED} - set(option_uses()))


def retired_spellings(text: str, retired: frozenset[str]) -> list[tuple[int, str]]:
    """Where ``text`` uses a retired spelling as a whole option token (case-sensitive).

    Args:
        text: a page's text.
        retired: the spellings to find.

    Returns:
        ``(line number, spelling)`` per use; ``--overlaps`` does not match ``--overlap``, and
        ``--K`` matches neither ``--k`` nor ``--Kx``.
    """
    if not retired:
        return []
    names = "|".join(re.escape(o) for o in sorted(retired, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w-])(?:{names})(?![\w-])")
    return [
        (number, m.group(0))
        for number, line in enumerate(text.splitlines(), 1)
        for m in pattern.finditer(line)
    ]


def test_retired_everywhere_is_derived():
    retired = retired_everywhere()
    assert retired, "DEPRECATED has spellings no command accepts"
    assert "--checkpoint" in retired
    assert not {"--batch", "--json"} & retired, "retired only for some commands"


def test_the_retired_spelling_checker_matches_whole_tokens():
    retired = retired_everywhere()
    assert retired_spellings("use --overlaps here", retired) == [(1, "--overlaps")]
    assert retired_spellings("--overlap 0.5", retired) == []
    assert retired_spellings("a\n`--K 2`, --overlaps=0.1,0.5", retired) == [
        (2, "--K"),
        (2, "--overlaps"),
    ]
    assert retired_spellings("--k 2 --Kx --checkpoint-every 10 x--K", retired) == []


def test_no_page_uses_a_spelling_retired_everywhere():
    retired = retired_everywhere()
    found = [
        f"{page}:{number}: {option}"
        for page, text in PAGES.items()
        if page != VOCABULARY_PAGE
        for number, option in retired_spellings(text, retired)
    ]
    assert not found, "spellings no command accepts any more:\n" + "\n".join(found)


# --- commands and modules in the guide ---------------------------------------------------------


def _commands() -> list[str]:
    from lshsim.cli.vocabulary_doc import parsers

    return [name for name in parsers() if name != "memory_studies"]


def test_every_command_is_shown_in_the_guide():
    text = "\n".join(GUIDE.values())
    missing = [c for c in _commands() if not re.search(rf"(?<![\w-])lshsim {c}(?![\w-])", text)]
    assert not missing, f"commands the guide never shows as `lshsim NAME`: {missing}"


def public_modules() -> list[str]:
    """Every public package of ``lshsim`` (nested ones too) and public top-level module.

    Returns:
        Dotted names, e.g. ``lshsim.probe``, ``lshsim.t5.data``, ``lshsim.estimate``.
    """
    names = []
    for init in sorted((ROOT / "lshsim").rglob("__init__.py")):
        parts = init.parent.relative_to(ROOT).parts
        if len(parts) > 1 and not any(p.startswith("_") for p in parts):
            names.append(".".join(parts))
    for path in sorted((ROOT / "lshsim").glob("*.py")):
        if not path.name.startswith("_"):
            names.append(f"lshsim.{path.stem}")
    return names


def named(module: str, text: str) -> bool:
    """Whether ``text`` names ``module`` as ``a.b`` or as its path ``a/b/`` / ``a/b.py``.

    Args:
        module: a dotted name.
        text: the pages' text.

    Returns:
        True where it is named (``lshsim.probe.RouterTap`` names ``lshsim.probe``).
    """
    slash = module.replace(".", "/")
    pattern = rf"(?<![\w./]){re.escape(module)}(?![\w])|(?<![\w./]){re.escape(slash)}(?:/|\.py\b)"
    return re.search(pattern, text) is not None


def test_every_public_module_is_named_in_the_guide():
    modules = public_modules()
    assert {"lshsim.probe", "lshsim.t5.data", "lshsim.estimate_topk"} <= set(modules)
    text = "\n".join(GUIDE.values())
    missing = [m for m in modules if not named(m, text)]
    assert not missing, f"public modules the guide never names: {missing}"


def test_the_module_check_needs_the_whole_name():
    assert named("lshsim.probe", "see `lshsim.probe.RouterTap`")
    assert named("lshsim.t5.data", "in lshsim/t5/data/ the corpus")
    assert named("lshsim.estimate", "`lshsim/estimate.py`")
    assert not named("lshsim.estimate", "lshsim.estimate_topk and lshsim/estimate_topk.py")
    assert not named("lshsim.t5.data", "data/ in lshsim/t5/")


# --- claim ids ---------------------------------------------------------------------------------

_ID = r"(?:T\d+|B)\.[a-z]{1,3}\d+"
#: A run of claim ids: ``T1.a1, a2``, ``B.ng1-ng4``, ``B.tk1 to B.tk4``, ``T1.c1 and T1.c2``.
_RUN = re.compile(
    rf"(?<![\w.])({_ID})((?:\s*(?:,|and|to|-|–)\s*(?:{_ID}|[a-z]{{1,3}}\d+)(?![\w.]))*)"
)


@cache
def registry() -> tuple[str, ...]:
    """The claim ids of ``lshsim check``, in its order."""
    from lshsim.theorems.claims import CLAIMS

    return tuple(CLAIMS)


@cache
def parts() -> dict[str, tuple[str, ...]]:
    """Each claims module's short name (``topk``) -> its claim ids, in the registry's order."""
    import importlib

    from lshsim.theorems.claims import PARTS

    out = {}
    for name in PARTS:
        claims = importlib.import_module(name).CLAIMS
        ids = [c.id for c in (claims.values() if isinstance(claims, dict) else claims)]
        out[name.rsplit(".", 1)[1]] = tuple(ids)
    return out


def claim_runs(text: str) -> list[list[str]]:
    """The claim ids ``text`` mentions, one list per run, shorthands and ranges expanded.

    ``T1.h1, h2`` is ``T1.h1, T1.h2``; ``B.ng1-ng4`` and ``B.tk1 to B.tk4`` are every id from
    the first to the last in the registry's order. An id the registry lacks is kept as written
    (a range with such an end gives its two ends).

    Args:
        text: a page's text (backticks are ignored).

    Returns:
        The runs, in the text's order.
    """
    order = registry()
    runs = []
    for m in _RUN.finditer(text.replace("`", "")):
        first = m.group(1)
        prefix = first.split(".")[0] + "."
        ids = [first]
        for sep, item in re.findall(r"\s*(,|and|to|-|–)\s*([\w.]+)", m.group(2)):
            item = item if "." in item else prefix + item
            start = ids[-1]
            if sep in ("to", "-", "–") and start in order and item in order:
                ids += list(order[order.index(start) + 1 : order.index(item) + 1])
            else:
                ids.append(item)
        runs.append(ids)
    return runs


def test_claim_runs_expand_shorthands_and_ranges():
    assert claim_runs("claims T1.h1, h2; `B.ng1` to `B.ng4`") == [
        ["T1.h1", "T1.h2"],
        ["B.ng1", "B.ng2", "B.ng3", "B.ng4"],
    ]
    assert claim_runs("B.tk1-tk3 and T1.z9 (a2 = 0)") == [["B.tk1", "B.tk2", "B.tk3", "T1.z9"]]


def test_every_claim_id_mentioned_exists():
    known = set(registry())
    unknown = [
        f"{page}: {claim}"
        for page, text in PAGES.items()
        for run in claim_runs(text)
        for claim in run
        if claim not in known
    ]
    assert not unknown, "claim ids lshsim check does not know:\n" + "\n".join(unknown)


def _theorems_entry(text: str) -> re.Match:
    """The ``theorems/`` entry of ARCHITECTURE.md's package tree."""
    entry = re.search(r"(?ms)^(\s+)theorems/\s.*?(?=^\1\S)", text)
    assert entry, "ARCHITECTURE.md has a theorems/ entry"
    return entry


def test_architecture_names_every_claims_module():
    entry = _theorems_entry(PAGES["ARCHITECTURE.md"]).group(0)
    missing = [m for m in parts() if not re.search(rf"(?<![\w/.]){m}(?:\.py|/)", entry)]
    assert not missing, f"ARCHITECTURE.md's theorems/ entry lacks the claims modules {missing}"


def _sentences(page: str, text: str) -> list[str]:
    """A page's sentences (and table rows), the unit in which a module's claims are listed.

    In ARCHITECTURE.md the ``theorems/`` entry names its modules bare (``topk.py``); they are
    written out as ``theorems/topk.py`` there, so the entry's lists are checked too.
    """
    if page == "ARCHITECTURE.md":
        entry = _theorems_entry(text)
        names = "|".join(parts())
        fixed = re.sub(rf"(?<![\w/.])({names})(\.py|/)", r"theorems/\1\2", entry.group(0))
        text = text[: entry.start()] + fixed + text[entry.end() :]
    out = []
    for para in re.split(r"\n\s*\n", text):
        rows = para.splitlines() if para.lstrip().startswith("|") else [para]
        for row in rows:
            out += re.split(r"(?<=[.!?])\s+(?=[A-Z])", row)
    return out


def module_claim_lists(page: str, text: str) -> list[str]:
    """Sentences that name a claims module and list some but not all of its claims, in order.

    A sentence naming ``lshsim/theorems/topk.py`` (or ``lshsim.theorems.topk``) and listing
    ids of that module's claims presents the module's claims: it lists all of them, in the
    registry's order.

    Args:
        page: the page's path (ARCHITECTURE.md names the modules bare).
        text: its text.

    Returns:
        One line per wrong list: the module, what is listed and what the registry holds.
    """
    names = "|".join(parts())
    ref = re.compile(rf"(?<![\w/])(?:lshsim[./])?theorems[./]({names})(?![\w])")
    wrong = []
    for sentence in _sentences(page, text):
        listed = [c for run in claim_runs(sentence) for c in run]
        for module in dict.fromkeys(ref.findall(sentence)):
            mine = list(dict.fromkeys(c for c in listed if c in parts()[module]))
            if mine and mine != list(parts()[module]):
                wrong.append(f"{page}: {module}: lists {mine}, has {list(parts()[module])}")
    return wrong


def test_claims_modules_list_all_their_claims():
    wrong = [w for page, text in PAGES.items() for w in module_claim_lists(page, text)]
    assert not wrong, "claim lists that are not their module's claims:\n" + "\n".join(wrong)


def test_the_module_list_check_finds_a_short_list():
    stale = "The claims B.tk1, B.tk2 (`lshsim/theorems/topk.py`) hold."
    assert module_claim_lists("x.md", stale) == [
        f"x.md: topk: lists ['B.tk1', 'B.tk2'], has {list(parts()['topk'])}"
    ]
    assert module_claim_lists("x.md", stale.replace("B.tk2", "B.tk4").replace(",", " to")) == []


def claim_tables(text: str) -> list[list[str]]:
    """The tables and bullet lists whose rows start with claim ids: each one's ids, in order."""
    tables, current = [], []
    for line in [*text.splitlines(), ""]:
        m = re.match(rf"^\s*(?:\|\s*|[-*]\s+)[*`]*({_ID}[^|:(]*)", line)
        if m:
            current += [c for run in claim_runs(m.group(1)) for c in run]
        elif current:
            tables.append(current)
            current = []
    return tables


def test_claim_tables_are_whole_modules_in_registry_order():
    """A table (or list) of claims holds every claim of each module it touches, in order."""
    found = 0
    for page, text in PAGES.items():
        for ids in claim_tables(text):
            found += 1
            touched = [m for m, own in parts().items() if set(own) & set(ids)]
            expected = [c for m in touched for c in parts()[m]]
            assert ids == expected, f"{page}: claims table {ids} != the registry's {expected}"
    assert found >= 2, "the theorems page and proofs/theorem1.md table Theorem 1's claims"


def test_the_theorems_page_names_every_claim():
    page = "docs/guide/theorems.md"
    named_ids = [c for run in claim_runs(PAGES[page]) for c in run]
    missing = [c for c in registry() if c not in named_ids]
    assert not missing, f"{page} presents the claims of lshsim check but lacks {missing}"


@pytest.mark.parametrize("page", ["docs/guide/theorems.md", "proofs/theorem1.md"])
def test_theorem_one_tables_follow_the_registry(page):
    tables = claim_tables(PAGES[page])
    assert list(parts()["theorem1"]) in tables, f"{page}: no table of Theorem 1's claims"
