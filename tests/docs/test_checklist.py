"""The statements issue 30 found stale, each checked against the code so it cannot drift back.

Claim count, the family table, ``reproduce --quick``'s time, output keys, test paths, the
layout block, ``--devices``, and links: README.md and the guide say what the code does.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re

import pytest

from tests.docs.examples import ROOT, doc_files

PAGES = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in doc_files()}
README = PAGES["README.md"]


def _subparsers():
    from lshsim.cli.main import build_parser

    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_claim_counts_match_lshsim_check():
    from lshsim.theorems.claims import CLAIMS

    said = [
        (page, int(m.group(1)))
        for page, text in PAGES.items()
        for m in re.finditer(r"(?<![/\d])(\d+)\s+(?:precise,\s+)?(?:executable\s+)?claims\b", text)
    ]
    assert said, "the docs state the number of claims somewhere"
    wrong = [(page, n) for page, n in said if n != len(CLAIMS)]
    assert not wrong, f"lshsim check runs {len(CLAIMS)} claims; the docs say {wrong}"


def _family_table(text):
    """The first column of the table whose header starts ``| family |``."""
    m = re.search(r"(?m)^\| family \|.*\n\|[- |]+\|\n((?:\|.*\n)*)", text)
    return [] if m is None else re.findall(r"(?m)^\| `([a-z0-9_]+)` \|", m.group(1))


def test_family_tables_list_the_registry():
    from lshsim.hashing import FAMILIES

    tables = {page: _family_table(text) for page, text in PAGES.items()}
    tables = {page: rows for page, rows in tables.items() if set(rows) & set(FAMILIES)}
    assert "docs/guide/families.md" in tables
    for page, rows in tables.items():
        assert rows == list(FAMILIES), f"{page}: family table {rows} != registry {list(FAMILIES)}"


def test_lshsim_families_is_documented():
    assert "lshsim families" in README
    assert "lshsim families" in PAGES["docs/guide/families.md"]


def _minutes(text):
    m = re.search(r"about (\d+|a) minutes?", text)
    return None if m is None else (1 if m.group(1) == "a" else int(m.group(1)))


def test_quick_time_matches_reproduce_help():
    helptext = _subparsers()["reproduce"].format_help()
    quick = helptext[helptext.index("--quick") :]
    expected = _minutes(" ".join(quick.split()))
    assert expected is not None, "reproduce --help gives --quick's time"
    said = [
        (page, _minutes(m.group(0)))
        for page, text in PAGES.items()
        for m in re.finditer(r"--quick`?[^.;]{0,40}?about (\d+|a) minutes?", text)
    ]
    assert said, "the docs give --quick's time"
    wrong = [(page, n) for page, n in said if n != expected]
    assert not wrong, f"reproduce --help says about {expected} minutes; the docs say {wrong}"


def test_ngram_theory_keys_named_in_the_guide_exist():
    from lshsim.cli.main import main

    text = PAGES["docs/guide/estimation.md"]
    sentence = text[text.index("`lshsim theory --family ngram` adds") :].split("\n*")[0]
    keys = set(re.findall(r"`([a-z]+_[a-z_]+)`", sentence))
    assert {"shared_probability", "heads_law"} <= keys
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["theory", "--family", "ngram", "--buckets", "64", "--overlap", "0.5"]) == 0
    printed = {line.split()[0] for line in out.getvalue().splitlines() if line.strip()}
    assert keys <= printed, f"keys the guide names but theory does not print: {keys - printed}"


def test_test_paths_exist():
    paths = {
        (page, m.group(0).rstrip(".,;:)"))
        for page, text in PAGES.items()
        for m in re.finditer(r"tests/[A-Za-z0-9_/]+\.py", text)
    }
    assert paths
    missing = [(page, p) for page, p in paths if not (ROOT / p).exists()]
    assert not missing, missing


def test_layout_names_every_package_and_proof():
    text = PAGES["docs/guide/layout.md"]
    block = text[text.index("```text") :]
    packages = sorted(p.name for p in (ROOT / "lshsim").iterdir() if (p / "__init__.py").exists())
    missing = [name for name in packages if f"lshsim/{name}/" not in block]
    assert not missing, f"the layout block lacks lshsim/{missing}"
    named = set(re.findall(r"[a-z0-9_]+\.md", block))
    assert all((ROOT / "proofs" / n).exists() for n in named), named


def test_devices_is_said_only_of_commands_that_take_it():
    sub = _subparsers()
    said = [
        (page, cmd)
        for page, text in PAGES.items()
        for m in re.finditer(r"lshsim ([a-z|]+)\b[^`\n]*?--devices\b", text)
        for cmd in m.group(1).split("|")
    ]
    assert said
    wrong = [(page, c) for page, c in said if "--devices" not in sub[c]._option_string_actions]
    assert not wrong, f"--devices said of commands that reject it: {wrong}"


def _exists(path):
    """A file, or a proof page the docs build renders from proofs/ (docs/proofs/NAME.md)."""
    path = path.resolve()
    if path.exists():
        return True
    if path.parent == ROOT / "docs" / "proofs":
        return (ROOT / "proofs" / path.name).exists()
    return False


@pytest.mark.parametrize("page", sorted(PAGES))
def test_relative_links_resolve(page):
    text = re.sub(r"(?s)```.*?```", "", PAGES[page])
    base = (ROOT / page).parent
    if base.name == "src" and base.parent.name == "tutorials":
        base = base.parent  # a tutorial renders from docs/tutorials/NAME.ipynb
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target) and not target.startswith("path:"):
            continue  # http(s):, mailto:
        path, _, anchor = target.removeprefix("path:").partition("#")
        if "shared/" in path:
            bad.append(target)  # ../shared/ is the authors' workspace: no clone has it
        elif path and not _exists(base / path):
            bad.append(target)
        elif not path and anchor:
            slugs = {
                re.sub(r"[^a-z0-9 -]", "", h.lower()).strip().replace(" ", "-")
                for h in re.findall(r"(?m)^#+ (.*)$", PAGES[page])
            }
            if anchor not in slugs:
                bad.append(target)
    assert not bad, f"{page}: links that resolve nowhere: {bad}"


def test_no_retired_option_spellings():
    """Commands in the docs use the current option names (lshsim.cli.vocabulary.DEPRECATED)."""
    from lshsim.cli.vocabulary import DEPRECATED

    found = []
    for page, text in PAGES.items():
        for m in re.finditer(r"lshsim ([a-z]+)((?:[^`\n]|\\\n)*)", text):
            command, rest = m.group(1), m.group(2)
            for opt in re.findall(r"(?<![\w-])--[A-Za-z][\w-]*", rest):
                new = DEPRECATED.get((command, opt)) or DEPRECATED.get(("memory", opt))
                if new:
                    found.append(f"{page}: lshsim {command} {opt} (now {new})")
    assert not found, "retired spellings:\n" + "\n".join(found)
