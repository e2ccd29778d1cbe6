"""The outer loop as a workflow, run by the same Runner as any workflow.

The built-in `outer-loop` workflow is `seed -> evaluate -> reflect -> evolve -> gate_converge
(RELOOP to evaluate | PROCEED) -> finalize`. Its nodes are function nodes, one per engine step
and one per `loopwright outer-loop` command; `OuterLoop` binds them to one run in a copy of
the default registries (nothing global changes) and hands the workflow to a `Runner` whose
workspace is the run directory. The Runner records the walk in `<run>/outer_loop/events.jsonl`
like any run's exhaust: a node span per step and a gate decision per generation.

The `reflect` node calls `EvolutionEngine.reflect()`, which records the generation and, once a
reflector is configured, reads its exhaust (the reflection issue). The gate's `max_loops`
(1000) is only a backstop: the engine's budgets and convergence rules end the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from loopwright._version import __version__
from loopwright.errors import LoopwrightError, UsageError
from loopwright.models import DEFAULT_PRICES, ScriptedModel
from loopwright.records import EventWriter
from loopwright.runtime import Registries, Runner, StepResult, ToolContext, default_registries
from loopwright.sandbox import LocalSandbox
from loopwright.search._checkpoint import load_checkpoint
from loopwright.search._config import EvolveConfig
from loopwright.search._engine import EvolutionEngine
from loopwright.search._report import EvolveResult, evolve_result
from loopwright.stats import BootstrapCI
from loopwright.store import RunDir, is_simulated
from loopwright.tasks import Task, TaskSpec, Timeouts
from loopwright.workflow import ArgValue, builtin_workflow

__all__ = [
    "OUTER_LOOP_DIR",
    "OUTER_LOOP_WORKFLOW",
    "RESULT_FILE",
    "OuterLoop",
    "refuse_unstopped",
    "write_final_result",
    "write_result",
]

OUTER_LOOP_WORKFLOW = "outer-loop"
OUTER_LOOP_DIR = "outer_loop"
RESULT_FILE = "result.json"
RESULT_SCHEMA_VERSION = 3

# Fn nodes run in-process and cannot be cut off; the engine's own wall-clock budget governs.
_NO_DEADLINE_S = 10 * 365 * 24 * 3600.0

EngineFactory = Callable[[], EvolutionEngine]
Step = Callable[[Callable[[], object]], object]


class OuterLoop:
    """Drives one evolutionary run through the `outer-loop` workflow.

    `open_engine` builds the engine when the `seed` node runs: calibration and generation 0
    for a new run, the checkpoint for a resumed one. `around_evaluate` wraps each evaluation
    step (the CLI shows its progress display there). A user error raised by a step (a bad
    config, an empty training split) ends the walk: later steps are skipped and `run` raises
    it again, so the Runner's node-error boundary never hides it.
    """

    def __init__(
        self, open_engine: EngineFactory, run_dir: Path, *, around_evaluate: Step | None = None
    ) -> None:
        self._open_engine = open_engine
        self.run_dir = run_dir
        self._around = around_evaluate or (lambda step: step())
        self.engine: EvolutionEngine | None = None
        self._error: BaseException | None = None

    def registries(self) -> Registries:
        """The default registries plus this run's steps."""
        regs = default_registries().copy()
        steps: Mapping[str, Callable[[], StepResult]] = {
            "outer_seed": self._seed,
            "outer_evaluate": self._evaluate,
            "outer_reflect": self._reflect,
            "outer_evolve": self._evolve,
            "outer_finalize": self._finalize,
        }
        for name, body in steps.items():
            regs.functions.register(name)(self._fn(body))
        regs.checks.register("outer_converged")(self._converged)
        return regs

    def run(self) -> EvolutionEngine:
        """Walk the workflow until the engine stops; return the finished engine."""
        workflow = builtin_workflow(OUTER_LOOP_WORKFLOW)
        runner = Runner(
            ScriptedModel([], name="outer-loop-has-no-agents"),
            LocalSandbox(),
            cost_fn=DEFAULT_PRICES.cost_usd,
            price_table=DEFAULT_PRICES.version,
            registries=self.registries(),
        )
        folder = self.run_dir / OUTER_LOOP_DIR
        folder.mkdir(parents=True, exist_ok=True)
        instruction = folder / "instruction.md"
        instruction.write_text(_INSTRUCTION, encoding="utf-8")
        with EventWriter(folder / "events.jsonl") as writer:
            outcome = runner.run(
                workflow, _outer_task(self.run_dir), self.run_dir, instruction, writer,
                run_timeout_s=_NO_DEADLINE_S,
            )  # fmt: skip
        if self._error is not None:
            raise self._error
        if self.engine is None or not self.engine.finished:
            detail = outcome.error or f"node status {dict(outcome.node_status)}"
            raise LoopwrightError(f"the outer-loop workflow ended before the run did: {detail}")
        return self.engine

    # -- the steps ----------------------------------------------------------------------------

    def _fn(self, body: Callable[[], StepResult]) -> Callable[..., StepResult]:
        def step(ctx: ToolContext, args: Mapping[str, ArgValue]) -> StepResult:
            if self._error is not None:
                return StepResult(False, "skipped: an earlier step failed")
            try:
                return body()
            except Exception as exc:  # re-raised by run(): a step's error ends the run
                self._error = exc
                raise

        return step

    def _live(self) -> EvolutionEngine:
        if self.engine is None:
            raise LoopwrightError("the outer loop has no engine: the seed step did not run")
        return self.engine

    def _seed(self) -> StepResult:
        self.engine = self._open_engine()
        state = self.engine.state
        return StepResult(
            True,
            f"generation {state.generation} ({state.phase}): {len(state.population)} individuals;"
            f" {len(state.train_tasks)} training and {len(state.holdout_tasks)} holdout tasks",
        )

    def _evaluate(self) -> StepResult:
        engine = self._live()
        if engine.finished:
            return StepResult(True, f"the run has stopped: {engine.state.stop_reason}")
        if engine.state.phase != "evaluate":
            return StepResult(True, f"generation {engine.state.generation} was evaluated already")
        self._around(engine.evaluate_generation)
        s = engine.state.summaries[-1]
        return StepResult(
            True,
            f"generation {s.generation}: train best {_fmt(s.train_best)}, mean "
            f"{_fmt(s.train_mean)}, holdout {_fmt(s.holdout_best)}, "
            f"{s.spent.evaluations} evaluations so far",
        )

    def _reflect(self) -> StepResult:
        engine = self._live()
        if engine.finished or engine.state.phase != "breed":
            return StepResult(True, "nothing to reflect on: the run has stopped")
        engine.reflect()
        return StepResult(True, f"reflected on generation {engine.state.generation}")

    def _evolve(self) -> StepResult:
        engine = self._live()
        if engine.finished:
            return StepResult(True, f"the run has stopped: {engine.state.stop_reason}")
        reason = engine.advance()
        if reason is not None:
            return StepResult(True, f"the run stopped: {reason}")
        return StepResult(True, f"generation {engine.state.generation} bred")

    def _converged(self, ctx: ToolContext) -> StepResult:
        if self._error is not None:
            return StepResult(True, "proceeding: an earlier step failed")
        engine = self._live()
        if engine.finished:
            return StepResult(True, f"stopped: {engine.state.stop_reason}")
        return StepResult(False, f"not converged: evaluate generation {engine.state.generation}")

    def _finalize(self) -> StepResult:
        engine = self._live()
        engine.compare_designs()
        state, config = engine.state, engine.config
        path = write_result(engine.run_dir, evolve_result(state), config.model, config=config)
        return StepResult(True, f"result written to {path.name}")


