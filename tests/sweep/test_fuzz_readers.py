"""Reader fuzzing of sweep files (issue 48): hostile SPEC files and sweep folders, via the CLI.

Each example writes a hostile version of a valid SPEC (every JSON/TOML type at the top level and
in nested places, strings for numbers and numbers for strings, duplicated keys, truncation,
other encodings, binary garbage) or of a finished sweep's folder (truncated, garbage or
bit-flipped parts, a ``_sweep.json`` with values of the wrong type, foreign files) and runs
``lshsim sweep`` in process on it: ``SPEC --out`` and ``--plot`` stop where their checks end
(:func:`lshsim.cli.work.checks_only`), ``--resume`` runs (the 4 theory cells take
milliseconds). Each must end with exit 0 or 2, never a traceback or an internal error (exit
70), and an error must be one line naming the file (and the field, where there is one).
The inputs the fuzzer once broke the readers with are kept as ``@example`` cases.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lshsim.cli import main as cli_main
from lshsim.cli.main import build_parser, main
from lshsim.cli.work import ChecksPassed, checks_only
from lshsim.sweep import parse_spec, read_table
from lshsim.sweep.execute import run_sweep
from lshsim.sweep.spec import spec_hash
from lshsim.sweep.store import LOCK, META
from tests.fuzz_budget import examples

#: A valid spec of 4 theory cells (simhash and voronoi closed forms: milliseconds each).
SPEC = {
    "seed": 5,
    "grids": [
        {"command": "theory", "family": ["simhash", "voronoi"], "buckets": [4, 16], "cosine": 0.5}
    ],
}
#: The same spec as TOML, with a comment that is not ASCII (so latin-1 differs from UTF-8).
SPEC_TOML = """\
# the café sweep: 4 cells
seed = 5
[[grids]]
command = "theory"
family = ["simhash", "voronoi"]
buckets = [4, 16]
cosine = 0.5
"""
#: Places of a spec (a path of keys) and the word an error about that place must hold.
PLACES = {
    (): None,
    ("seed",): "seed",
    ("grids",): "grids",
    ("grids", 0): "grids[0]",
    ("grids", 0, "command"): "command",
    ("grids", 0, "family"): "family",
    ("grids", 0, "family", 0): "family",
    ("grids", 0, "buckets"): "buckets",
    ("grids", 0, "buckets", 1): "buckets",
    ("grids", 0, "cosine"): "cosine",
}
#: capsys and tmp_path serve every example (each example rewrites its files).
HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]

# --- writing hostile specs ------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from([10**19, -(2**63), 2**64, 10**400, 4, 16, 0, -1])
    | st.floats()
    | st.sampled_from(["4", "0.5", "simhash", "theory", "", "nan", "1e400"])
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


class Pairs(list):
    """A JSON/TOML table as a list of ``(key, value)``, so a key can be given twice."""


def pairs(value):
    """``value`` with every dict turned into :class:`Pairs` (recursively)."""
    if isinstance(value, dict):
        return Pairs((k, pairs(v)) for k, v in value.items())
    if isinstance(value, list):
        return [pairs(v) for v in value]
    return value


def dump_json(value) -> str:
    """JSON text of ``value`` (:class:`Pairs` may repeat a key)."""
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump_json(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump_json(v) for v in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # json.dumps refuses ints of more than 4300 digits
    return json.dumps(value)


def _toml_str(text: str) -> str:
    escaped = "".join(
        f"\\u{ord(c):04X}" if c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F else c for c in text
    )
    return f'"{escaped}"'


def toml_value(value) -> str:
    """An inline TOML value (None, which TOML lacks, as an empty inline table)."""
    if value is None:
        return "{}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_str(value)
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{_toml_str(k)} = {toml_value(v)}" for k, v in value) + "}"
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


def dump_toml(value) -> str:
    """A TOML document: a table's keys as lines; anything else as the bare value (invalid)."""
    if isinstance(value, Pairs):
        return "".join(f"{_toml_str(k)} = {toml_value(v)}\n" for k, v in value)
    return toml_value(value) + "\n"


