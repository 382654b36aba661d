"""lshsim._io: atomic writes and the output-folder check."""

import os

import pytest

from lshsim._io import check_output_dir, json_field, read_json, write_atomic


def test_write_atomic_replaces_and_leaves_no_temporary(tmp_path):
    """A write replaces the file whole and leaves no temporary file beside it."""
    path = tmp_path / "sub" / "a.txt"
    write_atomic(path, "one")
    write_atomic(path, b"two")
    assert path.read_text() == "two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["a.txt"]


def test_check_output_dir_accepts_new_and_existing_folders(tmp_path):
    """A folder to create (several levels deep) or an existing one passes, and nothing is made."""
    assert check_output_dir(tmp_path / "x" / "y") == tmp_path / "x" / "y"
    assert not (tmp_path / "x").exists()
    assert check_output_dir(tmp_path) == tmp_path


def test_check_output_dir_refuses_a_file(tmp_path):
    """An existing file is refused, naming the option."""
    f = tmp_path / "f"
    f.write_text("")
    with pytest.raises(ValueError, match=r"^--out: .* is an existing file"):
        check_output_dir(f)


def test_check_output_dir_refuses_a_path_under_a_file(tmp_path):
    """A path below a file is refused, naming the option and the file."""
    f = tmp_path / "f"
    f.write_text("")
    with pytest.raises(ValueError, match=r"^--dir: .* lies under .*f, which is a file"):
        check_output_dir(f / "a" / "b", "--dir")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_check_output_dir_refuses_a_read_only_folder(tmp_path):
    """A read-only parent folder is refused."""
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(ValueError, match="not writable"):
            check_output_dir(ro / "out")
    finally:
        ro.chmod(0o755)


def test_check_output_dir_refuses_when_access_is_denied(tmp_path, monkeypatch):
    """What the OS denies (a read-only folder for a non-root user) is refused, even as root."""
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match=r"^--out: .* is not writable"):
        check_output_dir(tmp_path / "out")


@pytest.fixture
def umask_022():
    """Run the test under umask 022 (the usual default), restoring the caller's umask."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path):
    return path.stat().st_mode & 0o777


def test_write_atomic_gives_the_mode_open_gives(tmp_path, umask_022):
    """Under umask 022 a new file is 0644, like a plain open(); not mkstemp's 0600."""
    write_atomic(tmp_path / "a.json", "{}")
    (tmp_path / "b.json").write_text("{}")
    assert _mode(tmp_path / "a.json") == _mode(tmp_path / "b.json") == 0o644


def test_write_atomic_follows_the_umask(tmp_path):
    """A stricter umask gives a stricter mode (077: 0600), as open() would."""
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "a", "x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a") == 0o600


def test_write_atomic_keeps_a_replaced_files_mode(tmp_path, umask_022):
    """Replacing a file keeps its permission bits, as writing it with open() does."""
    path = tmp_path / "a"
    path.write_text("old")
    path.chmod(0o640)
    write_atomic(path, "new")
    assert path.read_text() == "new" and _mode(path) == 0o640


def test_write_atomic_failure_leaves_nothing(tmp_path, monkeypatch):
    """A failing write removes its temporary file and leaves the target untouched."""
    path = tmp_path / "a"
    path.write_text("old")

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, "new")
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_save_figure_files_are_0644(tmp_path, umask_022):
    """Every figure format save_figure writes is 0644 under umask 022."""
    import matplotlib.pyplot as plt

    from lshsim.plots import save_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    try:
        paths = save_figure(fig, tmp_path / "fig")
    finally:
        plt.close(fig)
    assert [p.name for p in paths] == ["fig.png", "fig.svg"]
    assert {_mode(p) for p in paths} == {0o644}


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (None, "no such file"),
        (b'{"a": 1', "not valid JSON, truncated or damaged (Expecting ',' delimiter: line 1"),
        ("{}".encode("utf-16"), "not UTF-8 text (byte 0xff at offset 0)"),
        (b'{"a": "\xe9"}', "not UTF-8 text (byte 0xe9 at offset 7)"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"a": 1, "a": 2}', "the key 'a' appears twice in one object"),
        (b"[1, 2]", "holds a list, not an object"),
        (b'{"a": NaN}', "NaN is not a number JSON allows"),
        (b'{"a": 1e999}', "the number 1e999 is too large for a float"),
        (b'{"a": ' + b"9" * 5000 + b"}", "an integer of 5000 digits (over 308"),
    ],
)
def test_read_json_names_the_file_in_one_line(tmp_path, raw, why):
    """Every way a JSON file can be bad is one ValueError line: the file, then why."""
    path = tmp_path / "f.json"
    if raw is not None:
        path.write_bytes(raw)
    with pytest.raises(ValueError) as err:
        read_json(path, finite=True, max_digits=308)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and why in message and "\n" not in message


def test_read_json_takes_nan_unless_told_and_names_as_told(tmp_path):
    path = tmp_path / "f.json"
    path.write_text('{"a": NaN}')
    assert read_json(path)["a"] != read_json(path)["a"]
    with pytest.raises(ValueError, match=r"^B \(.*f\.json\): a folder, not a file$"):
        read_json(tmp_path, where=f"B ({path})")


def test_json_field_checks_the_type():
    doc = {"n": 3, "b": True, "s": "x", "z": None, "f": float("nan")}
    assert json_field(doc, "n", "integer", "W") == 3
    assert json_field(doc, "z", "string", "W", optional=True) is None
    for key, kind, why in [
        ("b", "integer", "W: field 'b' must be an integer, got a boolean"),
        ("s", "number", "W: field 's' must be a number, got a string"),
        ("f", "number", "W: field 'f' must be a number, got nan"),
        ("z", "string", "W: field 'z' is null"),
        ("q", "list", "W: field 'q' is missing"),
    ]:
        with pytest.raises(ValueError, match=f"^{why}$"):
            json_field(doc, key, kind, "W")
