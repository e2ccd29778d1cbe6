"""Building a loop from a working directory: the meta model, the evaluators and the executor.

The wave runs on the evaluation package's local process pool (`ExecutorWave`), one pool per
submission sized by the allocation; `ThreadWave` (threads in this process) can be passed
instead.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import (
    DEFAULT_PRICES,
    LEDGER_FILE,
    ChatModel,
    CostLedger,
    ModelChoice,
    ModelsConfig,
    PriceTable,
    is_gateway_spec,
    load_script_file,
    meta_chat_model,
    require_prices,
    resolve_model,
    routed_factory,
)
from loopwright.research._budget import check_budget
from loopwright.research._config import ResearchConfig, WorkDir
from loopwright.research._loop import ResearchLoop
from loopwright.research._scope import Listener
from loopwright.research._wave import ExecutorWave, WaveExecutor
from loopwright.research.offline._candidates import derive_seed
from loopwright.research.offline._researcher import SimResearcher
from loopwright.research.phases._experiment import EvalBench
from loopwright.runtime import EngineSettings
from loopwright.sandbox import default_sandbox
from loopwright.scoring import check_evaluators
from loopwright.tasks import Benchmark, load_benchmark

__all__ = [
    "RunModels",
    "build_bench",
    "meta_model",
    "open_loop",
    "run_models",
    "select_tasks",
]


@dataclass(frozen=True, slots=True)
class RunModels:
    """The models of one `research run` invocation: the meta model's and the agents' specs
    (None: the working directory's config), the tiers and roles the agents are routed by,
    and the OpenAI-compatible server of LiteLLM specs."""

    meta: str | None = None
    agents: str | None = None
    models: ModelsConfig = field(default_factory=ModelsConfig)
    api_base: str | None = None


def run_models(
    model: str | None,
    meta_model: str | None,
    models: ModelsConfig | None = None,
    api_base: str | None = None,
) -> RunModels:
    """The RunModels of the model options, as `run` reads them: `--model` is the default of
    every role (the agents and, unless `--meta-model` or the config's `meta` role says
    otherwise, the meta phases); unset, the config's `agent` role, else the working
    directory's config. Deterministic."""
    config = models or ModelsConfig()
    agents = model or resolve_model("agent", config, default="") or None
    meta = meta_model or resolve_model("meta", config, default="") or model
    return RunModels(meta=meta, agents=agents, models=config, api_base=api_base)


def meta_model(
    spec: str,
    seed: int,
    *,
    api_base: str | None = None,
    ledger: CostLedger | None = None,
    prices: PriceTable = DEFAULT_PRICES,
) -> ChatModel:
    """The meta model for a spec: `sim` (the offline rules), `scripted:FILE`, or any LiteLLM
    spec the gateway takes (`PROVIDER/MODEL`, `litellm:NAME`; on `api_base`, every call in
    `ledger`). ConfigError for an unknown one."""
    spec = spec.strip()
    if spec == "sim":
        return SimResearcher()
    if spec.startswith("scripted:"):
        return load_script_file(Path(spec.removeprefix("scripted:"))).model()
    if spec.startswith("litellm:") or "/" in spec:
        return meta_chat_model(spec, api_base=api_base, ledger=ledger, seed=seed, prices=prices)
    raise ConfigError(
        f"unknown meta model {spec!r}",
        fix="use sim (offline rules), scripted:FILE, PROVIDER/MODEL or litellm:NAME",
    )


def select_tasks(
    bench: Benchmark, ids: tuple[str, ...] | None, level: int | None, limit: int | None
) -> tuple[str, ...]:
    """The eval task ids: `ids` as given, else the benchmark's tasks (of `level` when given)
    in id order, the first `limit` of them. ConfigError for unknown ids or an empty choice."""
    known = {t.id: t for t in bench.tasks}
    if ids:
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise ConfigError(
                f"unknown task id(s): {', '.join(unknown)}",
                fix=f"choose from: {', '.join(sorted(known))}",
            )
        chosen = list(ids)
    else:
        chosen = sorted(t.id for t in bench.tasks if level is None or t.level == level)
    if limit is not None:
        chosen = chosen[:limit]
    if not chosen:
        raise ConfigError(
            "no eval task selected",
            got=f"level {level}" if level is not None else "an empty list",
            fix=f"levels in this benchmark: {sorted({t.level for t in bench.tasks})}",
        )
    return tuple(chosen)


def select_holdout(
    bench: Benchmark, eval_ids: tuple[str, ...], ids: tuple[str, ...] | None, count: int, seed: int
) -> tuple[str, ...]:
    """The holdout task ids: `ids` as given (none of them an eval task), else `count` tasks
    drawn with `seed` from the benchmark's tasks that are not eval tasks, of the eval tasks'
    levels (fewer when fewer remain; none with `count` 0). Deterministic. ConfigError for an
    unknown id or one that is also an eval task."""
    known = {t.id: t for t in bench.tasks}
    if ids:
        unknown = [i for i in ids if i not in known]
        shared = [i for i in ids if i in eval_ids]
        if unknown or shared:
            raise ConfigError(
                "holdout tasks must be benchmark tasks that are not eval tasks",
                got=", ".join(unknown + shared),
                fix=f"choose from: {', '.join(sorted(set(known) - set(eval_ids)))}",
            )
        return tuple(dict.fromkeys(ids))
    levels = {known[i].level for i in eval_ids}
    pool = sorted(t.id for t in bench.tasks if t.id not in eval_ids and t.level in levels)
    random.Random(derive_seed(seed, "holdout")).shuffle(pool)
    return tuple(sorted(pool[:count]))


def wave_executor(evaluator: Evaluator, run_id: str) -> WaveExecutor:
    """The executor of the wave (see the module docstring)."""
    return ExecutorWave(evaluator, run_id)


def build_bench(
    config: ResearchConfig,
    run_id: str,
    executor: WaveExecutor | None = None,
    *,
    models: RunModels | None = None,
    ledger: CostLedger | None = None,
) -> EvalBench:
    """The evaluation environment of a working directory's config: the agents on the config's
    model unless `models` overrides it (with its tiers, roles and api_base), every gateway
    call in `ledger`, under the config's engine settings (what `ab apply` wrote at init)."""
    e = config.eval
    bench = load_benchmark(e.bench)
    tasks = {t.id: t for t in bench.tasks}
    missing = [i for i in (*e.tasks, e.smoke_task, *e.holdout) if i not in tasks]
    if missing:
        raise ConfigError(
            f"benchmark {e.bench} no longer has task(s) {', '.join(missing)}",
            fix="restore the benchmark, or start a new working directory",
        )
    # Every evaluator a task names resolves, before the loop starts (as run and evolve check).
    check_evaluators(tasks[i] for i in dict.fromkeys((*e.tasks, e.smoke_task, *e.holdout)))
    chosen = models or RunModels()
    spec = chosen.agents or e.model
    routed = chosen.models if (chosen.models.tiers or chosen.models.roles) else None
    agents = ModelChoice(model=spec, config=chosen.models)
    agents.preload()  # once, before workers fork
    base = chosen.api_base if any(is_gateway_spec(s) for s in agents.specs()) else None
    prices = chosen.models.price_table()
    make = routed_factory(
        spec, chosen.models, benchmark=bench, api_base=base, ledger=ledger, prices=prices
    )
    sandbox = default_sandbox(e.sandbox)
    settings = EvalSettings(
        model=spec, sandbox=e.sandbox, seed=e.seed, run_timeout_s=e.run_timeout_s,
        engine=e.engine or EngineSettings(), models=routed, api_base=base,
    )  # fmt: skip
    evaluator = Evaluator(make, sandbox, prices, settings)
    smoke = Evaluator(
        make,
        sandbox,
        prices,
        settings.model_copy(update={"seed": derive_seed(e.seed, "smoke")}),
    )
    return EvalBench(
        holdout=tuple(tasks[i] for i in e.holdout if i in tasks),
        evaluator=evaluator,
        smoke=smoke,
        tasks=tuple(tasks[i] for i in e.tasks),
        smoke_task=tasks[e.smoke_task],
        executor=executor or wave_executor(evaluator, run_id),
        run_id=run_id,
    )


def open_loop(
    root: Path,
    *,
    model: str | None = None,
    models: RunModels | None = None,
    listener: Listener | None = None,
    executor: WaveExecutor | None = None,
    max_usd: float | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ResearchLoop:
    """A ResearchLoop on an initialised working directory. `model` overrides the config's
    meta model for this invocation; `models` the meta model, the agents' model, tiers and
    api_base (see `run_models`). Every gateway call, meta phases (role `meta:PHASE`) and
    agents alike, is written to ROOT/ledger.jsonl; the gateway refuses calls once it reaches
    the dollar budget: `max_usd` (which replaces the config's when the loop runs), else the
    config's. ConfigError when a budget is set and a LiteLLM model in use has no price.
    `should_stop` is asked before each iteration (see `ResearchLoop`)."""
    check_budget(max_usd)
    config = WorkDir(root).load_config()
    chosen = models or RunModels()
    budget = max_usd if max_usd is not None else config.max_usd
    ledger = CostLedger(root / LEDGER_FILE, max_usd=budget)
    spec = model or chosen.meta or config.meta_model
    agents = ModelChoice(model=chosen.agents or config.eval.model, config=chosen.models)
    if budget is not None:
        require_prices(agents, [spec], option=spoken("max_usd", "--max-usd"))
    if chosen.api_base is not None and not any(is_gateway_spec(s) for s in (spec, *agents.specs())):
        raise ConfigError(
            f"{spoken('api_base', '--api-base')} only applies to a LiteLLM model",
            got=f"meta model {spec!r}, agents on {agents.model!r}",
            fix=spoken(
                "use model='openai/NAME' with api_base, or drop api_base",
                "use --model or --meta-model openai/NAME with --api-base, or drop --api-base",
            ),
        )
    prices = chosen.models.price_table()
    meta = meta_model(spec, config.seed, api_base=chosen.api_base, ledger=ledger, prices=prices)
    bench = build_bench(config, root.name, executor, models=chosen, ledger=ledger)
    return ResearchLoop(root, meta, bench, listener, max_usd=max_usd, should_stop=should_stop)
