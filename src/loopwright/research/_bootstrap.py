"""`research init`: check every input, then write the working directory in one go.

Nothing is written until the goal, workflow, benchmark, tasks, models and constraints have all
been checked; a run needs a goal, so without --goal or --goal-file nothing starts.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from loopwright._caller import spoken
from loopwright.errors import ConfigError, UsageError
from loopwright.models import ModelChoice, model_factory, require_prices
from loopwright.research._axes import axis_names, library_axes
from loopwright.research._budget import check_budget
from loopwright.research._config import Caps, EvalConfig, ReflectSettings, ResearchConfig, WorkDir
from loopwright.research._constraints import merge_constraints, parse_directives
from loopwright.research._factory import meta_model, select_holdout, select_tasks
from loopwright.research._goal import bootstrap_goal, parse_goal
from loopwright.research._holdout import write_seed
from loopwright.research._knowledge import initial_knowledge
from loopwright.research._memory import Memory
from loopwright.research._state import RunState, write_run_state
from loopwright.research._workspace import Workspace, WorkspaceState
from loopwright.research.phases._reflect import render_search_space
from loopwright.runtime import load_engine_settings, runtime_catalog
from loopwright.sandbox import sandbox_kinds
from loopwright.scoring import check_evaluators
from loopwright.store import read_text_input, source_commit
from loopwright.tasks import load_benchmark
from loopwright.workflow import resolve_workflow, workflow_hash

__all__ = ["InitOptions", "init_workdir"]


class InitOptions(BaseModel):
    """What `research init` takes (the CLI flags, validated). `dir` may be left unset when the
    options are passed to `research(dir, init=...)`, which fills it in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dir: Path | None = None
    goal: str | None = None
    goal_file: Path | None = None
    workflow: str
    bench: str
    tasks: tuple[str, ...] | None = None
    level: int | None = None
    max_tasks: int | None = Field(default=None, ge=1)
    holdout: tuple[str, ...] | None = None
    holdout_tasks: int = Field(default=3, ge=0)
    holdout_passes: int = Field(default=1, ge=1, le=20)
    model: str = "sim"
    eval_model: str = "sim"
    sandbox: str = "auto"
    seed: int = 0
    cons_file: Path | None = None
    constraints: str | None = None
    caps: Caps = Field(default_factory=Caps)
    reflect: ReflectSettings = Field(default_factory=ReflectSettings)
    run_timeout_s: float | None = Field(default=None, gt=0)
    max_usd: float | None = None  # checked by init_workdir (a ConfigError, not a traceback)
    git_commit: str | None = None  # the loopwright source commit (default: found at init)


def _goal_text(opts: InitOptions) -> str:
    if opts.goal is not None and opts.goal_file is not None:
        raise UsageError("give the goal once", got=spoken("goal and goal_file", "--goal and --goal-file"),
                         fix="keep one of them")  # fmt: skip
    if opts.goal is None and opts.goal_file is None:
        raise UsageError(
            "a research run needs a goal",
            fix=spoken('set InitOptions(goal="<one line>")', 'pass --goal "<one line>"')
            + " (Escalation and Termination get defaults) or "
            + spoken("goal_file=goal.md", "--goal-file goal.md")
            + " (with Ultimate, Escalation and Termination sections)",
        )
    if opts.goal_file is not None:
        text = read_text_input(opts.goal_file, spoken("goal_file", "--goal-file"))
    else:
        text = bootstrap_goal(opts.goal or "")
    parse_goal(text, source=str(opts.goal_file or "--goal"))
    return text


def _experiment_design(config: ResearchConfig) -> str:
    e = config.eval
    return f"""# Experiment design

How every experiment of this run is measured (written at init; THINK appends each iteration's
design below).

- Benchmark `{e.bench}`, eval tasks: {", ".join(e.tasks)}.
- Agents run on model `{e.model}`; base seed {e.seed}; sandbox `{e.sandbox}`.
- A pass is one run of a workflow on every eval task at one repetition; a probe has
  probe_passes passes, a perf measurement perf_passes (goal.md, Escalation).
- Metric: mean partial credit (fraction of hidden fail_to_pass tests passing). A spec is
  compared with the workspace on the same (task, repetition) pairs (paired; same seeds),
  invalid grades excluded from both sides.
- Holdout: {len(e.holdout)} other task(s) of the benchmark, split off at init and never shown
  to the meta model, measured at every adoption and when a run ends ({e.holdout_passes}
  repetition(s) each, paired with the workflow it replaces; 95% bootstrap interval over tasks).
- A confirmation at perf scale runs on repetitions after the probe's, so it is independent.
- Before it is measured, a patched workflow must pass a smoke run on `{e.smoke_task}`
  (completes, reads the task, valid grade), in at most {config.caps.smoke_attempts} attempts.
- Every measured run of an iteration goes out as one parallel wave; worker counts per
  submission come from the makespan minimiser under a cap of {config.caps.workers}.
"""