def replaced(spec, place: tuple, value):
    """A copy of ``spec`` (as :class:`Pairs`) with the value at ``place`` replaced."""
    if not place:
        return pairs(value)
    spec = pairs(json.loads(json.dumps(spec)))
    node = spec
    for key in place[:-1]:
        node = dict(node)[key] if isinstance(node, Pairs) else node[key]
    last = place[-1]
    if isinstance(node, Pairs):
        node[[k for k, _ in node].index(last)] = (last, pairs(value))
    else:
        node[last] = pairs(value)
    return spec


# --- running the CLI ------------------------------------------------------------------------


#: ``lshsim``'s parser, built once: ``main`` builds all its subcommands' parsers on every call
#: (half of this file's time went to ~550 rebuilds); :func:`run` lends main this one.
_PARSER = functools.cache(build_parser)


def run(argv: list[str], capsys, work: bool = False) -> tuple[int, str]:
    """``lshsim ARGV`` in process; its exit status (0 where only the checks ran) and stderr."""
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli_main, "build_parser", _PARSER)
        if work:
            rc = main(argv)
        else:
            with checks_only():
                try:
                    rc = main(argv)
                except ChecksPassed:
                    rc = 0
    return rc, capsys.readouterr().err


def assert_clean(rc: int, err: str, *names: str) -> None:
    """Exit 0, or exit 2 with one line that holds one of ``names`` (a file or field)."""
    assert rc in (0, 2), err
    if rc == 2:
        assert err.startswith("lshsim: error: ") and err.count("\n") == 1, err
        assert any(n in err for n in names), (names, err)


def _shown(name: str) -> list[str]:
    return [name, ascii(name)[1:-1], repr(name)]


def check_spec_file(path: Path, capsys, field: str | None = None) -> int:
    """Run ``lshsim sweep PATH --out`` (checks only); assert it ends cleanly; return the status."""
    out = path.parent / "out"
    rc, err = run(["sweep", str(path), "--out", str(out), "--workers", "0"], capsys)
    assert_clean(rc, err, str(path))
    if rc == 2 and field is not None:
        assert field in err, (field, err)
    assert not out.exists()  # refused or stopped at its checks: nothing written
    return rc


@pytest.fixture
def spec_dir(tmp_path):
    return tmp_path


@settings(derandomize=True, max_examples=examples(120), deadline=None, suppress_health_check=HEALTH)
@given(
    fmt=st.sampled_from(["json", "toml"]),
    place=st.sampled_from(list(PLACES)),
    value=VALUES,
)
def test_a_hostile_value_anywhere_in_a_spec(spec_dir, capsys, fmt, place, value):
    text = (dump_json if fmt == "json" else dump_toml)(replaced(SPEC, place, value))
    path = spec_dir / f"spec.{fmt}"
    path.write_text(text, encoding="utf-8")
    check_spec_file(path, capsys, PLACES[place])  # an error names the field replaced


@settings(derandomize=True, max_examples=examples(40), deadline=None, suppress_health_check=HEALTH)
@given(
    fmt=st.sampled_from(["json", "toml"]),
    where=st.sampled_from([(), ("grids", 0)]),
    key=st.sampled_from(["seed", "grids", "command", "family", "buckets", "cosine"]) | TEXT,
    value=SCALARS,
)
def test_a_key_given_twice_in_a_spec(spec_dir, capsys, fmt, where, key, value):
    spec = pairs(json.loads(json.dumps(SPEC)))
    table = spec if not where else dict(spec)["grids"][0]
    table.append((key, pairs(value)))
    text = (dump_json if fmt == "json" else dump_toml)(spec)
    path = spec_dir / f"spec.{fmt}"
    path.write_text(text, encoding="utf-8")
    existing = {k for k, _ in table[:-1]}
    rc = check_spec_file(path, capsys)
    if key in existing:
        assert rc == 2


