"""`loopwright.run`: run workflows on a benchmark's tasks, grade every run, write the run
directory (config.yaml, per-workflow evaluations, summary.json, models.yaml, ledger.jsonl) and
return the results. The `loopwright run` command is options and printing over it."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from loopwright._caller import spoken
from loopwright.errors import UsageError
from loopwright.evaluation._aggregate import Aggregate, aggregate
from loopwright.evaluation._evaluator import Evaluation, Evaluator
from loopwright.evaluation._settings import EvalSettings
from loopwright.models import (
    LEDGER_FILE,
    CostLedger,
    ModelsConfig,
    label_scope,
    resolve_model,
    routed_factory,
)
from loopwright.records import CycleRecord
from loopwright.runtime import EngineSettings, load_engine_settings
from loopwright.sandbox import default_sandbox
from loopwright.scoring import check_evaluators
from loopwright.store import RunDir, RunMeta
from loopwright.tasks import Benchmark, Task, load_benchmark
from loopwright.workflow import Workflow, resolve_task_workflow, workflow_hash, workflow_to_yaml

__all__ = [
    "RUN_SCHEMA_VERSION",
    "SUMMARY_FILE",
    "RunInputs",
    "RunPlan",
    "RunResult",
    "RunSummary",
    "TaskRow",
    "WorkflowRef",
    "WorkflowResult",
    "run",
    "select_tasks",
    "workflow_labels",
]

RUN_SCHEMA_VERSION = 2
SUMMARY_FILE = "summary.json"

OnRecord = Callable[[str, CycleRecord], None]


@dataclass(frozen=True)
class RunPlan:
    """What a run is about to do, once its inputs are checked and its directory exists."""

    run_dir: Path
    total_runs: int
    simulated: bool
    unvalidated: tuple[str, ...] = ()  # tasks without a gold: their grading was never checked
    renamed: tuple[tuple[str, str], ...] = ()
    """(name, label) of each workflow that shares its name with another in the run: it is kept
    apart under its label (see `workflow_labels`)."""


class TaskRow(BaseModel):
    """One task's results for one workflow, over its repetitions (a table row, a JSON object)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str
    level: int
    runs: int
    mean_score: float | None
    resolved: int
    invalid: int
    failure_category: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    mean_duration_s: float | None


class WorkflowResult(BaseModel):
    """One workflow's results: the aggregate, the mean score per level, one row per task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workflow: str
    hash: str
    aggregate: Aggregate
    by_level: dict[str, float | None]
    tasks: list[TaskRow]


class WorkflowRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    hash: str


class RunInputs(BaseModel):
    """What a `run` was asked to do: `config` of its config.yaml (RunMeta, kind run)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    settings: EvalSettings
    tasks: list[str]
    workflows: list[WorkflowRef]


class RunSummary(BaseModel):
    """`summary.json` (schema_version 2; version 1 had no `model`): the agent model, whether it
    was simulated, each workflow's results."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = RUN_SCHEMA_VERSION
    model: str | None = None
    simulated: bool
    workflows: list[WorkflowResult]


@dataclass(frozen=True)
class RunResult:
    """What `run` measured: the run directory, the summary (as in summary.json) and each
    workflow's Evaluation (every CycleRecord)."""

    run_dir: Path
    summary: RunSummary
    evaluations: list[Evaluation] = field(repr=False)
    tasks: list[Task] = field(repr=False)

    @property
    def simulated(self) -> bool:
        return self.summary.simulated


