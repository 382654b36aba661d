"""The result numbers of README.md, ARCHITECTURE.md and docs/ come from figures/ and follow it.

``docs/render_numbers.py`` renders every ``<!--r SOURCE-->VALUE<!--/r-->`` marker and
``<!--table NAME-->`` block from the committed result files; these tests check that every page
shows what the results give (README.md is not built, so this is its only check), that a changed
result changes the built page and fails this check, and that platform-dependent and timed
numbers are shown with their caveat and machine.
"""

from __future__ import annotations

import copy
import json

import pytest

from docs.number_sources import TABLES, Sources, pointer
from docs.render_numbers import MARKER, TABLE, numbers, pages, problems, render, unmarked
from tests.docs.examples import ROOT

FIGURES = ROOT / "figures"
PAGES = {p.relative_to(ROOT).as_posix(): p for p in pages()}


@pytest.fixture(scope="module")
def sources():
    return Sources(FIGURES)


def test_every_page_shows_what_the_results_give(sources):
    found = [line for path in PAGES.values() for line in problems(path, sources)]
    assert not found, "stale (run python docs/render_numbers.py --write):\n" + "\n".join(found)


def test_the_readme_and_the_guide_render_their_results(sources):
    marked = {name for name, p in PAGES.items() if MARKER.search(p.read_text(encoding="utf-8"))}
    assert {"README.md", "docs/guide/probe.md"} <= marked


def test_every_table_is_used_and_every_used_table_exists():
    used = {m.group("name") for p in PAGES.values() for m in TABLE.finditer(p.read_text("utf-8"))}
    assert used == set(TABLES), f"unused {set(TABLES) - used}, unknown {used - set(TABLES)}"