@settings(derandomize=True, max_examples=examples(40), deadline=None, suppress_health_check=HEALTH)
@given(fmt=st.sampled_from(["json", "toml"]), data=st.data())
def test_a_truncated_spec(spec_dir, capsys, fmt, data):
    raw = (json.dumps(SPEC, indent=1) if fmt == "json" else SPEC_TOML).encode()
    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    path = spec_dir / f"spec.{fmt}"
    path.write_bytes(raw[:cut])
    check_spec_file(path, capsys)


@pytest.mark.parametrize("fmt", ["json", "toml"])
@pytest.mark.parametrize(
    "encoding", ["utf-8", "latin-1", "utf-16", "utf-16-le", "utf-32", "utf-8-sig", "cp1252"]
)
def test_a_spec_in_another_encoding(tmp_path, capsys, fmt, encoding):
    text = json.dumps(SPEC, indent=1) if fmt == "json" else SPEC_TOML
    path = tmp_path / f"spec.{fmt}"
    path.write_bytes(text.encode(encoding))
    rc = check_spec_file(path, capsys)
    try:  # UTF-8, with or without a byte-order mark, reads; other encodings are refused
        same = path.read_bytes().decode("utf-8-sig") == text
    except UnicodeDecodeError:
        same = False
    assert rc == (0 if same else 2)


@settings(derandomize=True, max_examples=examples(40), deadline=None, suppress_health_check=HEALTH)
@given(fmt=st.sampled_from(["json", "toml"]), blob=st.binary(max_size=200))
@example(fmt="json", blob=b"\xff\xfe{\x00")
@example(fmt="toml", blob=b"\x00")
def test_binary_garbage_as_a_spec(spec_dir, capsys, fmt, blob):
    path = spec_dir / f"spec.{fmt}"
    path.write_bytes(blob)
    check_spec_file(path, capsys)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"seed": 1' + "0" * 5000 + ', "grids": []}', "4300"),  # past int()'s 4300 digits
        ("seed = 1" + "0" * 5000 + "\n", "4300"),
        (
            '{"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "cosine": '
            "1" + "0" * 400 + "}]}",
            "cosine",
        ),  # an int too large for a float
        (
            '{"grids": [{"command": "theory", "family": "simhash", "buckets": 4, "overlap": '
            '[0.5], "length": 8, "dim": [' + "1" * 400 + "]}]}",
            "dim",
        ),
        ("[" * 100_000 + "]" * 100_000, None),
        ('{"seed": 1, "seed": 2, "grids": []}', "seed"),
    ],
    ids=[
        "json-5000-digits",
        "toml-5000-digits",
        "float-400-digits",
        "int-400-digits",  # accepted by the spec, refused by the cell's check
        "deep",
        "twice",
    ],
)
def test_spec_regressions(tmp_path, capsys, text, field):
    path = tmp_path / ("spec.toml" if text.startswith("seed =") else "spec.json")
    path.write_text(text)
    assert check_spec_file(path, capsys, field) == 2


def test_a_spec_that_is_not_a_regular_file(tmp_path, capsys):
    (tmp_path / "dir.json").mkdir()
    assert check_spec_file(tmp_path / "dir.json", capsys) == 2
    os.mkfifo(tmp_path / "fifo.toml")  # reading it would wait for a writer forever
    assert check_spec_file(tmp_path / "fifo.toml", capsys) == 2


# --- hostile sweep folders ------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished sweep of :data:`SPEC` (4 cells in 2 parts), its spec file, another's part."""
    tmp = tmp_path_factory.mktemp("fuzz")
    run_sweep(parse_spec(SPEC), tmp / "s", batch=2)
    run_sweep(parse_spec({**SPEC, "seed": 6}), tmp / "other", batch=4)
    (tmp / "spec.json").write_text(json.dumps(SPEC))
    return tmp


