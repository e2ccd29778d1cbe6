"""The settings a new evolve run is made with, as CLI options declared once: `evolve` and
`outer-loop calibrate` take the same ones and build the run's config with `new_config`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from loopwright import search
from loopwright.cli._model_options import ApiBase, MetaModel, Model, ModelsFile, Tiers, choice_of
from loopwright.cli._parse import id_list
from loopwright.errors import UsageError
from loopwright.evaluation import executor_settings
from loopwright.models import (
    ModelChoice,
)
from loopwright.search import merged_config, parse_config, run_settings

ExecutorKind = Annotated[
    str, typer.Option("--executor", help="Where evaluations run: local (process pool) or ray.")
]

Workers = Annotated[
    int | None,
    typer.Option("--workers", help="Evaluations at once (default: cores; Ray: cluster CPUs)."),
]

RayAddress = Annotated[
    str | None,
    typer.Option("--ray-address", help="HOST:PORT of a Ray cluster (default: a local Ray)."),
]

CachePath = Annotated[
    Path | None, typer.Option("--cache", help="Fitness cache file (default: RUN_DIR/runs.db).")
]

NoCache = Annotated[bool, typer.Option("--no-cache", help="Run every evaluation again.")]

JobTimeout = Annotated[
    float | None,
    typer.Option("--job-timeout", help="Seconds per evaluation (default: task timeouts + 60)."),
]

Strategy = Annotated[
    str, typer.Option("--strategy", help="guided (reflection + credit) or random mutations.")
]

ReflectorKind = Annotated[
    str,
    typer.Option(
        "--reflector",
        help="How a real meta model reflects: digest (one ask holding the digest) or agent "
        "(it reads the runs with tools first; docs/reflection.md).",
    ),
]

Exploration = Annotated[
    float, typer.Option("--exploration", help="Share of random mutations under guided.")
]

MinTrain = Annotated[
    int | None,
    typer.Option(
        "--min-train", help="Refuse (exit 2) when calibration keeps fewer training tasks."
    ),
]

MinHoldout = Annotated[
    int | None,
    typer.Option(
        "--min-holdout", help="Refuse (exit 2) when calibration keeps fewer holdout tasks."
    ),
]

FirstChildren = Annotated[
    str,
    typer.Option(
        "--first-children",
        help="guided: breed the first children from the reflection on generation 0 (reflected)"
        " or put blind mutations of the seed in generation 0 (blind).",
    ),
]

Stages = Annotated[
    str | None,
    typer.Option(
        "--stages",
        help="Staged evaluation: minibatch sizes a child is tried on first, e.g. 3,all "
        "(docs/evolve.md).",
    ),
]

StageMargin = Annotated[
    float,
    typer.Option("--stage-margin", help="A staged child stops when this far below its parent."),
]

StageRule = Annotated[
    str,
    typer.Option(
        "--stage-rule",
        help="Staged evaluation: stop a child clearly worse than its parent on a stage (worse) "
        "or go on only with one better than it there (better).",
    ),
]

Parents = Annotated[
    str, typer.Option("--parents", help="Parent selection: tournament or pareto (per task).")
]

Merge = Annotated[
    float,
    typer.Option("--merge", help="pareto: share of children made by merging two parents."),
]
Objective = Annotated[
    str,
    typer.Option(
        "--objective",
        help="The winner: holdout (best on training) or cost-aware (the cheapest that ties the "
        "best on holdout, from the score/cost front; docs/evolve.md).",
    ),
]

CostTolerance = Annotated[
    float,
    typer.Option(
        "--cost-tolerance",
        help="cost-aware: a score this close to the best's counts as a tie, broken by dollars "
        "per task (in selection on training, and for the winner on holdout).",
    ),
]

Designs = Annotated[
    str,
    typer.Option(
        "--designs",
        help="The designer's workflows in generation 0 beside the seed: a comma list of "
        "minimal, thorough, or none (search alone).",
    ),
]

CompareDesigns = Annotated[
    bool,
    typer.Option(
        "--compare-designs",
        help="After the search, run every built-in hand design on the holdout tasks and show "
        "the winner's paired gain over the best of them (costs their holdout runs; "
        "docs/evolve.md).",
    ),
]

Generations = Annotated[int, typer.Option("--generations", help="Max generations.")]

Population = Annotated[int, typer.Option("--population", help="Population size.")]

Seed = Annotated[int, typer.Option("--seed", help="Fixes every random choice.")]

Reps = Annotated[int, typer.Option("--reps", help="Repetitions per training task.")]

HoldoutReps = Annotated[int, typer.Option("--holdout-reps", help="Repetitions per holdout task.")]

TournamentK = Annotated[int, typer.Option("--tournament-k")]

Elitism = Annotated[
    int | None,
    typer.Option("--elitism", help="Survivors per generation (default 2, at most population - 1)."),
]

Train = Annotated[str | None, typer.Option("--train", help="Training task ids.")]

Holdout = Annotated[str | None, typer.Option("--holdout", help="Holdout task ids.")]

Band = Annotated[str, typer.Option("--band", help="Calibration pass-rate band.")]

CalibrationReps = Annotated[int, typer.Option("--calibration-reps")]

MaxEvaluations = Annotated[int | None, typer.Option("--max-evaluations")]

MaxTrainEvaluations = Annotated[
    int | None, typer.Option("--max-train-evaluations", help="Training runs only.")
]

MaxUsd = Annotated[float | None, typer.Option("--max-usd")]

MaxWallS = Annotated[float | None, typer.Option("--max-wall-s")]

TargetScore = Annotated[float | None, typer.Option("--target-score")]

Plateau = Annotated[int | None, typer.Option("--plateau", help="Stop after P flat gens.")]

OverfitGap = Annotated[float, typer.Option("--overfit-gap")]

SandboxKind = Annotated[
    str, typer.Option("--sandbox", help="auto, bubblewrap, local, docker (docs/sandbox.md).")
]


def new_config(
    params: Mapping[str, Any], given: Collection[str] | None = None
) -> search.EvolveConfig:
    """The config of a new run from the options `evolve` and `outer-loop calibrate` share
    (their `ctx.params`: the two commands declare the same settings, one list of names).

    When `--config` names a settings file with an `evolve:` section, the options named in
    `given` (those set on the command line) override it and the rest are the file's, else
    EvolveConfig's defaults (search.merged_config); without one, every option counts."""
    fields = _fields(params)
    file = run_settings(params["models_file"])
    if not file:
        return parse_config(fields)
    flags: dict[str, Any] = _model_fields(_choice(params))
    for name in given or ():
        for path in _PATHS.get(name, ()):
            _put(flags, path, _get(fields, path))
    if "elitism" not in file and "elitism" not in flags:  # the option's default, as without a file
        population = flags.get("population", file.get("population", 6))
        flags["elitism"] = _elitism(None, population if isinstance(population, int) else 6)
    return merged_config(file, flags)


