"""The CLI's safety net: an OS or SQLite error escaping a command is one paragraph and exit 2
(naming the path and a fix), a failed run (a LoopwrightError that is not the user's) exit 1;
never a traceback. The OS errors are real ones, raised by the OS."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import loopwright.cli.report as report_cli
from loopwright.cli import main
from loopwright.errors import ModelUnavailableError


def _fail_with(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    def write_report(run_dir: Path, output: Path | None = None) -> None:
        raise exc

    monkeypatch.setattr(report_cli, "write_report", write_report)


def test_an_os_error_escaping_a_command_is_exit_2_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("x")
    try:  # a real ENOTDIR from the OS: a directory under a file
        (tmp_path / "afile" / "sub").mkdir()
    except OSError as exc:
        _fail_with(monkeypatch, exc)
    code = main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "Not a directory" in err and str(tmp_path / "afile" / "sub") in err and "fix:" in err


def test_a_sqlite_error_escaping_a_command_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "adir").mkdir()
    try:  # a real "unable to open database file": a directory where the file should be
        sqlite3.connect(tmp_path / "adir").execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:
        _fail_with(monkeypatch, exc)
    code = main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "unable to open database file" in err and "--cache" in err
    assert "Traceback" not in err


def test_a_full_disk_says_so_and_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fail_with(monkeypatch, sqlite3.OperationalError("database or disk is full"))
    code = main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "disk is full" in err and "--resume" in err


def test_a_failed_run_is_exit_1_with_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _fail_with(monkeypatch, ModelUnavailableError("no call to the model x succeeded"))
    code = main(["report", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "no call to the model x succeeded" in err and "Traceback" not in err