def check_folder(folder: Path, spec: Path, capsys, *names: str) -> tuple[int, int]:
    """``--plot`` (checks only) and ``--resume`` (run) on ``folder``; both end cleanly."""
    everything = [str(folder), *names]
    rc_plot, err = run(["sweep", "--plot", str(folder)], capsys)
    assert_clean(rc_plot, err, *everything)
    argv = ["sweep", str(spec), "--out", str(folder), "--resume", "--workers", "0", "--json"]
    rc_resume, err = run(argv, capsys, work=True)
    assert_clean(rc_resume, err, *everything)
    try:  # the library's reader: the sweep's 4 rows, or one line
        rows = read_table(folder)
    except ValueError as exc:
        assert "\n" not in str(exc), exc
    else:
        assert rows.num_rows == 4 or rc_resume == 2, rows.num_rows
    return rc_plot, rc_resume


def _copy(finished: Path) -> tuple[Path, Path]:
    work = Path(tempfile.mkdtemp(dir=finished))
    shutil.copytree(finished / "s", work / "s")
    return work / "s", finished / "spec.json"


FOREIGN = st.sampled_from(
    ["notes.txt", "x.parquet", ".DS_Store", "_SUCCESS", "part-00000.parquet.bak", "part-7.txt"]
) | st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="/\0"), min_size=1, max_size=12
).filter(lambda n: n not in (".", ".."))
#: Names the sweep itself writes (an entry so named is not foreign).
OWN = re.compile(r"_sweep\.json|_sweep\.lock|part-\d+\.parquet|\.part-\d+\.parquet\.[0-9a-f]+\.tmp")


@settings(derandomize=True, max_examples=examples(30), deadline=None, suppress_health_check=HEALTH)
@given(name=FOREIGN, blob=st.binary(max_size=64), folder=st.booleans())
@example(name="notes.txt", blob=b"hello", folder=False)
@example(name="x.parquet", blob=b"PAR1", folder=False)
@example(name="sub", blob=b"", folder=True)
@example(name="a\nb", blob=b"", folder=False)
@example(name="_figures", blob=b"", folder=False)
def test_a_foreign_file_is_named(finished, capsys, name, blob, folder):
    path, spec = _copy(finished)
    target = path / name
    if folder and not target.exists():
        target.mkdir()
    elif not folder and not target.is_dir():
        target.write_bytes(blob)
    rc_plot, rc_resume = check_folder(path, spec, capsys, *_shown(name))
    if name == LOCK:
        assert rc_resume == 0
    elif not OWN.fullmatch(name) and not (name == "_figures" and folder):
        assert rc_plot == rc_resume == 2  # a file the sweep did not write


def test_a_part_of_another_sweep_is_named(finished, capsys):
    path, spec = _copy(finished)
    shutil.copy(finished / "other" / "part-00000.parquet", path / "part-00002.parquet")
    assert check_folder(path, spec, capsys, "part-00002.parquet") == (2, 2)


@settings(derandomize=True, max_examples=examples(40), deadline=None, suppress_health_check=HEALTH)
@given(
    index=st.sampled_from([0, 1]),
    how=st.sampled_from(["truncate", "garbage", "flip", "append", "empty"]),
    data=st.data(),
)
def test_a_damaged_part_is_named(finished, capsys, index, how, data):
    path, spec = _copy(finished)
    part = path / f"part-0000{index}.parquet"
    raw = part.read_bytes()
    if how == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw) - 1), label="cut")]
    elif how == "garbage":
        raw = data.draw(st.binary(max_size=300), label="garbage")
    elif how == "flip":
        at = data.draw(st.integers(0, len(raw) - 1), label="at")
        raw = (
            raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255), label="x")]) + raw[at + 1 :]
        )
    elif how == "append":
        raw += data.draw(st.binary(min_size=1, max_size=50), label="tail")
    else:
        raw = b""
    part.write_bytes(raw)
    check_folder(path, spec, capsys, part.name)