def run(
    workflows: str | Workflow | Sequence[str | Workflow],
    bench: str | os.PathLike[str] | Benchmark,
    *,
    run_dir: str | os.PathLike[str] | None = None,
    model: str | None = None,
    reps: int = 1,
    tasks: str | Sequence[str] | None = None,
    level: int | None = None,
    seed: int = 0,
    sandbox: str = "auto",
    models: ModelsConfig | None = None,
    api_base: str | None = None,
    engine: EngineSettings | None = None,
    env_cache: str | None = None,
    on_start: Callable[[RunPlan], None] | None = None,
    on_record: OnRecord | None = None,
) -> RunResult:
    """Run each workflow (a built-in name, a file, or a Workflow; one, or a list of them) on the
    benchmark's tasks (all, or the id or ids in `tasks`, or those of `level`) `reps` times,
    grade every run, and write the new run directory `run_dir` (default
    `runs/<stamp>-<first workflow>`). A string is always one name, never a list of letters.

    `model`: a model spec (`sim`, `scripted:FILE`, a LiteLLM name; default: `models`' agent
    role, else sim). `engine`: each agent loop's settings (default: the user's settings file,
    written by `loopwright ab apply`). `env_cache`: where task environments are built and
    kept (default: `$LOOPWRIGHT_ENV_CACHE`, else `~/.cache/loopwright/envs`). `on_record(workflow_name, record)` is called as each run
    finishes; `on_start(plan)` once before the first run. Bad input raises UsageError/ConfigError before anything is written."""
    benchmark = bench if isinstance(bench, Benchmark) else load_benchmark(os.fspath(bench))
    chosen = select_tasks(benchmark, [tasks] if isinstance(tasks, str) else tasks, level)
    check_evaluators(chosen)
    listed = [workflows] if isinstance(workflows, str | Workflow) else list(workflows)
    resolved = [w if isinstance(w, Workflow) else resolve_task_workflow(w) for w in listed]
    models = models or ModelsConfig()
    model = model or resolve_model("agent", models, default="sim")
    settings = EvalSettings(
        model=model, sandbox=sandbox, seed=seed, repetitions=reps,
        engine=engine or load_engine_settings(), env_cache=env_cache,
    )  # fmt: skip
    ledger = CostLedger()  # mirrored to RUN_DIR/ledger.jsonl once the directory exists
    prices = models.price_table()  # the built-in table, plus the config's own prices
    make_model = routed_factory(
        model, models, benchmark=benchmark, api_base=api_base, ledger=ledger, prices=prices
    )
    evaluator = Evaluator(make_model, default_sandbox(sandbox), prices, settings)
    labels = workflow_labels(resolved)
    root = RunDir.create(
        None if run_dir is None else Path(run_dir), label=labels[0]
    )  # once every input is known good
    _write_inputs(root, settings, benchmark, chosen, resolved, labels)
    root.write("models.yaml", yaml.safe_dump(models.model_dump(mode="json"), sort_keys=False))
    ledger.write_to(root.file(LEDGER_FILE))  # every gateway call, labelled (docs/models.md)
    ledger.touch()
    if on_start is not None:
        total = len(resolved) * len(chosen) * reps
        unvalidated = tuple(t.id for t in chosen if t.gold is None)
        renamed = tuple(
            (w.name, lab) for w, lab in zip(resolved, labels, strict=True) if lab != w.name
        )
        on_start(RunPlan(root.path, total, make_model(0).simulated, unvalidated, renamed))
    evaluations = [
        _evaluate(evaluator, wf, label, chosen, root.path, on_record)
        for wf, label in zip(resolved, labels, strict=True)
    ]
    summary = RunSummary(
        model=model,
        simulated=any(e.summary.simulated for e in evaluations),
        workflows=[
            _workflow_result(e, label, chosen) for e, label in zip(evaluations, labels, strict=True)
        ],
    )
    root.write_json(SUMMARY_FILE, summary)
    return RunResult(root.path, summary, evaluations, chosen)


def select_tasks(benchmark: Benchmark, ids: Sequence[str] | None, level: int | None) -> list[Task]:
    """The benchmark's tasks with the given ids (all when None), of `level` when given.
    UsageError naming the known ids for an unknown one, or when nothing is left."""
    chosen = list(benchmark.tasks)
    if ids:
        known = {t.id for t in chosen}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise UsageError(
                f"unknown task id(s) in {spoken('tasks', '--tasks')}: {', '.join(unknown)}",
                fix=f"choose from: {', '.join(sorted(known))}",
            )
        chosen = [t for t in chosen if t.id in ids]
    if level is not None:
        chosen = [t for t in chosen if t.level == level]
    if not chosen:
        raise UsageError(
            "no task left to run after the selection by "
            + spoken("tasks and level", "--tasks and --level"),
            fix="widen the selection",
        )
    return chosen


