"""`loopwright run WORKFLOW... --bench B`: run workflows on a benchmark's tasks and grade them."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
import yaml
from pydantic import BaseModel, ConfigDict
from rich.console import Console
from rich.table import Table

from loopwright import __version__
from loopwright.cli._app import app, progress_bar
from loopwright.cli.report import report_at_end
from loopwright.errors import UsageError
from loopwright.evaluation import EvalSettings, Evaluation, Evaluator, aggregate
from loopwright.models import (
    DEFAULT_PRICES,
    LEDGER_FILE,
    CostLedger,
    ModelsConfig,
    label_scope,
    load_models_config,
    resolve_model,
    routed_factory,
)
from loopwright.records import CycleRecord
from loopwright.report import source_commit
from loopwright.runtime import load_engine_settings
from loopwright.sandbox import default_sandbox
from loopwright.tasks import Benchmark, Task, load_benchmark
from loopwright.workflow import (
    Workflow,
    resolve_task_workflow,
    workflow_hash,
    workflow_to_yaml,
)

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False)

RUN_SCHEMA_VERSION = 1

__all__ = ["TaskRow", "run"]


@app.command("run")
def run(
    workflows: Annotated[
        list[str], typer.Argument(help="One or more workflows: built-in names or YAML/JSON files.")
    ],
    bench: Annotated[str, typer.Option("--bench", help="A benchmark name or a folder of tasks.")],
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Comma-separated task ids (default: all).")
    ] = None,
    level: Annotated[int | None, typer.Option("--level", help="Only tasks of this level.")] = None,
    reps: Annotated[int, typer.Option("--reps", min=1, help="Repetitions per task.")] = 1,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="sim (offline simulated model), scripted:FILE, or a LiteLLM model name "
            "(anthropic/claude-sonnet-4-5, openai/NAME, litellm:NAME); see docs/models.md. "
            "Default: the config's agent role, else sim.",
        ),
    ] = None,
    meta_model: Annotated[
        str | None,
        typer.Option("--meta-model", help="The model of LLM-judge gates (role meta)."),
    ] = None,
    tier: Annotated[
        list[str] | None,
        typer.Option("--tier", help="Map a tier or role to a model: small=MODEL (repeatable)."),
    ] = None,
    models_file: Annotated[
        Path | None,
        typer.Option("--config", help="A models config file (YAML): tiers and roles."),
    ] = None,
    api_base: Annotated[
        str | None,
        typer.Option(
            "--api-base",
            help="Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp), "
            "e.g. http://localhost:8000/v1; use with --model openai/NAME.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Base seed; same seed, same run.")] = 0,
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="Where to write the run (default: runs/<id>).")
    ] = None,
    sandbox: Annotated[
        str, typer.Option("--sandbox", help="auto (bubblewrap when it works), bubblewrap, local.")
    ] = "auto",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print per-task results as JSON.")
    ] = False,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write RUN_DIR/report.html at the end.")
    ] = False,
    env_cache: Annotated[
        str | None,
        typer.Option(
            "--env-cache",
            help="Where task environments are built and kept "
            "(default: $LOOPWRIGHT_ENV_CACHE, else ~/.cache/loopwright/envs).",
        ),
    ] = None,
) -> None:
    """Run each workflow on the benchmark's tasks, grade every run, and print a table per task."""
    benchmark = load_benchmark(bench)
    chosen = _select_tasks(benchmark, tasks, level)
    resolved = [resolve_task_workflow(w) for w in workflows]
    models = _models_config(models_file, tier or [], meta_model)
    model = model or resolve_model("agent", models, default="sim")
    settings = EvalSettings(
        model=model,
        sandbox=sandbox,
        seed=seed,
        repetitions=reps,
        engine=load_engine_settings(),
        env_cache=env_cache,
    )
    ledger = CostLedger()  # mirrored to RUN_DIR/ledger.jsonl once the directory exists
    make_model = routed_factory(
        model, models, benchmark=benchmark, api_base=api_base, ledger=ledger
    )
    simulated = make_model(0).simulated
    evaluator = Evaluator(make_model, default_sandbox(sandbox), DEFAULT_PRICES, settings)
    root = _make_run_dir(run_dir, resolved[0].name)  # only once every input is known good
    _write_config(root, settings, benchmark, chosen, resolved)
    _write_models(root, models, ledger)
    if simulated and not as_json:
        err_console.print(_SIM_BANNER)
    evaluations = _evaluate_all(evaluator, resolved, chosen, root, show=not as_json)
    _write_summary(root, evaluations, chosen)
    if as_json:
        typer.echo(json.dumps(_summary(evaluations, chosen), indent=2))
        if not no_report:
            report_at_end(root, err_console)  # stdout stays pure JSON
        return
    for evaluation in evaluations:
        console.print(_task_table(evaluation, chosen))
    if len(evaluations) > 1:
        console.print(_side_by_side(evaluations, chosen))
    note = " (SIMULATED: offline sim model, not a real LLM)" if simulated else ""
    console.print(f"run written to {root}{note}")
    if not no_report:
        report_at_end(root, console)