@pytest.mark.parametrize(
    ("checksums", "xor"),
    [(True, 0x01), (False, 0x01), (False, 0x80)],
    ids=["crc", "no-crc", "no-crc-not-utf8"],
)
def test_a_part_altered_in_place(finished, capsys, checksums, xor):
    """A byte of a cell's key flipped inside a part (the fuzzer's find, at byte 103 of a part
    written without page checksums): ``^ 0x80`` once failed in a line naming no file (text
    that is not UTF-8), ``^ 0x01`` once read as 2 cells the spec does not have, and
    ``--resume`` ran the 2 it missed (6 rows). A part written with page checksums (as parts
    are now) names the damaged page; one without, the key that is not a cell of the spec."""
    import pyarrow.parquet as pq

    path, spec = _copy(finished)
    part = path / "part-00000.parquet"
    if not checksums:  # as parts were written before
        pq.write_table(pq.read_table(part), part)
    raw = part.read_bytes()
    at = raw.find(b'"command"') + 1  # in the dictionary of the cell keys
    part.write_bytes(raw[:at] + bytes([raw[at] ^ xor]) + raw[at + 1 :])
    assert check_folder(path, spec, capsys, part.name) == (2, 2)


META_PLACES = [
    (),
    ("format",),
    ("spec",),
    ("spec", "seed"),
    ("spec", "grids"),
    ("spec", "grids", 0),
    ("spec", "grids", 0, "family"),
    ("spec", "grids", 0, "cosine"),
    ("spec_sha256",),
    ("cells",),
    ("sweep_id",),
]


@settings(derandomize=True, max_examples=examples(50), deadline=None, suppress_health_check=HEALTH)
@given(place=st.sampled_from(META_PLACES), value=VALUES, rehash=st.booleans())
@example(place=("format",), value=True, rehash=False)
@example(place=("format",), value=4.0, rehash=False)
@example(place=("spec", "grids", 0, "cosine"), value=None, rehash=True)
@example(place=("spec", "grids", 0, "family"), value=["minhash"], rehash=True)
@example(place=("spec", "grids", 0), value={"command": "simulate"}, rehash=True)
@example(place=("sweep_id",), value=7, rehash=False)
def test_a_meta_file_of_wrong_types(finished, capsys, place, value, rehash):
    """``_sweep.json`` altered; ``rehash`` also rewrites its ``spec_sha256`` to match."""
    path, spec = _copy(finished)
    meta = replaced(json.loads((path / META).read_text()), place, value)
    if rehash and isinstance(meta, Pairs):
        plain = json.loads(dump_json(meta))
        if isinstance(plain, dict):
            plain["spec_sha256"] = spec_hash(plain.get("spec"))
            meta = pairs(plain)
    (path / META).write_text(dump_json(meta))
    check_folder(path, spec, capsys, META, "part-00000.parquet", "part-00001.parquet")


@pytest.mark.parametrize(
    "how", ["truncated", "garbage", "missing", "folder", "utf-16", "empty-folder", "lock-only"]
)
def test_a_damaged_or_missing_meta_file(finished, capsys, how):
    path, spec = _copy(finished)
    raw = (path / META).read_bytes()
    if how == "truncated":
        (path / META).write_bytes(raw[: len(raw) // 2])
    elif how == "garbage":
        (path / META).write_bytes(b"\x00\xff" * 20)
    elif how == "missing":
        (path / META).unlink()
    elif how == "folder":
        (path / META).unlink()
        (path / META).mkdir()
    elif how == "utf-16":
        (path / META).write_bytes(raw.decode().encode("utf-16"))
    else:
        shutil.rmtree(path)
        path.mkdir()
        if how == "lock-only":
            (path / LOCK).write_text("")
    # --resume into a folder that holds no sweep is refused, never started there
    assert check_folder(path, spec, capsys, META) == (2, 2)


def test_resume_into_a_missing_folder_is_refused(finished, capsys, tmp_path):
    argv = ["sweep", str(finished / "spec.json"), "--out", str(tmp_path / "none"), "--resume"]
    rc, err = run(argv, capsys, work=True)
    assert_clean(rc, err, META)
    assert rc == 2 and not (tmp_path / "none").exists()


@pytest.mark.parametrize("what", [META, "part-00001.parquet"])
def test_a_sweep_file_that_is_a_fifo(finished, capsys, what):
    """A FIFO in a sweep file's place (reading it would wait for a writer forever)."""
    path, spec = _copy(finished)
    (path / what).unlink()
    os.mkfifo(path / what)
    assert check_folder(path, spec, capsys, what) == (2, 2)