def _choice(p: Mapping[str, Any]) -> ModelChoice:
    return choice_of(p["model"], p["meta_model"], p["tier"], p["models_file"], p["api_base"])


# Where each option goes in the config (an option may set more than one field).
_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    **{name: ((name,),) for name in (
        "seed_workflow", "bench", "sandbox", "seed", "population", "tournament_k", "elitism",
        "overfit_gap", "strategy", "exploration", "first_children", "stages", "stage_margin",
        "stage_rule", "parents", "objective", "cost_tolerance", "designs",
        "compare_designs")},
    "reps": (("repetitions",),), "holdout_reps": (("holdout_repetitions",),),
    "train": (("train_tasks",),), "holdout": (("holdout_tasks",),), "merge": (("merge_rate",),),
    "band": (("calibration", "band_low"), ("calibration", "band_high")),
    "calibration_reps": (("calibration", "repetitions"),),
    "min_train": (("calibration", "min_train"),), "min_holdout": (("calibration", "min_holdout"),),
    "generations": (("budgets", "max_generations"),),
    "plateau": (("budgets", "plateau_generations"),),
    **{name: (("budgets", name),) for name in (
        "max_evaluations", "max_train_evaluations", "max_usd", "max_wall_s", "target_score")},
}  # fmt: skip


