"""A run resolved once: `resolve_run` builds from an `EvolveConfig` everything an evolve run
needs (the benchmark read once, the inputs checked once, the ledger, the model factory, the
sandbox, the search components) and returns a frozen `ResolvedRun`, which `evolve`, `start`,
`resume` and `open_run` hand to the engine (docs/evolve.md)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loopwright._caller import spoken
from loopwright.errors import ConfigError, UsageError
from loopwright.evaluation import EvalSettings, Evaluator, Executor
from loopwright.models import (
    LEDGER_FILE,
    CostLedger,
    ModelFactory,
    PriceTable,
    require_prices,
    routed_factory,
)
from loopwright.runtime import EngineSettings
from loopwright.sandbox import Sandbox, default_sandbox
from loopwright.scoring import check_evaluators
from loopwright.search._checkpoint import evolve_run
from loopwright.search._components import SearchComponents, default_components
from loopwright.search._config import EvolveConfig
from loopwright.tasks import Benchmark, load_benchmark
from loopwright.workflow import resolve_task_workflow

__all__ = ["ResolvedRun", "check_ids", "resolve_run"]


@dataclass(frozen=True, slots=True)
class ResolvedRun:
    """Everything one evolve run needs, built once by `resolve_run` from `config`:
    `benchmark` (`config.bench`, read once), the run's cost `ledger` (`run_dir/ledger.jsonl`
    with the dollar budget; not created until the run is), `make_model` (the models routed by
    tier and role, every call in the ledger), `sandbox`, `prices` and the search `components`
    (their meta model calls in the ledger too). The engine takes its tasks and components
    from here; `evaluator` adds how evaluations run."""

    config: EvolveConfig
    run_dir: Path
    benchmark: Benchmark
    ledger: CostLedger
    make_model: ModelFactory
    sandbox: Sandbox
    prices: PriceTable
    components: SearchComponents

    def evaluator(self, executor: Executor | None = None) -> Evaluator:
        """The run's evaluator on `executor` (None: in this process); its engine settings,
        models and api_base are part of the fitness-cache key."""
        config = self.config
        config.choice.preload()  # before workers fork: one litellm import, not one per job
        models = config.models if (config.models.tiers or config.models.roles) else None
        settings = EvalSettings(
            model=config.model, sandbox=config.sandbox, seed=config.seed, repetitions=1,
            engine=config.engine or EngineSettings(), models=models, api_base=config.api_base,
        )  # fmt: skip
        return Evaluator(self.make_model, self.sandbox, self.prices, settings, executor=executor)


def resolve_run(
    config: EvolveConfig,
    run_dir: Path,
    *,
    new: bool = True,
    benchmark: Benchmark | None = None,
) -> ResolvedRun:
    """Resolve `config` for the run in `run_dir`. A `new` run is checked first: the seed
    workflow, the benchmark, the given task ids, the model, the prices a dollar budget needs,
    the search components and the sandbox resolve, and `run_dir` can be created (each a user
    error naming the fix; nothing is created; docs/bad-inputs.md). A reopened run
    (`new=False`, its config from the run directory) is not checked again. `benchmark`:
    `config.bench` when the caller has already loaded it (it is not read again)."""
    if new:
        _check_reflector_runs(config)
        resolve_task_workflow(config.seed_workflow)
    bench = benchmark if benchmark is not None else load_benchmark(config.bench)
    if new:
        check_ids(bench, config)
    check_evaluators(bench.tasks)  # resumed too: the function must be there to grade
    ledger = CostLedger(run_dir / LEDGER_FILE, max_usd=config.budgets.max_usd)
    prices = config.models.price_table()
    make_model = routed_factory(
        config.model, config.models, benchmark=bench, api_base=config.api_base,
        ledger=ledger, prices=prices,
    )  # fmt: skip
    if new:
        _check_priced(config)
    components = default_components(config, ledger=ledger)
    sandbox = default_sandbox(config.sandbox)
    if new:
        evolve_run(run_dir).check_new()
    return ResolvedRun(
        config=config, run_dir=run_dir, benchmark=bench, ledger=ledger, make_model=make_model,
        sandbox=sandbox, prices=prices, components=components,
    )  # fmt: skip


def check_ids(benchmark: Benchmark, config: EvolveConfig) -> None:
    """Every task id the config names (`train_tasks`, `holdout_tasks`) is in `benchmark`:
    a UsageError listing the known ids otherwise."""
    ids = (*(config.train_tasks or ()), *(config.holdout_tasks or ()))
    known = {t.id for t in benchmark.tasks}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(
            f"unknown task id(s): {', '.join(unknown)}",
            fix=f"choose from: {', '.join(sorted(known))}",
        )


def _check_reflector_runs(config: EvolveConfig) -> None:
    """The agent reflector was asked for, so some generation must be reflected on: a run that
    reflects on none (`random` strategy, or reflection disabled) would ignore it silently.
    Checked on a new run only, so that a run recorded before this check still reopens."""
    if config.reflection.reflector != "agent" or config.reflects:
        return
    why = (
        "reflection.enabled is false"
        if config.reflection.enabled is False
        else f"{spoken('strategy=' + repr('random'), '--strategy random')}, whose choices ignore "
        "reflection, so no generation is reflected on"
    )
    raise ConfigError(
        f"the agent reflector ({spoken(_AGENT, '--reflector agent')}) would never run",
        got=why,
        fix=spoken(
            "use strategy='guided', or set reflection.enabled=True to reflect on a random run's "
            "generations anyway, or drop reflector='agent'",
            "use --strategy guided, or set reflection.enabled: true in --config to reflect on "
            "a random run's generations anyway, or drop --reflector agent",
        ),
    )


_AGENT = "reflection.reflector='agent'"


def _check_priced(config: EvolveConfig) -> None:
    """A dollar budget needs a price for every LiteLLM model the run calls (the reflection's
    meta model included); see `models.require_prices`."""
    if config.budgets.max_usd is not None:
        meta = config.reflection.meta_model
        require_prices(
            config.choice, [meta] if meta else [],
            option=spoken("budgets.max_usd", "--max-usd"),
        )  # fmt: skip
