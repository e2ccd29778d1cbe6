"""The configuration of one evolutionary run (`loopwright evolve`), validated once, frozen."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.models import ModelChoice, ModelsConfig, is_offline_spec
from loopwright.runtime import EngineSettings
from loopwright.search._designer import DESIGN_KINDS

__all__ = [
    "Budgets",
    "CalibrationSettings",
    "EvolveConfig",
    "ReflectionSettings",
    "parse_config",
    "recorded_config",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Budgets(_Frozen):
    """When the run stops. None means no limit of that kind.

    `max_generations` counts evaluated generations (generation 0 is the initial population).
    `max_evaluations` counts every training and holdout run of the evolution (calibration is
    reported apart). `max_train_evaluations` counts training runs only (individual x training
    task x repetition), so two searches can be given the same search budget exactly: once it
    is reached no further training run starts, the holdout of that generation's best still
    runs (monitoring, not search; other budgets still apply to it) and the run ends with
    `max_train_evaluations`. `target_score` stops once the best training fitness reaches it;
    `plateau_generations` stops after that many generations without a better best training
    fitness.
    """

    max_generations: int = 4
    max_evaluations: int | None = None
    max_train_evaluations: int | None = None
    max_usd: float | None = None
    max_wall_s: float | None = None
    target_score: float | None = None
    plateau_generations: int | None = None

    @model_validator(mode="after")
    def _positive(self) -> Budgets:
        limits = ("max_generations", "max_evaluations", "max_train_evaluations", "max_usd",
                  "max_wall_s")  # fmt: skip
        for name in (*limits, "plateau_generations"):
            _require_positive(
                name, getattr(self, name), _say(f"budgets.{name}", _BUDGET_FLAGS[name])
            )
        if self.target_score is not None and not 0.0 < self.target_score <= 1.0:
            raise ConfigError(
                "target_score must lie in (0, 1]",
                got=str(self.target_score),
                fix=f"set {_say('budgets.target_score', '--target-score')} to a mean partial credit "
                "such as 0.9, or omit it",
            )
        return self


class CalibrationSettings(_Frozen):
    """How training and holdout tasks are chosen from the bare seed's pass rate.

    The band is on the RESOLVED rate (pass rate), not on partial credit: the sim keeps much
    partial credit on flawed attempts, so a partial-credit band would leave nothing in it.
    In-band tasks sorted by (pass rate, task id) go to holdout every `holdout_every`-th one
    (similar difficulty on both sides), the rest to training. `min_train`/`min_holdout`: a
    split with fewer tasks is refused before generation 0 (otherwise it is only warned about,
    below 10 training or 3 holdout tasks).
    """

    band_low: float = 0.3
    band_high: float = 0.7
    repetitions: int = 3
    tasks: tuple[str, ...] | None = None
    holdout_every: int = 3
    max_train: int | None = None
    min_train: int | None = None
    min_holdout: int | None = None

    @model_validator(mode="after")
    def _sane(self) -> CalibrationSettings:
        if not 0.0 <= self.band_low <= self.band_high <= 1.0:
            raise ConfigError(
                "the calibration band must satisfy 0 <= low <= high <= 1",
                got=f"{self.band_low}-{self.band_high}",
                fix=spoken(
                    "set calibration.band_low, calibration.band_high to e.g. 0.3, 0.7",
                    "set --band LOW,HIGH to e.g. 0.3,0.7",
                ),
            )
        reps = _say("calibration.repetitions", "--calibration-reps")
        _require_positive("calibration repetitions", self.repetitions, reps)
        _require_at_most("calibration repetitions", self.repetitions, MAX_REPETITIONS, reps)
        if self.holdout_every < 2:
            raise ConfigError(
                "holdout_every must be at least 2 (every N-th in-band task goes to holdout)",
                got=str(self.holdout_every),
                fix="use 3 (one third holdout) or more",
            )
        for name, flag in (("max_train", "max_train"), ("min_train", "--min-train"),
                           ("min_holdout", "--min-holdout")):  # fmt: skip
            _require_positive(name, getattr(self, name), _say(f"calibration.{name}", flag))
        return self


class ReflectionSettings(_Frozen):
    """How each generation's exhaust is reflected on (docs/reflection.md).

    `enabled`: None (the default) reflects when the strategy reads the reports (`guided`)
    and not with `random`, whose choices ignore them; True always reflects (a random run's
    reports, to read); False never does (a guided run then breeds as its fallback does, from
    random draws). `meta_model` is the model spec that reflects (and, with the guided
    strategy, rewrites prompts and crosses parents); None means the run's model. `sim` or
    `offline` use the offline rules. A malformed reply is retried `max_retries` times with the
    validation error, then the report is built from the digest alone. `digest_max_chars` caps
    the digest. `reflector`: `digest` (the default: one ask holding the digest) or `agent` (the
    meta model reads the runs with tools for at most `agent_max_turns` turns before it
    answers; it needs a meta model that calls tools, not `sim` or `offline`).
    """

    enabled: bool | None = None
    meta_model: str | None = None
    max_retries: int = 2
    digest_max_chars: int = 16_000
    reflector: Literal["digest", "agent"] = "digest"
    agent_max_turns: int = 12

    @model_validator(mode="after")
    def _sane(self) -> ReflectionSettings:
        if self.max_retries < 0:
            raise ConfigError(
                "reflection max_retries must be 0 or more",
                got=str(self.max_retries),
                fix="use 2 (the default) or 0 for no retry",
            )
        if self.digest_max_chars < 2_000:
            raise ConfigError(
                "reflection digest_max_chars is too small to hold a digest",
                got=str(self.digest_max_chars),
                fix="use at least 2000 (the default is 16000)",
            )
        if not 1 <= self.agent_max_turns <= 100:
            raise ConfigError(
                "reflection agent_max_turns must lie in [1, 100]",
                got=str(self.agent_max_turns),
                fix="use 12 (the default)",
            )
        return self


class EvolveConfig(_Frozen):
    """Everything that decides an evolutionary run. Same config and seed, same run.

    Training/holdout tasks come from calibration unless both `train_tasks` and
    `holdout_tasks` are given. `elitism` individuals survive each generation unchanged; the
    rest of the next population are mutated children of tournament-selected parents.
    Holdout is the number a user acts on, and it is never selected on, so it is measured with
    `holdout_repetitions` per task (default 3; None: the same as `repetitions`).
    `strategy` chooses mutations: `guided` (the default, as on the CLI: reflection's
    suggestions weighted by credit, with `exploration` the share of random choices) or
    `random` (uniform operators). A run recorded before the field existed was random, and
    reads back as random (`recorded_config`). `first_children` says when a
    guided run makes its first children: `reflected` (default) after the reflection on
    generation 0, so generation 0 is the seed and the designs only; `blind` in generation 0,
    as mutations of the seed drawn as the random strategy draws them (what the random
    strategy always does). `designs` lists the designer's workflows generation 0 holds
    beside the seed (`minimal`, `thorough`); an empty tuple turns the designer off.

    `model` is the default model spec; `models` maps tiers and roles (`meta`: the reflector,
    prompt mutator, crossover and LLM-judge gates) to models, and `api_base` points the
    LiteLLM specs at an OpenAI-compatible server (docs/models.md). `engine` picks each agent
    node's loop (the user's settings file, written by `loopwright ab apply`); None is resolved
    from that file when the run starts and stored, so a resumed run keeps it. All of them are
    part of the fitness-cache key.

    Search economy (docs/evolve.md): `stages` are the minibatch sizes a child of generation 1
    on is evaluated on first (one repetition, nested, stratified by level; `()`: none, every
    child gets the full training evaluation at once); a child clearly worse than its parent
    on a stage (its mean below the parent's by more than `stage_margin`) stops there; with
    `stage_rule: better` a child goes on only when it beats its parent on the stage (the
    stage taken from the tasks its parent did not solve), and ties stop.
    `parents` draws parents by `tournament` or from the per-task `pareto` frontier of every
    fully evaluated individual; with `pareto`, `merge_rate` is the share of children made by
    a three-way merge of two frontier members that lead on different tasks.

    `objective` decides the winner at the end: `holdout` (default) the best on training;
    `cost-aware` the cheapest holdout-evaluated individual that ties the best (inside its
    paired interval, mean within `cost_tolerance` of its), from the Pareto front of holdout score against mean dollars per task
    (search/_objective.py, docs/evolve.md). Under `cost-aware` it also puts cost pressure on
    the search: in selection (the leader, the elites, tournament parents) a training fitness
    within `cost_tolerance` of the best counts as a tie, broken by dollars per training run
    (`search.cost_aware_order`); holdout still decides nothing but the final pick. With
    `holdout` selection is as before and `cost_tolerance` is not used.

    `compare_designs`: after the search, every built-in hand design (the workflow registry's
    task workflows) runs on the holdout tasks with `holdout_repetitions`, and the result sets
    the winner against the seed and the best of them, paired (search/_compare.py,
    docs/evolve.md "The winner against the hand designs"). Its runs are counted apart from
    the search's budgets and spend; it changes no evaluation and no selection of the search.

    `seed_workflow` (a built-in name or a workflow file) and `bench` (a bundled name or a
    benchmark directory) are the one source of the seed and the tasks:
    `EvolutionEngine.start` resolves them, and a resumed run reloads the tasks from `bench`.
    """

    seed_workflow: str
    bench: str
    model: str = "sim"
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    api_base: str | None = None
    engine: EngineSettings | None = None
    sandbox: str = "auto"
    seed: int = 0
    population: int = 6
    tournament_k: int = 3
    elitism: int = 2
    repetitions: int = 1
    holdout_repetitions: int | None = 3
    # Any sequence of ids goes in (a list from Python; mypy accepts it), a tuple is kept.
    train_tasks: Sequence[str] | None = None
    holdout_tasks: Sequence[str] | None = None
    calibration: CalibrationSettings = Field(default_factory=CalibrationSettings)
    novelty_threshold: float = 0.03
    overfit_gap: float = 0.2
    mutation_max_tries: int = 5
    operators: tuple[str, ...] | None = None
    descriptors: tuple[str, ...] | None = None
    budgets: Budgets = Field(default_factory=Budgets)
    strategy: Literal["random", "guided"] = "guided"
    exploration: float = 0.25
    first_children: Literal["reflected", "blind"] = "reflected"
    designs: tuple[str, ...] = DESIGN_KINDS
    reflection: ReflectionSettings = Field(default_factory=ReflectionSettings)
    stages: tuple[int, ...] = ()
    stage_margin: float = 0.1
    stage_rule: Literal["worse", "better"] = "worse"
    parents: Literal["tournament", "pareto"] = "tournament"
    merge_rate: float = 0.0
    objective: Literal["holdout", "cost-aware"] = "holdout"
    cost_tolerance: float = 0.03
    compare_designs: bool = False

    @field_validator("train_tasks", "holdout_tasks", mode="before")
    @classmethod
    def _ids(cls, value: object) -> object:
        """A bare string is one id, never a sequence of letters; any other sequence a tuple."""
        if isinstance(value, str):
            return (value,)
        return tuple(value) if isinstance(value, list | tuple) else value

    @model_validator(mode="after")
    def _check(self) -> EvolveConfig:
        if not 0.0 <= self.exploration <= 1.0:
            raise ConfigError(
                "exploration must lie in [0, 1]",
                got=str(self.exploration),
                fix=f"set {_say('exploration', '--exploration')} to e.g. 0.25 "
                "(0: always follow reflection, 1: random)",
            )
        population = _say("population", "--population")
        reps, holdout_reps = (
            _say("repetitions", "--reps"),
            _say("holdout_repetitions", "--holdout-reps"),
        )
        for name, said in (("population", population), ("tournament_k", "tournament_k"),
                           ("repetitions", reps), ("mutation_max_tries", "mutation_max_tries")):  # fmt: skip
            _require_positive(name, getattr(self, name), said)
        _require_positive("holdout_repetitions", self.holdout_repetitions, holdout_reps)
        _require_at_most("the population", self.population, MAX_POPULATION, population)
        _require_at_most("repetitions", self.repetitions, MAX_REPETITIONS, reps)
        _require_at_most("holdout_repetitions", self.holdout_repetitions, MAX_REPETITIONS,
                         holdout_reps)  # fmt: skip
        _require_at_most("max_generations", self.budgets.max_generations, MAX_GENERATIONS,
                         _say("budgets.max_generations", "--generations"))  # fmt: skip
        if self.population < 2:
            raise ConfigError(
                "the population needs at least 2 individuals",
                got=str(self.population),
                fix=f"set {population} to 2 or more",
            )
        if not 0 < self.elitism < self.population:
            raise ConfigError(
                "elitism must be at least 1 and smaller than the population",
                got=f"elitism {self.elitism}, population {self.population}",
                fix=f"set {_say('elitism', '--elitism')} between 1 and {self.population - 1}, "
                f"or a larger {population}"
                if self.population > 2
                else f"set {_say('elitism', '--elitism')} to 1, or a larger {population}",
            )
        if (self.train_tasks is None) != (self.holdout_tasks is None):
            raise ConfigError(
                "explicit task splits need both training and holdout ids",
                got=f"train={self.train_tasks}, holdout={self.holdout_tasks}",
                fix=f"give both {_say('train_tasks and holdout_tasks', '--train and --holdout')}, "
                "or neither (calibration chooses)",
            )
        unknown = [d for d in self.designs if d not in DESIGN_KINDS]
        if unknown:
            raise ConfigError(
                "unknown designs",
                got=", ".join(unknown),
                fix=f"use some of: {', '.join(DESIGN_KINDS)} (or none: designs: [])",
            )
        if not (0.0 <= self.overfit_gap <= 1.0):
            raise ConfigError(
                "overfit_gap must lie in [0, 1]",
                got=str(self.overfit_gap),
                fix=f"set {_say('overfit_gap', '--overfit-gap')} to a gap between training and "
                "holdout means, e.g. 0.2",
            )
        _check_economy(self)
        _check_reflector(self)
        if self.train_tasks is not None and not (self.train_tasks and self.holdout_tasks):
            raise ConfigError("explicit task splits must not be empty", fix="name tasks")
        if self.train_tasks and self.holdout_tasks:
            overlap = set(self.train_tasks) & set(self.holdout_tasks)
            if overlap:
                raise ConfigError(
                    "a task cannot be both training and holdout",
                    got=", ".join(sorted(overlap)),
                    fix=f"remove it from one of {_say('train_tasks / holdout_tasks', '--train / --holdout')}",
                )
        return self

    @property
    def choice(self) -> ModelChoice:
        """The run's models: `model`, `models` and `api_base` as one ModelChoice."""
        return ModelChoice(model=self.model, config=self.models, api_base=self.api_base)

    @property
    def selection_tolerance(self) -> float | None:
        """The tie tolerance selection uses: `cost_tolerance` under `objective: cost-aware`,
        None (exact ties only) under `holdout`."""
        return self.cost_tolerance if self.objective == "cost-aware" else None

    @property
    def calibrated(self) -> bool:
        """True when the split comes from calibration (no explicit task ids)."""
        return self.train_tasks is None

    @property
    def reflects(self) -> bool:
        """True when each generation is reflected on: `reflection.enabled`, or when unset,
        the guided strategy (the only one that reads the reports)."""
        enabled = self.reflection.enabled
        return self.strategy == "guided" if enabled is None else enabled


_AGENT = "reflection.reflector='agent'"


def _check_reflector(config: EvolveConfig) -> None:
    """The reflector agent needs a meta model that calls tools: the offline rules do not."""
    settings = config.reflection
    spec = settings.meta_model or config.choice.meta_spec
    if settings.reflector == "agent" and is_offline_spec(spec):
        raise ConfigError(
            f"the agent reflector ({_say(_AGENT, '--reflector agent')}) needs a meta model that "
            "calls tools",
            got=f"the meta model is {spec!r}, which reflects by the offline rules",
            fix=f"set {_say('reflection.meta_model', '--meta-model')} to PROVIDER/MODEL (or "
            "scripted:FILE), or use another reflector",
        )


def _check_economy(config: EvolveConfig) -> None:
    stages = config.stages
    if any(n < 1 for n in stages) or list(stages) != sorted(set(stages)):
        raise ConfigError(
            "stages must be positive minibatch sizes in increasing order",
            got=",".join(str(n) for n in stages),
            fix=spoken(
                "set stages to e.g. (3,) (3 tasks first, then all of them), or omit it",
                "set --stages to e.g. 3,all (3 tasks first, then all of them), or omit it",
            ),
        )
    if not 0.0 <= config.stage_margin <= 1.0:
        raise ConfigError(
            "stage_margin must lie in [0, 1]",
            got=str(config.stage_margin),
            fix=f"set {_say('stage_margin', '--stage-margin')} to e.g. 0.1 "
            "(0: stop any child below its parent)",
        )
    if not 0.0 <= config.merge_rate <= 1.0:
        raise ConfigError(
            "merge_rate must lie in [0, 1]",
            got=str(config.merge_rate),
            fix=f"set {_say('merge_rate', '--merge')} to e.g. 0.2",
        )
    if not 0.0 <= config.cost_tolerance <= 1.0:
        raise ConfigError(
            "cost_tolerance must lie in [0, 1]",
            got=str(config.cost_tolerance),
            fix=f"set {_say('cost_tolerance', '--cost-tolerance')} to e.g. 0.03 (a score that "
            "close to the best's counts as a tie under objective cost-aware, broken by cost)",
        )
    if config.merge_rate > 0 and config.parents != "pareto":
        raise ConfigError(
            "merge needs Pareto-frontier parents",
            got=f"merge_rate {config.merge_rate} with parents {config.parents}",
            fix=spoken(
                "set parents='pareto' with merge_rate, or drop merge_rate",
                "pass --parents pareto with --merge, or drop --merge",
            ),
        )


# Upper bounds (docs/evolve.md, "Limits"): far above a useful run, low enough that a typo
# (--population 9000000) is refused before anything runs.
MAX_POPULATION = 256
MAX_REPETITIONS = 100
MAX_GENERATIONS = 1_000


def _say(field: str, flag: str) -> str:
    """A setting in its caller's words (issue 31): the EvolveConfig field a Python caller sets
    (`population`, `budgets.max_usd`), the flag at the command line (`--population`)."""
    return spoken(field, flag)


# The flag of each budget (the CLI's evolve options; `--max-train-evaluations` included).
_BUDGET_FLAGS = {"max_generations": "--generations", "max_evaluations": "--max-evaluations",
                 "max_train_evaluations": "--max-train-evaluations", "max_usd": "--max-usd",
                 "max_wall_s": "--max-wall-s", "plateau_generations": "--plateau"}  # fmt: skip


def _require_at_most(name: str, value: int | None, limit: int, said: str) -> None:
    if value is not None and value > limit:
        raise ConfigError(
            f"{name} is at most {limit}",
            got=str(value),
            fix=f"set {said} to {limit} or less (docs/evolve.md, Limits)",
        )


def _require_positive(name: str, value: float | None, said: str | None = None) -> None:
    """`said`: the setting in the caller's words (default `name`)."""
    if value is not None and not (value > 0 and math.isfinite(value)):
        said = said or name
        raise ConfigError(
            f"{name} must be positive",
            got=str(value),
            fix=f"set {said} to a positive number, or leave it unset for no limit"
            if name.startswith("max_") or name == "plateau_generations"
            else f"set {said} to a positive number",
        )


def parse_config(data: dict[str, Any]) -> EvolveConfig:
    """Validate raw input (CLI flags, a YAML file) into an EvolveConfig; ConfigError if bad."""
    try:
        return EvolveConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"invalid evolve config: {where}: {first['msg']}",
            got=str(first.get("input")),
            fix="see docs/evolve.md for the config fields",
        ) from exc


# What a run recorded before a field existed meant by its absence, where that differs from the
# field's default today: `strategy` defaulted to `random` until 2026-12 (the CLI always wrote
# it; a library run recorded before reflection existed has no `strategy` and was random).
_RECORDED_ABSENT: dict[str, object] = {"strategy": "random"}


def recorded_config(data: Any) -> Any:
    """`data` (an EvolveConfig as a run recorded it: in checkpoint.json or config.yaml) with the
    value a field had when the recording left it out because it did not exist yet, so an old
    run reads back with the settings it ran with, not today's defaults. Anything but a mapping
    is returned as it is (validation then says what is wrong)."""
    if not isinstance(data, dict):
        return data
    return {**_RECORDED_ABSENT, **data}
