"""The command line's vocabulary (issue 31): every sub-parser walked against one table.

One name per idea, one meaning per name, no two names that differ only by case, one default
per option (unless the table says why), ``--seed`` wherever random numbers are drawn, one
``--json`` help text, help grouped with a description and an example per command, the retired
spellings accepted with one warning, and ``docs/cli/vocabulary.md`` current.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from lshsim.cli import vocabulary
from lshsim.cli.main import main
from lshsim.cli.vocabulary_doc import option_uses, page, parsers

ROOT = Path(__file__).resolve().parents[2]
TERMS = {t.name: t for t in vocabulary.TERMS}


@pytest.fixture(scope="module")
def commands() -> dict[str, argparse.ArgumentParser]:
    return parsers()


def _options(parser: argparse.ArgumentParser):
    """``(long option, action)`` of each option of ``parser`` (help left out)."""
    for action in parser._actions:
        for opt in action.option_strings:
            if opt.startswith("--") and opt != "--help":
                yield opt, action


def test_every_option_is_in_the_table_and_every_row_is_used(commands):
    used = option_uses()
    missing = sorted(set(used) - set(TERMS))
    assert not missing, f"options missing from lshsim/cli/vocabulary.py's TERMS: {missing}"
    stale = sorted(set(TERMS) - set(used))
    assert not stale, f"TERMS rows no command has: {stale}"
    assert len(TERMS) == len(vocabulary.TERMS), "an option is listed twice"


def test_no_retired_synonym_and_no_names_differing_only_by_case(commands):
    names = set(option_uses())
    back = sorted(names & set(vocabulary.SYNONYMS))
    assert not back, f"retired names used again (one name per idea): {back}"
    by_fold: dict[str, set[str]] = {}
    for name in names:
        by_fold.setdefault(name.lower(), set()).add(name)
    clashes = sorted(tuple(sorted(v)) for v in by_fold.values() if len(v) > 1)
    assert not clashes, f"options that differ only by case: {clashes}"


def test_one_default_and_one_type_per_option(commands):
    defaults: dict[str, dict] = {}
    types: dict[str, set] = {}
    for command, parser in commands.items():
        for opt, action in _options(parser):
            if opt == "--json" and command in vocabulary.JSON_EXCEPTIONS:
                continue
            if action.default not in (None, False, argparse.SUPPRESS):
                defaults.setdefault(opt, {})[command] = action.default
            if action.nargs != 0:
                if "list" not in TERMS[opt].kind:  # a list option is its scalar's comma list
                    types.setdefault(opt, set()).add(getattr(action.type, "__name__", "str"))
    for opt, given in defaults.items():
        term = TERMS[opt]
        if term.varies:
            continue
        values = {str(v) for v in given.values()}
        assert len(values) == 1, f"{opt}: defaults {given} differ and TERMS gives no reason"
        assert values == {term.default}, f"{opt}: parsers say {given}, TERMS {term.default!r}"
    mixed = {opt: t for opt, t in types.items() if len(t - {"Path"}) > 1}
    assert not mixed, f"options whose type differs between commands: {mixed}"


def test_seed_where_random_numbers_are_drawn(commands):
    lacking = [c for c in vocabulary.RANDOM_COMMANDS if "--seed" not in dict(_options(commands[c]))]
    assert not lacking, f"commands that draw random numbers without --seed: {lacking}"


def test_json_has_one_help_text(commands):
    helps = {
        command: dict(_options(parser))["--json"].help
        for command, parser in commands.items()
        if "--json" in dict(_options(parser)) and command not in vocabulary.JSON_EXCEPTIONS
    }
    assert set(helps.values()) == {vocabulary.JSON_HELP}, helps


def test_short_options_are_n_and_o_only(commands):
    for command, parser in commands.items():
        for action in parser._actions:
            shorts = [o for o in action.option_strings if not o.startswith("--")]
            for short in shorts:
                if short == "-h":
                    continue
                expected = {"-n": "--buckets", "-o": "--out"}.get(short)
                assert expected in action.option_strings, (command, action.option_strings)


def test_every_command_has_a_description_an_example_and_grouped_options(commands):
    for command, parser in commands.items():
        assert parser.description, f"{command}: no description"
        text = parser.format_help()
        assert "example" in text, f"{command}: no example in --help"
    # options grouped by what they configure (not one flat list)
    sim = commands["simulate"].format_help()
    for title in ("what to compute", "sentence model", "family crosspolytope", "output"):
        assert title in sim
    assert "LSH exponent and amplification" in commands["theory"].format_help()
    for command, parser in commands.items():  # every command: at most 5 options ungrouped
        flat = [
            a.option_strings[-1]
            for g in parser._action_groups
            if g.title == "options"
            for a in g._group_actions
            if a.option_strings and a.dest != "help"
        ]
        assert len(flat) <= 5, f"{command}: {len(flat)} options in one flat group: {flat}"


@pytest.mark.parametrize(
    ("argv", "old", "new"),
    [
        (["sweep", "{tmp}/s.json", "-o", "{tmp}/o", "--batch", "0"], "--batch", "--part-rows"),
        (["eval", "--checkpoint", "{tmp}/none"], "--checkpoint", "--run"),
        (["probe", "--checkpoint", "{tmp}/none"], "--checkpoint", "--run"),
    ],
)
def test_a_retired_spelling_still_parses_and_warns_once(argv, old, new, tmp_path, capsys):
    vocabulary._warned.clear()
    (tmp_path / "s.json").write_text(
        '{"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "cosine": 0.5}]}'
    )
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(argv) == 2  # the run itself fails (--part-rows 0, no such run folder)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count(f"warning: {old} is now {new}") == 1, err
    assert f"lshsim: error: {new}" in err, err  # the error names the new spelling


def test_the_docs_page_is_current():
    path = ROOT / "docs" / "cli" / "vocabulary.md"
    assert path.read_text() == page(), (
        "docs/cli/vocabulary.md is stale: python -m lshsim.cli.vocabulary_doc > "
        "docs/cli/vocabulary.md"
    )


def test_the_study_launchers_json_path_is_now_results(tmp_path, capsys):
    """``memory_studies.py --json PATH`` (its results file) warns and means ``--results``."""
    from lshsim.studies.memory import cli as ms

    vocabulary._warned.clear()
    path = tmp_path / "m.json"
    out = ms.main(["--study", "table5", "--dry-run", "--json", str(path)])
    assert out["runs"] and "--json is now --results" in capsys.readouterr().err
    assert ms.build_parser().parse_args(["--results", str(path)]).results == path
