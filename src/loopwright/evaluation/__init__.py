"""Evaluation: one run of a workflow on a task (run_task), the Evaluator, the InnerLoop, and the
executors that run many evaluations at once (local process pool, Ray) with the fitness cache."""

from __future__ import annotations

from loopwright.evaluation._aggregate import Aggregate, aggregate
from loopwright.evaluation._cache import (
    CACHE_HIT_FILE,
    CachedExecutor,
    FitnessCache,
    cache_key,
)
from loopwright.evaluation._evaluator import (
    Evaluation,
    Evaluator,
    InnerLoop,
    ModelFactory,
    task_run_dir,
)
from loopwright.evaluation._executor import (
    EvalJob,
    Executor,
    FailedAttempt,
    JobResult,
    JobStatus,
    JobStream,
    SerialExecutor,
    failure_record,
    in_job_order,
    job_timeout_s,
    schedule,
)
from loopwright.evaluation._executor_local import LocalExecutor, default_workers
from loopwright.evaluation._executor_select import (
    EXECUTOR_KINDS,
    ExecutorSettings,
    executor_settings,
    make_executor,
)
from loopwright.evaluation._run_api import (
    RUN_SCHEMA_VERSION,
    SUMMARY_FILE,
    RunInputs,
    RunPlan,
    RunResult,
    RunSummary,
    TaskRow,
    WorkflowRef,
    WorkflowResult,
    run,
    select_tasks,
    workflow_labels,
)
from loopwright.evaluation._settings import EvalSettings, run_seed
from loopwright.evaluation._task_run import GRADE_FILE, TaskRunSpec, run_task

__all__ = [
    "CACHE_HIT_FILE",
    "EXECUTOR_KINDS",
    "GRADE_FILE",
    "RUN_SCHEMA_VERSION",
    "SUMMARY_FILE",
    "Aggregate",
    "CachedExecutor",
    "EvalJob",
    "EvalSettings",
    "Evaluation",
    "Evaluator",
    "Executor",
    "ExecutorSettings",
    "FailedAttempt",
    "FitnessCache",
    "InnerLoop",
    "JobResult",
    "JobStatus",
    "JobStream",
    "LocalExecutor",
    "ModelFactory",
    "RunInputs",
    "RunPlan",
    "RunResult",
    "RunSummary",
    "SerialExecutor",
    "TaskRow",
    "TaskRunSpec",
    "WorkflowRef",
    "WorkflowResult",
    "aggregate",
    "cache_key",
    "default_workers",
    "executor_settings",
    "failure_record",
    "in_job_order",
    "job_timeout_s",
    "make_executor",
    "run",
    "run_seed",
    "run_task",
    "schedule",
    "select_tasks",
    "task_run_dir",
    "workflow_labels",
]