def workflow_labels(workflows: Sequence[Workflow]) -> list[str]:
    """Each workflow's label in a run: its name, or, when another workflow of the run has the
    same name, the name plus the first 8 hex digits of its graph hash (and `-2`, `-3`... for
    the same graph given twice). Stable: the same workflows give the same labels. The label
    names its folder, its ledger `candidate`, its row in the summary and the index."""
    counts = Counter(w.name for w in workflows)
    labels: list[str] = []
    for wf in workflows:
        label = wf.name if counts[wf.name] == 1 else f"{wf.name}-{workflow_hash(wf)[:8]}"
        base, n = label, 1
        while label in labels:
            n += 1
            label = f"{base}-{n}"
        labels.append(label)
    return labels


def _write_inputs(
    root: RunDir,
    settings: EvalSettings,
    bench: Benchmark,
    tasks: list[Task],
    wfs: list[Workflow],
    labels: list[str],
) -> None:
    """config.yaml (RunMeta, kind run) and each workflow's YAML."""
    inputs = RunInputs(
        settings=settings,
        tasks=[t.id for t in tasks],
        workflows=[
            WorkflowRef(name=label, hash=workflow_hash(w))
            for w, label in zip(wfs, labels, strict=True)
        ],
    )
    root.write_meta(
        RunMeta.new(
            "run", model=settings.model, benchmark=bench.name, benchmark_digest=bench.digest,
            seed=settings.seed, config=inputs.model_dump(mode="json"),
        )
    )  # fmt: skip
    for wf, label in zip(wfs, labels, strict=True):
        root.write(Path(label) / "workflow.yaml", workflow_to_yaml(wf))


def _evaluate(
    evaluator: Evaluator,
    wf: Workflow,
    label: str,
    tasks: list[Task],
    root: Path,
    on_record: OnRecord | None,
) -> Evaluation:
    def seen(record: CycleRecord) -> None:
        if on_record is not None:
            on_record(label, record)

    # Every gateway call is labelled with the run and the candidate (the Runner adds the node
    # and its role) in RUN_DIR/ledger.jsonl.
    with label_scope(run=root.name, candidate=label):
        return evaluator.evaluate(wf, tasks, root / label, run_id=root.name, on_record=seen)


def _workflow_result(evaluation: Evaluation, label: str, tasks: list[Task]) -> WorkflowResult:
    return WorkflowResult(
        workflow=label,
        hash=workflow_hash(evaluation.workflow),
        aggregate=evaluation.summary,
        by_level=_by_level(evaluation, tasks),
        tasks=_task_rows(evaluation, tasks),
    )


def _task_rows(evaluation: Evaluation, tasks: list[Task]) -> list[TaskRow]:
    by_task = evaluation.by_task()
    rows = []
    for task in tasks:
        records = by_task.get(task.id, [])
        summary = aggregate(records)
        categories = Counter(str(r.failure_category) for r in records)
        rows.append(
            TaskRow(
                task=task.id,
                level=task.level,
                runs=len(records),
                mean_score=summary.mean_score,
                resolved=sum(1 for r in records if r.resolved),
                invalid=summary.invalid_runs,
                failure_category=categories.most_common(1)[0][0] if categories else None,
                input_tokens=summary.input_tokens,
                output_tokens=summary.output_tokens,
                cost_usd=summary.cost_usd,
                mean_duration_s=summary.mean_duration_s,
            )
        )
    return rows


def _by_level(evaluation: Evaluation, tasks: list[Task]) -> dict[str, float | None]:
    level_of = {t.id: t.level for t in tasks}
    out: dict[str, float | None] = {}
    for level in sorted(set(level_of.values())):
        records = [r for r in evaluation.records if level_of.get(r.task_id) == level]
        out[str(level)] = aggregate(records).mean_score
    return out