def refuse_unstopped(run_dir: Path) -> None:
    """UsageError naming the next step when the run in `run_dir` has not stopped yet: only a
    finished run has a result to write (`finalize_run`, `outer-loop finalize`)."""
    checkpoint = load_checkpoint(run_dir)
    if checkpoint.stop_reason is None:
        step = "evaluate" if checkpoint.phase == "evaluate" else "evolve"
        raise UsageError(
            "the run has not stopped yet: finalize writes the result of a finished run",
            got=f"generation {checkpoint.generation}, next step `outer-loop {step}`",
            fix=f"run `loopwright outer-loop {step} --run-dir {run_dir}` until it says the run "
            "finished (a budget or convergence rule), then finalize",
        )


def write_final_result(run_dir: Path) -> Path:
    """`<run>/result.json` of the stopped run in `run_dir`, rewritten from its checkpoint (so a
    second call writes the same figures); its path."""
    checkpoint = load_checkpoint(run_dir)
    return write_result(
        run_dir, evolve_result(checkpoint), checkpoint.config.model, config=checkpoint.config
    )


def write_result(
    run_dir: Path, result: EvolveResult, model: str, *, config: EvolveConfig | None = None
) -> Path:
    """Write `<run>/result.json` (schema in docs/evolve.md) atomically; return its path.
    `model` is the run's agent model: the file says which model made its figures and whether
    it was simulated. With `config`, `search` records how the search spent its runs (strategy,
    parent selection, stages, merge)."""
    data: dict[str, Any] = {
        "schema_version": RESULT_SCHEMA_VERSION,
        "loopwright_version": __version__,
        "model": model,
        "simulated": is_simulated(model),
        "stop_reason": result.stop_reason,
        "generations": len(result.summaries),
        "winner": {
            "id": result.winner.id,
            "mode": result.winner.mode,
            "hash": result.winner.hash,
            "operator": result.winner.lineage.operator,
            "nodes": len(result.winner.workflow.nodes),
            "train": result.winner.fitness,
            "holdout": result.winner.mean_score("holdout"),
        },
        "seed": {
            "id": result.seed.id,
            "hash": result.seed.hash,
            "train": result.seed.fitness,
            "holdout": result.seed.mean_score("holdout"),
        },
        "made_by_search": result.made_by_search,
        "holdout_gain": _interval(result.gain),
        "spent": result.spent.model_dump(mode="json"),
    }
    if config is not None:
        data["search"] = {
            "strategy": config.strategy,
            "parents": config.parents,
            "stages": list(config.stages),
            "stage_margin": config.stage_margin if config.stages else None,
            "stage_rule": config.stage_rule if config.stages else None,
            "merge_rate": config.merge_rate,
            "stopped_children": sum(s.stopped for s in result.summaries),
            "objective": config.objective,
        }
    data["front"] = [
        {
            "id": p.individual_id, "generation": p.generation, "holdout": p.holdout,
            "usd_per_task": p.usd_per_task, "on_front": p.on_front, "within_best": p.within_best,
        }
        for p in result.points
    ]  # fmt: skip
    best = result.best_design
    data["hand_designs"] = {
        "best": None if best is None else best.name,
        "gain_over_best": _interval(result.design_gain),
        "designs": [
            {"name": d.name, "holdout": d.holdout, "usd_per_task": d.usd_per_task,
             "runs": d.runs, "cached": d.cached, "winner_gain": _interval(d.winner_gain)}
            for d in result.designs
        ],
    }  # fmt: skip
    return RunDir(run_dir).write_json(RESULT_FILE, data)


def _interval(gain: BootstrapCI | None) -> dict[str, Any] | None:
    if gain is None:
        return None
    return {
        "mean": gain.gain, "low": gain.low, "high": gain.high, "level": gain.level,
        "n_tasks": gain.n_tasks, "resamples": gain.resamples, "includes_zero": gain.includes_zero,
    }  # fmt: skip


_INSTRUCTION = """\
# The outer loop

Evolve the seed workflow against the benchmark named in checkpoint.json: calibrate, then per
generation evaluate, reflect, select and mutate, until a budget or convergence rule stops the
run. This file exists because every workflow run reads an instruction; the outer loop's steps
are functions and read the run directory instead.
"""


def _outer_task(run_dir: Path) -> Task:
    """The Runner runs a workflow on a Task; the outer loop's is synthetic. Its root is the
    run directory and it is never graded (the one test id the task format requires names the
    gate it would stand for)."""
    spec = TaskSpec(
        id="outer-loop",
        level=1,
        summary=f"the outer loop of {run_dir.name}",
        fail_to_pass=["outer_loop.py::converged"],
        timeouts=Timeouts(agent=_NO_DEADLINE_S),
    )
    return Task(spec=spec, root=run_dir, instruction=_INSTRUCTION)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
