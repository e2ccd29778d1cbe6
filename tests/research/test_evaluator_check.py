"""The research loop checks every function-graded task's evaluator up front, as `run` and
`evolve` do: one that cannot be found is one ConfigError naming the task and the fix, before
`research init` writes the directory and before `research run` writes anything in it."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopwright
from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.research import InitOptions, init_workdir
from loopwright.scoring import register_evaluator, unregister_evaluator
from tests.evaluation.test_function_reference import task_dir

NAME = "research-precheck-metric"


def _options(bench: Path) -> InitOptions:
    return InitOptions(goal="make calc whole", workflow="builder-only", bench=str(bench),
                       holdout_tasks=0, sandbox="local")  # fmt: skip


def _files(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*")}


def test_research_init_refuses_an_evaluator_it_cannot_find_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task_dir(tmp_path / "bench", NAME)  # graded by a function nobody registered
    target = tmp_path / "r"
    with pytest.raises(ConfigError) as refused:
        loopwright.research(target, init=_options(tmp_path / "bench"), iterations=1)
    assert f"task calc-ref is graded by the evaluator {NAME!r}" in refused.value.what
    assert "register_evaluator" in (refused.value.fix or "")
    assert not target.exists()
    code = main(["research", "init", "--dir", str(target), "--workflow", "builder-only",
                 "--bench", str(tmp_path / "bench"), "--goal", "g", "--holdout-tasks", "0"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and f"task calc-ref is graded by the evaluator {NAME!r}" in err
    assert "Traceback" not in err and not target.exists()


def test_research_run_refuses_an_evaluator_gone_since_init_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task_dir(tmp_path / "bench", NAME)
    target = tmp_path / "r"
    register_evaluator(NAME, lambda sub: 1.0)
    try:
        init_workdir(_options(tmp_path / "bench").model_copy(update={"dir": target}))
    finally:
        unregister_evaluator(NAME)
    before = _files(target)
    with pytest.raises(ConfigError, match=f"task calc-ref is graded by the evaluator '{NAME}'"):
        loopwright.research(target, iterations=1)
    code = main(["research", "run", "--dir", str(target), "--iterations", "1"])
    err = capsys.readouterr().err
    assert code == 2 and f"task calc-ref is graded by the evaluator {NAME!r}" in err
    assert _files(target) == before  # no ledger, no iteration, no lock left
