"""A registered evaluator function under the Ray executor: a Ray worker is not forked from the
process that registered it, so the registered functions travel with the jobs (pickled by value
when defined in a notebook or a function, as here) and are registered in the worker before its
job runs. On a real local Ray instance (about 30-60 s to start on 2 busy cores)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright._caller import called_from_cli, caller
from loopwright.evaluation import EvalJob, EvalSettings, Evaluator
from loopwright.evaluation._executor_ray import RayExecutor
from loopwright.models import DEFAULT_PRICES, ChatModel
from loopwright.sandbox import LocalSandbox
from loopwright.scoring import (
    Assessment,
    Check,
    Submission,
    register_evaluator,
    unregister_evaluator,
)
from loopwright.workflow import workflow_from_text
from tests.evaluation.test_function_grader import NAME, WORKFLOW, _model, _task

pytest.importorskip("ray", reason="ray is not installed: pip install 'loopwright[ray]'")


def test_a_registered_evaluator_grades_on_a_ray_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # a throwaway local instance
    marker = "graded by a function defined inside a test"

    def local_metric(sub: Submission) -> Assessment:  # nested: pickled by value
        ok = "def div" in sub.read_text("calc/core.py")
        said = f"{marker}, to {caller()}"  # who the worker's messages speak to
        return Assessment(score=float(ok), checks=(Check(name="div", passed=ok),), feedback=said)

    register_evaluator(NAME, local_metric)
    task = _task(tmp_path / "bench")

    def make_model(seed: int) -> ChatModel:
        return _model()

    ev = Evaluator(
        make_model, LocalSandbox(), DEFAULT_PRICES, EvalSettings(model="scripted:ray", seed=0)
    )
    executor = RayExecutor(None, workers=1, log_dir=tmp_path)
    try:
        job = EvalJob(workflow_from_text(WORKFLOW, "yaml"), task, 0, tmp_path / "r", "r")
        with called_from_cli():  # a `loopwright evolve --executor ray` command
            (result,) = list(executor.run(ev, [job]))
    finally:
        executor.close()
        unregister_evaluator(NAME)
    assert result.status == "ok" and result.record is not None
    grade = result.record.grade
    assert grade is not None and not grade.invalid, grade
    assert grade.score == 1.0 and grade.feedback == f"{marker}, to cli"