_SIM_BANNER = (
    "[bold yellow]SIMULATED[/] results: the offline `sim` model stands in for an LLM "
    "(docs/sim-model.md). Scores show how workflows fare against the simulator, not a real model."
)


def _models_config(path: Path | None, overrides: list[str], meta: str | None) -> ModelsConfig:
    """The models config: the file (if any), then each --tier, then --meta-model (= meta=...)."""
    return load_models_config(path, [*overrides, *([f"meta={meta}"] if meta else [])])


def _write_models(root: Path, models: ModelsConfig, ledger: CostLedger) -> None:
    """RUN_DIR/models.yaml (the tiers and roles used) and RUN_DIR/ledger.jsonl (every gateway
    call, labelled; empty until the first one, and left empty by the offline models)."""
    text = yaml.safe_dump(models.model_dump(mode="json"), sort_keys=False)
    (root / "models.yaml").write_text(text, encoding="utf-8")
    ledger.write_to(root / LEDGER_FILE)
    ledger.touch()


def _select_tasks(benchmark: Benchmark, ids: str | None, level: int | None) -> list[Task]:
    chosen = list(benchmark.tasks)
    if ids:
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        known = {t.id for t in chosen}
        unknown = [i for i in wanted if i not in known]
        if unknown:
            raise UsageError(
                f"unknown task id(s) in --tasks: {', '.join(unknown)}",
                fix=f"choose from: {', '.join(sorted(known))}",
            )
        chosen = [t for t in chosen if t.id in wanted]
    if level is not None:
        chosen = [t for t in chosen if t.level == level]
    if not chosen:
        raise UsageError("no task left to run after --tasks/--level", fix="widen the selection")
    return chosen


