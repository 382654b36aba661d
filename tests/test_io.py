"""lshsim._io: atomic writes and the output-folder check."""

import os

import pytest

from lshsim._io import check_output_dir, write_atomic


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
