"""Evaluation: one run of a workflow on a task (run_task), the Evaluator, and the InnerLoop."""

from __future__ import annotations

from loopwright.evaluation._aggregate import Aggregate, aggregate
from loopwright.evaluation._evaluator import (
    Evaluation,
    Evaluator,
    InnerLoop,
    ModelFactory,
    task_run_dir,
)
from loopwright.evaluation._settings import EvalSettings, run_seed
from loopwright.evaluation._task_run import GRADE_FILE, TaskRunSpec, run_task

__all__ = [
    "GRADE_FILE",
    "Aggregate",
    "EvalSettings",
    "Evaluation",
    "Evaluator",
    "InnerLoop",
    "ModelFactory",
    "TaskRunSpec",
    "aggregate",
    "run_seed",
    "run_task",
    "task_run_dir",
]