def _make_run_dir(run_dir: Path | None, first: str) -> Path:
    if run_dir is None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        run_dir = Path("runs") / f"{stamp}-{re.sub(r'[^A-Za-z0-9_.-]', '_', first)}"
    if run_dir.exists() and any(run_dir.iterdir()):
        raise UsageError(
            f"run directory {run_dir} already exists and is not empty",
            fix="pass another --run-dir, or remove that one",
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def _write_config(
    root: Path, settings: EvalSettings, bench: Benchmark, tasks: list[Task], wfs: list[Workflow]
) -> None:
    config = {
        "schema_version": RUN_SCHEMA_VERSION,
        "kind": "run",
        "loopwright_version": __version__,
        "git_commit": source_commit(),
        "settings": settings.model_dump(),
        "benchmark": {"name": bench.name, "digest": bench.digest},
        "tasks": [t.id for t in tasks],
        "workflows": [{"name": w.name, "hash": workflow_hash(w)} for w in wfs],
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    for wf in wfs:
        (root / wf.name).mkdir(parents=True, exist_ok=True)
        (root / wf.name / "workflow.yaml").write_text(workflow_to_yaml(wf), encoding="utf-8")


def _evaluate_all(
    evaluator: Evaluator, wfs: list[Workflow], tasks: list[Task], root: Path, *, show: bool
) -> list[Evaluation]:
    total = len(wfs) * len(tasks) * evaluator.settings.repetitions
    progress = progress_bar(err_console, enabled=show)
    evaluations = []
    with progress:
        bar = progress.add_task("running", total=total)
        for wf in wfs:

            def advance(record: CycleRecord, name: str = wf.name) -> None:
                progress.update(bar, advance=1, description=f"{name}: {record.task_id}")

            # Every gateway call is labelled with the run and the candidate (the Runner adds the
            # node and its role) in RUN_DIR/ledger.jsonl.
            with label_scope(run=root.name, candidate=wf.name):
                evaluations.append(
                    evaluator.evaluate(
                        wf, tasks, root / wf.name, run_id=root.name, on_record=advance
                    )
                )
    return evaluations


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


def _summary(evaluations: list[Evaluation], tasks: list[Task]) -> dict[str, object]:
    return {
        "schema_version": RUN_SCHEMA_VERSION,
        "simulated": any(e.summary.simulated for e in evaluations),
        "workflows": [
            {
                "workflow": e.workflow.name,
                "hash": workflow_hash(e.workflow),
                "aggregate": e.summary.model_dump(),
                "by_level": _by_level(e, tasks),
                "tasks": [row.model_dump() for row in _task_rows(e, tasks)],
            }
            for e in evaluations
        ],
    }


def _by_level(evaluation: Evaluation, tasks: list[Task]) -> dict[str, float | None]:
    level_of = {t.id: t.level for t in tasks}
    out: dict[str, float | None] = {}
    for level in sorted(set(level_of.values())):
        records = [r for r in evaluation.records if level_of.get(r.task_id) == level]
        out[str(level)] = aggregate(records).mean_score
    return out


def _write_summary(root: Path, evaluations: list[Evaluation], tasks: list[Task]) -> None:
    text = json.dumps(_summary(evaluations, tasks), indent=2)
    (root / "summary.json").write_text(text + "\n", encoding="utf-8")


def _fmt(value: float | None, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def _task_table(evaluation: Evaluation, tasks: list[Task]) -> Table:
    sim = " [SIMULATED]" if evaluation.summary.simulated else ""
    table = Table(title=f"{evaluation.workflow.name}{sim}", title_justify="left", box=None)
    for column in ("task", "level", "score", "resolved", "failure", "tokens", "cost $", "time s"):
        table.add_column(column, justify="left" if column in ("task", "failure") else "right")
    for row in _task_rows(evaluation, tasks):
        table.add_row(
            row.task,
            str(row.level),
            _fmt(row.mean_score),
            f"{row.resolved}/{row.runs}",
            str(row.failure_category),
            str(row.input_tokens + row.output_tokens),
            _fmt(row.cost_usd, ".4f"),
            _fmt(row.mean_duration_s, ".1f"),
        )
    s = evaluation.summary
    table.add_row(
        "all",
        "",
        _fmt(s.mean_score),
        _fmt(s.resolved_rate),
        "",
        str(s.input_tokens + s.output_tokens),
        _fmt(s.cost_usd, ".4f"),
        _fmt(s.mean_duration_s, ".1f"),
        style="bold",
    )
    return table


def _side_by_side(evaluations: list[Evaluation], tasks: list[Task]) -> Table:
    sim = " [SIMULATED]" if any(e.summary.simulated for e in evaluations) else ""
    table = Table(title=f"mean partial credit, side by side{sim}", title_justify="left", box=None)
    table.add_column("tasks")
    for e in evaluations:
        table.add_column(e.workflow.name, justify="right")
    levels = [_by_level(e, tasks) for e in evaluations]
    for level in levels[0]:
        n = sum(1 for t in tasks if str(t.level) == level)
        noun = "task" if n == 1 else "tasks"
        table.add_row(f"level {level} ({n} {noun})", *(_fmt(lv[level]) for lv in levels))
    table.add_row("all", *(_fmt(e.summary.mean_score) for e in evaluations), style="bold")
    return table
