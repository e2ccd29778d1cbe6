"""A task without a gold (a Harbor collection without solution/) can be run, with a warning:
`bench validate` could not check that its tests can be passed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopwright.cli import main
from tests.cli.test_run_cli import gold_script
from tests.taskfactory import make_calc_task


def test_a_run_warns_about_tasks_without_a_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = make_calc_task(tmp_path / "bench")
    shutil.rmtree(task.root / "solution")
    script = gold_script(tmp_path / "script.yaml")
    code = main(
        ["run", "builder-only", "--bench", str(tmp_path / "bench"), "--no-report",
         "--model", f"scripted:{script}", "--run-dir", str(tmp_path / "run")]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "1 task(s) have no gold" in err and "calc-ops" in err
