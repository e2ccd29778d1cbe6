"""Building a loop from a working directory: the meta model, the evaluators and the executor.

The wave runs on the evaluation package's local process pool (`ExecutorWave`), one pool per
submission sized by the allocation; `ThreadWave` (threads in this process) can be passed
instead.
"""

from __future__ import annotations

from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, ChatModel, load_script_file, model_factory
from loopwright.research._config import ResearchConfig, WorkDir
from loopwright.research._loop import ResearchLoop
from loopwright.research._scope import Listener
from loopwright.research._wave import ExecutorWave, WaveExecutor
from loopwright.research.offline._candidates import derive_seed
from loopwright.research.offline._researcher import SimResearcher
from loopwright.research.phases._experiment import EvalBench
from loopwright.sandbox import default_sandbox
from loopwright.tasks import Benchmark, load_benchmark

__all__ = ["build_bench", "meta_model", "open_loop", "select_tasks"]


def meta_model(spec: str, seed: int) -> ChatModel:
    """The meta model for a spec: `sim` (the offline rules), `scripted:FILE`, or any LiteLLM
    spec the gateway takes (`PROVIDER/MODEL`, `litellm:NAME`). ConfigError for an unknown one."""
    spec = spec.strip()
    if spec == "sim":
        return SimResearcher()
    if spec.startswith("scripted:"):
        return load_script_file(Path(spec.removeprefix("scripted:"))).model()
    if spec.startswith("litellm:") or "/" in spec:
        return model_factory(spec, benchmark=None)(seed)
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


def wave_executor(evaluator: Evaluator, run_id: str) -> WaveExecutor:
    """The executor of the wave (see the module docstring)."""
    return ExecutorWave(evaluator, run_id)


def build_bench(
    config: ResearchConfig, run_id: str, executor: WaveExecutor | None = None
) -> EvalBench:
    """The evaluation environment of a working directory's config."""
    e = config.eval
    bench = load_benchmark(e.bench)
    tasks = {t.id: t for t in bench.tasks}
    missing = [i for i in (*e.tasks, e.smoke_task) if i not in tasks]
    if missing:
        raise ConfigError(
            f"benchmark {e.bench} no longer has task(s) {', '.join(missing)}",
            fix="restore the benchmark, or start a new working directory",
        )
    make = model_factory(e.model, benchmark=bench)
    sandbox = default_sandbox(e.sandbox)
    settings = EvalSettings(
        model=e.model, sandbox=e.sandbox, seed=e.seed, run_timeout_s=e.run_timeout_s
    )
    evaluator = Evaluator(make, sandbox, DEFAULT_PRICES, settings)
    smoke = Evaluator(
        make,
        sandbox,
        DEFAULT_PRICES,
        settings.model_copy(update={"seed": derive_seed(e.seed, "smoke")}),
    )
    return EvalBench(
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
    listener: Listener | None = None,
    executor: WaveExecutor | None = None,
) -> ResearchLoop:
    """A ResearchLoop on an initialised working directory. `model` overrides the config's
    meta model for this invocation."""
    config = WorkDir(root).load_config()
    meta = meta_model(model or config.meta_model, config.seed)
    return ResearchLoop(root, meta, build_bench(config, root.name, executor), listener)