def _changed(sources: Sources, file: str, path: tuple[str, ...]) -> Sources:
    """A copy of ``sources`` whose number at ``file``'s ``path`` is changed (never equal)."""
    scratch = Sources(sources.folder)
    scratch._docs = {f: copy.deepcopy(sources.doc(f)) for f in {file, "results.json"}}
    node = scratch._docs[file]
    for key in path[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = int(path[-1]) if isinstance(node, list) else path[-1]
    node[last] = node[last] * 1.37 + 1.0
    return scratch


def _first_numeric_read(sources: Sources, spec: str) -> tuple[str, tuple[str, ...]] | None:
    """The first number (not a text, not a bool) a marker's source reads."""
    with sources.reading() as read:
        sources.value(spec.split()[0])
    for file, path in read:
        node = sources.get(file, pointer(path))
        if isinstance(node, int | float) and not isinstance(node, bool) and path:
            return file, path
    return None


@pytest.mark.parametrize("page", sorted(PAGES))
def test_a_changed_result_changes_the_built_page_and_fails_the_check(page, sources, tmp_path):
    """In a scratch copy, change the first number each marked result reads: the page follows."""
    text = PAGES[page].read_text(encoding="utf-8")
    marked = numbers(text, sources)
    if not marked:
        pytest.skip("no result numbers on this page")
    for number in marked[:3]:
        read = _first_numeric_read(sources, number.spec)
        if read is None:
            continue
        scratch = _changed(sources, *read)
        built = render(text, scratch, keep_markers=False)
        assert built != render(text, sources, keep_markers=False), (page, number.spec)
        copy_of_page = tmp_path / PAGES[page].name
        copy_of_page.write_text(text, encoding="utf-8")
        assert problems(copy_of_page, scratch), f"{page}: {number.spec} changed, no check failed"


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _leaves(sources: Sources, file: str, path: tuple[str, ...]):
    """The numbers at or below ``path`` of ``file``, as ``(file, path)``."""
    node = sources.get(file, pointer(path))
    if _is_number(node):
        yield file, path
    elif isinstance(node, dict | list):
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, _ in items:
            yield from _leaves(sources, file, (*path, str(key)))


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_changed_result_changes_a_table(name, sources):
    """Each table follows its numbers: changing one it reads (of its first ten) changes it."""
    with sources.reading() as read:
        before = TABLES[name](sources)
    numeric = [leaf for f, p in dict.fromkeys(read) for leaf in _leaves(sources, f, p)]
    assert numeric, f"table {name} reads no number of figures/"
    assert any(TABLES[name](_changed(sources, f, p)) != before for f, p in numeric[:10]), name


def test_a_platform_number_without_its_machine_is_refused(sources, tmp_path):
    spec = "routing_trained.json#/data/lookups/softmax/loss_after :.2f"
    value = render(f"<!--r {spec}-->?<!--/r-->", sources)
    page = tmp_path / "page.md"
    page.write_text(f"Loss {value}.\n", encoding="utf-8")
    assert any("platform" in p for p in problems(page, sources))
    machine = render("(<!--r =machine:routing_trained.json-->?<!--/r-->)", sources)
    page.write_text(f"Loss {value} {machine}.\n", encoding="utf-8")
    assert problems(page, sources) == []
    assert "Xeon" in machine or "EPYC" in machine or "committed run on" in machine


def test_the_docs_build_renders_and_drops_the_markers(sources):
    import docs.conf as conf

    text = ["loss <!--r routing_trained.json#/data/lookups/lsh/loss_after :.2f-->0<!--/r-->"]
    conf._render_numbers(None, "guide/x", text)
    expected = format(sources.get("routing_trained.json", "/data/lookups/lsh/loss_after"), ".2f")
    assert text[0] == f"loss {expected}"


def test_an_unclosed_marker_is_refused(sources, tmp_path):
    page = tmp_path / "page.md"
    page.write_text("loss <!--r routing_trained.json#/data/train/steps-->400 and more\n", "utf-8")
    assert any("without its" in p for p in problems(page, sources))


def test_a_bad_source_names_itself(sources):
    for spec, words in [
        ("nothere.json#/a", "no such result file"),
        ("routing_trained.json#/data/nokey", "no 'nokey'"),
        ("=nosuch", "no derived number"),
        ("routing_trained.json#/data/train/steps median", "unknown reducer"),
    ]:
        with pytest.raises(ValueError, match=words):
            render(f"<!--r {spec}-->?<!--/r-->", sources)


def test_ci_runs_are_records_of_ci():
    runs = json.loads((FIGURES / "ci_runs.json").read_text(encoding="utf-8"))["runs"]
    assert runs and all(isinstance(r["seconds"], int) and r["seconds"] > 0 for r in runs)
    assert len({r["commit"] for r in runs}) == len(runs)


#: Numbers of the prose that look like results but are inputs, goals or outside facts:
#: ``{page: {number: why}}`` (a number listed is allowed anywhere on its page).
NOT_RESULTS = {
    "README.md": {
        "2 minutes": "reproduce --quick's time, checked against its --help (test_checklist)",
        "400 s": "issue 43's goal",
    },
    "docs/guide/install.md": {"2 minutes": "the same --quick time (test_checklist checks it)"},
    "docs/guide/model.md": {
        **{p: "the paper's Table 3 slow-downs (its own values)" for p in ("39%", "24%", "19%")},
        "19-39%": "the same, as a range",
    },
    "docs/guide/probe.md": {"1%": "a frequency band's definition", "9%": "the same"},
    "docs/guide/scaleout.md": {
        "75%": "JAX's preallocation default on a GPU (an outside fact)",
        "80 GB": "an H100's memory (an outside fact)",
    },
    "proofs/frequency.md": {"1%": "a frequency band's definition", "10%": "the same"},
    "proofs/theorem1.md": {"10%": "a mutation's size", "1%": "a mutation's size"},
    "proofs/theorem2.md": {"1%": "the learning rate's cosine decay (an input)"},
}


def test_no_hand_typed_result_number():
    """Times, sizes, percentages, ratios and 3-decimal numbers in prose come from figures/."""
    found = [
        f"{name}:{line}: {number}  | {text[:80]}"
        for name, path in PAGES.items()
        for line, number, text in unmarked(path.read_text(encoding="utf-8"))
        if number not in NOT_RESULTS.get(name, {})
    ]
    assert not found, "hand-typed (mark them, docs/render_numbers.py):\n" + "\n".join(found)


def test_the_hand_typed_search_finds_what_it_should():
    text = "took 1130 s, 2.3x faster, 60.1 GB, +1.6% and 0.04858\n"
    assert [n for _, n, _ in unmarked(text)] == ["1130 s", "2.3x", "60.1 GB", "+1.6%", "0.04858"]
    quiet = "the 95% interval, the goal of 1.5x, >= 1.7x, `took 3 s`, arXiv:1602.06922, 4 x 32\n"
    assert unmarked(quiet) == []
    marked = "<!--r ci_runs.json#/runs/0/seconds-->842<!--/r--> s\n"
    assert unmarked(marked) == []