def _get(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _put(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data.setdefault(key, {})
    data[path[-1]] = value


def _fields(params: Mapping[str, Any]) -> dict[str, Any]:
    """Every option as the config field it sets (the options' defaults included)."""
    p = params
    low, high = _floats(p["band"], "--band")
    choice = _choice(p)
    return {
            "seed_workflow": p["seed_workflow"], "bench": p["bench"], "sandbox": p["sandbox"],
            **_model_fields(choice), "seed": p["seed"], "population": p["population"],
            "tournament_k": p["tournament_k"],
            "elitism": _elitism(p["elitism"], p["population"]), "repetitions": p["reps"],
            "holdout_repetitions": p["holdout_reps"], "train_tasks": id_list(p["train"], "--train"),
            "holdout_tasks": id_list(p["holdout"], "--holdout"), "overfit_gap": p["overfit_gap"],
            "strategy": p["strategy"], "exploration": p["exploration"],
            "first_children": p["first_children"], "stages": _stages(p["stages"]),
            "stage_margin": p["stage_margin"], "stage_rule": p["stage_rule"],
            "parents": p["parents"], "merge_rate": p["merge"],
            "objective": p["objective"], "cost_tolerance": p["cost_tolerance"],
            "reflection": {"reflector": p["reflector"]},
            "designs": _designs(p["designs"]), "compare_designs": p["compare_designs"],
            "calibration": {"band_low": low, "band_high": high,
                            "repetitions": p["calibration_reps"],
                            "min_train": p["min_train"], "min_holdout": p["min_holdout"]},
            "budgets": {
                "max_generations": p["generations"], "max_evaluations": p["max_evaluations"],
                "max_train_evaluations": p["max_train_evaluations"], "max_usd": p["max_usd"],
                "max_wall_s": p["max_wall_s"], "target_score": p["target_score"],
                "plateau_generations": p["plateau"],
            },
        }  # fmt: skip


def _model_fields(choice: ModelChoice) -> dict[str, object]:
    """The EvolveConfig fields of the model options."""
    return {
        "model": choice.model,
        "models": choice.config.model_dump(mode="json"),
        "api_base": choice.api_base,
    }


def _execution(
    kind: str,
    workers: int | None,
    job_timeout: float | None,
    ray_address: str | None,
    cache: Path | None,
    no_cache: bool,
) -> search.Execution:
    """How this invocation executes evaluations (never part of the run's config)."""
    settings = executor_settings(
        kind, workers=workers, job_timeout_s=job_timeout, ray_address=ray_address
    )
    return search.Execution(settings, cache, use_cache=not no_cache)


def _elitism(given: int | None, population: int) -> int:
    """--elitism as given (checked by the config), else 2, or fewer in a population of 2."""
    return given if given is not None else min(2, max(population - 1, 1))


def _stages(text: str | None) -> list[int]:
    """`--stages 3,6,all` -> [3, 6]: the minibatch sizes before the full evaluation (`all`, which
    may be left out, is the full training evaluation every child that goes on gets)."""
    if text is None:
        return []
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if parts and parts[-1] == "all":
        parts = parts[:-1]
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise UsageError(
            "--stages takes task counts ending in all", got=text, fix="e.g. --stages 3,all"
        ) from None


def _designs(text: str) -> list[str]:
    """`--designs minimal,thorough` -> the names (checked by the config); `none` -> []."""
    if text.strip().lower() == "none":
        return []
    return [p.strip() for p in text.split(",") if p.strip()]


def _floats(text: str, flag: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"{flag} takes LOW,HIGH", got=text, fix=f"e.g. {flag} 0.3,0.7") from None
    return low, high


_ALL_DESIGNS = ",".join(search.DESIGN_KINDS)


def _run_settings(
    model: Model = None,
    meta_model: MetaModel = None,
    tier: Tiers = None,
    models_file: ModelsFile = None,
    api_base: ApiBase = None,
    generations: Generations = 4,
    population: Population = 6,
    seed: Seed = 0,
    reps: Reps = 1,
    holdout_reps: HoldoutReps = 3,
    tournament_k: TournamentK = 3,
    elitism: Elitism = None,
    train: Train = None,
    holdout: Holdout = None,
    band: Band = "0.3,0.7",
    calibration_reps: CalibrationReps = 3,
    min_train: MinTrain = None,
    min_holdout: MinHoldout = None,
    max_evaluations: MaxEvaluations = None,
    max_train_evaluations: MaxTrainEvaluations = None,
    max_usd: MaxUsd = None,
    max_wall_s: MaxWallS = None,
    target_score: TargetScore = None,
    plateau: Plateau = None,
    overfit_gap: OverfitGap = 0.2,
    sandbox: SandboxKind = "auto",
    executor: ExecutorKind = "local",
    workers: Workers = None,
    ray_address: RayAddress = None,
    cache: CachePath = None,
    no_cache: NoCache = False,
    job_timeout: JobTimeout = None,
    strategy: Strategy = "guided",
    exploration: Exploration = 0.25,
    first_children: FirstChildren = "reflected",
    stages: Stages = None,
    stage_margin: StageMargin = 0.1,
    stage_rule: StageRule = "worse",
    parents: Parents = "tournament",
    merge: Merge = 0.0,
    objective: Objective = "holdout",
    cost_tolerance: CostTolerance = 0.03,
    reflector: ReflectorKind = "digest",
    designs: Designs = _ALL_DESIGNS,
    compare_designs: CompareDesigns = False,
) -> None:
    """The options of a new run, declared once (`takes_run_settings` adds them to a command)."""


_Command = TypeVar("_Command", bound=Callable[..., None])


def takes_run_settings(command: _Command) -> _Command:
    """`command` (which takes `**settings`) with the run settings as options after its own:
    typer reads the signature set here, and calls it with every option by name."""
    own = inspect.signature(command, eval_str=True).parameters.values()
    shared = inspect.signature(_run_settings, eval_str=True).parameters.values()
    params = [p for p in own if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in shared]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    return command


def execution(settings: Mapping[str, Any]) -> search.Execution:
    """How this invocation executes evaluations, from its run settings' execution options."""
    s = settings
    return _execution(
        s["executor"], s["workers"], s["job_timeout"], s["ray_address"], s["cache"], s["no_cache"]
    )


def given_names(ctx: typer.Context) -> list[str]:
    """The options set on the command line (they override the settings file)."""
    return [p.name for p in ctx.command.params if p.name and _given(ctx, p.name)]


def _given(ctx: typer.Context, name: str) -> bool:
    # By name: typer vendors its own click, whose ParameterSource is another enum class.
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")
