"""Path checks made before a command writes anything: each refuses with the path and a fix,
and none creates anything."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.errors import ConfigError, UsageError
from loopwright.store import (
    RunDir,
    check_cache_file,
    check_new_dir,
    check_output_file,
    read_text_input,
)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A directory no write reaches, even as root: a read-only tmpfs (mode 0555 when not
    root). Skips where neither can be had."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0:
        ro.chmod(0o555)
        yield ro
        ro.chmod(0o755)
        return
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(ro)],
                          capture_output=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs: {done.stderr.decode()[:200]}")
    try:
        yield ro
    finally:
        subprocess.run(["umount", str(ro)], check=False)


def test_the_read_only_fixture_really_refuses_writes(read_only: Path) -> None:
    with pytest.raises(OSError):
        (read_only / "x").mkdir()


def test_a_new_dir_under_a_read_only_directory_is_refused_and_nothing_created(
    read_only: Path,
) -> None:
    with pytest.raises(UsageError, match=r"read-only file system|not writable") as info:
        check_new_dir(read_only / "run" / "deeper", "--run-dir")
    assert "fix:" in str(info.value) and str(read_only) in str(info.value)
    with pytest.raises(UsageError):
        RunDir.create(read_only / "run", label="t")
    assert list(read_only.iterdir()) == []


def test_a_new_dir_under_a_file_or_at_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UsageError, match="is a file, not a directory"):
        check_new_dir(tmp_path / "afile" / "a" / "b", "--dir")
    with pytest.raises(UsageError, match=r"--dir .* is a file"):
        check_new_dir(tmp_path / "afile", "--dir")
    check_new_dir(tmp_path / "new" / "deeper", "--dir")  # fine: nothing is created
    assert not (tmp_path / "new").exists()


def test_output_and_cache_files(tmp_path: Path, read_only: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "text.db").write_text("hello")
    with pytest.raises(UsageError, match="is a directory"):
        check_output_file(tmp_path / "d", "--output")
    with pytest.raises(UsageError, match=r"read-only|not writable"):
        check_output_file(read_only / "r.html", "--output")
    with pytest.raises(UsageError, match="not a SQLite file"):
        check_cache_file(tmp_path / "text.db")
    with pytest.raises(UsageError, match=r"read-only|not writable"):
        check_cache_file(read_only / "c.db")
    check_cache_file(tmp_path / "later" / "c.db")  # a new file in a new directory is fine


def test_read_text_input_refuses_binary_missing_and_directories(tmp_path: Path) -> None:
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        read_text_input(tmp_path / "bin", "--goal-file")
    with pytest.raises(ConfigError, match="does not exist"):
        read_text_input(tmp_path / "none", "--goal-file")
    with pytest.raises(ConfigError, match="is a directory"):
        read_text_input(tmp_path, "--goal-file")
    (tmp_path / "ok.md").write_text("# Goal\n")
    assert read_text_input(tmp_path / "ok.md", "--goal-file") == "# Goal\n"
