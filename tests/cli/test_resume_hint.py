"""Ctrl-C (or SIGTERM) inside a resumable command says how to continue it and exits 130."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopwright.cli.research as research_cli
from loopwright.cli import main


def test_an_interrupted_research_run_says_how_to_continue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(research_cli, "open_loop", interrupted)
    code = main(["research", "run", "--dir", str(tmp_path / "wd"), "--model", "sim"])
    err = capsys.readouterr().err
    assert code == 130
    assert f"loopwright research run --dir {tmp_path / 'wd'}" in err
    assert "Traceback" not in err