def init_workdir(opts: InitOptions) -> WorkDir:
    """Create a research working directory. UsageError/ConfigError before anything is written
    when an input is missing or wrong, or when `opts.dir` exists and is not empty."""
    if opts.dir is None:
        raise UsageError(
            "research init needs a directory",
            got="InitOptions(dir=None)",
            fix="set InitOptions(dir=...), or pass the options to research(dir, init=...)",
        )
    root = opts.dir
    goal = _goal_text(opts)
    workflow = resolve_workflow(opts.workflow, catalog=runtime_catalog())
    bench = load_benchmark(opts.bench)
    tasks = select_tasks(bench, opts.tasks, opts.level, opts.max_tasks)
    holdout = select_holdout(bench, tasks, opts.holdout, opts.holdout_tasks, opts.seed)
    check_evaluators(t for t in bench.tasks if t.id in {*tasks, *holdout})
    meta_model(opts.model, opts.seed)
    model_factory(opts.eval_model, benchmark=bench)
    check_budget(opts.max_usd)
    if opts.max_usd is not None:
        require_prices(
            ModelChoice(model=opts.eval_model), [opts.model], option=spoken("max_usd", "--max-usd")
        )
    constraints = merge_constraints(workflow.name, opts.cons_file, opts.constraints)
    axes = axis_names(library_axes())
    unknown = [a for a in parse_directives(constraints).forbid_axes if a not in axes]
    if unknown:
        raise ConfigError(
            f"constraints forbid unknown axes: {', '.join(unknown)}",
            fix=f"axes are: {', '.join(axes)}",
        )
    if opts.sandbox not in sandbox_kinds():  # the name only: the sandbox is built at run time
        raise ConfigError(
            f"unknown sandbox {opts.sandbox!r}",
            got=opts.sandbox,
            fix="choose one of: " + ", ".join(sandbox_kinds()),
        )
    wd = WorkDir(root)
    wd.lifecycle.check_new()  # refuses a directory holding anything, before anything is written
    config = ResearchConfig(
        workflow=opts.workflow, meta_model=opts.model, seed=opts.seed,
        eval=EvalConfig(bench=opts.bench, tasks=tasks, smoke_task=tasks[0], model=opts.eval_model,
                        sandbox=opts.sandbox, seed=opts.seed, run_timeout_s=opts.run_timeout_s,
                        engine=load_engine_settings(), holdout=holdout,
                        holdout_passes=opts.holdout_passes),
        caps=opts.caps, reflect=opts.reflect, max_usd=opts.max_usd, git_commit=opts.git_commit or source_commit(),
        benchmark_digest=bench.digest,
    )  # fmt: skip
    with wd.lifecycle.create():  # claimed and locked: of two inits on one directory, one wins
        _write(wd, config, goal, constraints)
        state = WorkspaceState(
            iteration=0, workflow_hash=workflow_hash(workflow), source=f"seed: {opts.workflow}"
        )
        Workspace(wd.workspace).write(workflow, state)
        write_seed(wd, workflow)
        write_run_state(wd, RunState(status="initialized", iteration=1))
    return wd


def _write(wd: WorkDir, config: ResearchConfig, goal: str, constraints: str) -> None:
    wd.root.mkdir(parents=True, exist_ok=True)
    wd.write_config(config)
    wd.goal.write_text(goal, encoding="utf-8")
    wd.constraints.write_text(constraints, encoding="utf-8")
    wd.knowledge.write_text(initial_knowledge(), encoding="utf-8")
    wd.experience.touch()
    wd.hypotheses.touch()
    wd.experiment_design.write_text(_experiment_design(config), encoding="utf-8")
    wd.tools.mkdir()
    (wd.tools / "README.md").write_text(
        "Helper files THINK writes (envelope `tools`). The loop stores them; it never runs them.\n",
        encoding="utf-8",
    )
    wd.iterations.mkdir()
    render_search_space(Memory(wd))
