"""A run whose disk fills up (a tmpfs, filled during calibration or a generation) stops with one
paragraph naming the cause, the path and the fix (exit 2, no traceback), and resumes after
space is freed with every file it wrote parseable and the uninterrupted run's result."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.faults.conftest import KINDS, events, outcome, resume, start


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs mounted for the test (skipped where tmpfs cannot be mounted)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(mount: Path) -> Path:
    """Take every free byte of the filesystem at `mount` with one file; return it."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 1 << 12, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)
    return filler


def assert_parseable(run_dir: Path) -> None:
    for path in run_dir.rglob("*"):
        if not path.is_file() or path.name.startswith("."):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".json":
            json.loads(text)
        elif path.suffix == ".jsonl":
            for line in text.splitlines():
                json.loads(line)
            assert not text or text.endswith("\n"), f"{path} ends with a cut-off line"
        elif path.suffix == ".yaml":
            yaml.safe_load(text)
    with sqlite3.connect(run_dir / "runs.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "count"), [(KINDS[0], 2), (KINDS[1], 1)])
def test_a_full_disk_stops_the_run_clearly_and_it_resumes_after_space_is_freed(
    whole: Path, disk: Path, kind: str, count: int
) -> None:
    run_dir = disk / "run"
    proc = start(run_dir)
    deadline = time.monotonic() + 300
    while len(events(run_dir, kind)) < count and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    filler = fill(disk)
    assert proc.wait(timeout=600) == 2
    message = proc.stderr.read().decode() if proc.stderr else ""
    assert "Traceback" not in message and "no space left" in message, message
    # the driver calls search.evolve: a Python caller is told the call that continues the run
    assert f"loopwright.resume({str(run_dir)!r})" in message and "free space" in message

    refused = resume(run_dir)  # still full: the CLI says the same, exit 2
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "no space left" in refused.stderr

    filler.unlink()
    done = resume(run_dir)
    assert done.returncode == 0, done.stderr
    assert_parseable(run_dir)
    for name in KINDS:
        after = events(run_dir, name)
        assert len(after) == len(set(after)) and set(after) == set(events(whole, name))
    assert outcome(run_dir) == outcome(whole)


def test_the_disk_full_message_is_one_paragraph(tmp_path: Path) -> None:
    from loopwright.store import out_of_space

    with pytest.raises(Exception) as caught, out_of_space(tmp_path, resume="RESUME"):
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.Error as exc:
            raise RuntimeError("while indexing") from exc
    text = str(caught.value)
    assert type(caught.value).__name__ == "DiskFullError"
    assert "no space left" in text and str(tmp_path) in text and "RESUME" in text
    assert len(text.splitlines()) == 3 and sys.version_info >= (3, 11) and os.sep in text
