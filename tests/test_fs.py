"""Run-directory writes: atomic, and never through a symlink planted at the name."""

from __future__ import annotations

import os
from pathlib import Path

from loopwright._fs import atomic_write, open_append


def test_atomic_write_replaces_a_symlink_and_leaves_its_target_alone(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "grade.json").symlink_to(outside)
    atomic_write(run / "grade.json", '{"score": 1}')
    assert outside.read_text() == "precious\n"
    assert not (run / "grade.json").is_symlink()
    assert (run / "grade.json").read_text() == '{"score": 1}'
    assert sorted(p.name for p in run.iterdir()) == ["grade.json"]  # no temporary file left


def test_atomic_write_ignores_a_planted_temporary_name(tmp_path: Path) -> None:
    """The old fixed `.name.tmp` was itself a name an agent could link elsewhere."""
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    (tmp_path / ".record.json.tmp").symlink_to(outside)
    atomic_write(tmp_path / "record.json", b"bytes \xff")
    assert outside.read_text() == "precious\n"
    assert (tmp_path / "record.json").read_bytes() == b"bytes \xff"


def test_a_failed_atomic_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "a-dir").mkdir()
    try:
        atomic_write(tmp_path / "a-dir", "x")
    except OSError:
        pass
    else:
        raise AssertionError("writing over a directory must fail")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-dir"]


def test_open_append_replaces_a_symlink_instead_of_following_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    log = tmp_path / "events.jsonl"
    log.symlink_to(outside)
    fd = open_append(log)
    try:
        os.write(fd, b"line\n")
    finally:
        os.close(fd)
    assert outside.read_text() == "precious\n"
    assert not log.is_symlink() and log.read_text() == "line\n"


def test_open_append_appends_to_a_regular_file(tmp_path: Path) -> None:
    log = tmp_path / "ledger.jsonl"
    log.write_text("one\n")
    fd = open_append(log)
    try:
        os.write(fd, b"two\n")
    finally:
        os.close(fd)
    assert log.read_text() == "one\ntwo\n"


def test_a_reopened_event_log_drops_a_line_a_kill_cut_off(tmp_path: Path) -> None:
    from loopwright.records import EventWriter, read_events
    from loopwright.records._events import ErrorEvent

    path = tmp_path / "events.jsonl"
    with EventWriter(path) as writer:
        writer.write(ErrorEvent(t=0.0, where="first", message="whole"))
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"type": "error", "t": 1.0, "wher')  # killed mid-write
    with EventWriter(path) as writer:
        writer.write(ErrorEvent(t=2.0, where="resumed", message="after"))
    events = read_events(path)  # before the fix: a ConfigError on the glued line
    assert [e.where for e in events if isinstance(e, ErrorEvent)] == ["first", "resumed"]


def test_drop_torn_tail_keeps_a_file_that_ends_with_a_newline(tmp_path: Path) -> None:
    import os

    from loopwright._fs import drop_torn_tail

    path = tmp_path / "log"
    path.write_bytes(b"one\ntwo\n")
    fd = os.open(path, os.O_RDWR)
    try:
        assert drop_torn_tail(fd) == 0
    finally:
        os.close(fd)
    path.write_bytes(b"x" * 70_000)  # no newline at all: everything is a torn line
    fd = os.open(path, os.O_RDWR)
    try:
        assert drop_torn_tail(fd) == 70_000
    finally:
        os.close(fd)
    assert path.read_bytes() == b""
