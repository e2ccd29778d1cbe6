"""The outer loop: evolutionary search over workflows (individuals, mutations, selection,
MAP-Elites archive, novelty, calibration, holdout every generation, checkpoint and resume).

See docs/evolve.md (the engine and the CLI), docs/mutations.md and docs/archive.md.
"""

from __future__ import annotations

from loopwright.search._api import (
    Execution,
    check_inputs,
    evolve,
    executor_for,
    finalize_run,
    open_run,
    resume,
    start,
)
from loopwright.search._archive import (
    AddOutcome,
    ArchiveSnapshot,
    Descriptor,
    MapElitesArchive,
    default_descriptors,
    descriptors_by_name,
)
from loopwright.search._calibrate import Calibration, calibrate, split_tasks
from loopwright.search._checkpoint import (
    EVOLVE_RUN,
    Checkpoint,
    evolve_run,
    load_checkpoint,
    write_checkpoint,
)
from loopwright.search._config import (
    Budgets,
    CalibrationSettings,
    EvolveConfig,
    ReflectionSettings,
    parse_config,
)
from loopwright.search._credit import CreditRow, CreditTable, credit_table
from loopwright.search._designer import DESIGN_KINDS, design
from loopwright.search._distance import workflow_distance
from loopwright.search._engine import EvolutionEngine
from loopwright.search._hand_designs import DesignHoldout, DesignScore, hand_designs
from loopwright.search._individual import Guidance, Individual, Lineage, TaskResult, mode_name
from loopwright.search._modes import EphemeralModeRegistry, promote_winner
from loopwright.search._novelty import NoveltyFilter
from loopwright.search._outer_workflow import (
    OUTER_LOOP_WORKFLOW,
    OuterLoop,
    write_result,
)
from loopwright.search._overfit import OverfitDetector, OverfitSignal
from loopwright.search._progress import (
    PROGRESS_EVENTS,
    CalibrationFinished,
    CalibrationRunFinished,
    ChildCreated,
    DesignEvaluated,
    EvaluationFinished,
    GenerationFinished,
    GenerationStarted,
    GenerationSummary,
    HyperparameterRecord,
    Listener,
    MutationRejected,
    PopulationShort,
    ProgressEvent,
    ReflectionFinished,
    ReflectionSkipped,
    RunFinished,
    RunResumed,
    RunStarted,
    Spent,
    read_progress,
)
from loopwright.search._protocols import (
    MutationContext,
    MutationOperator,
    MutationResult,
    MutationStrategy,
    NoveltyVerdict,
)
from loopwright.search._reflection_step import reflect_generation
from loopwright.search._report import (
    EvolveResult,
    evolve_result,
    failures_in,
    failures_of,
    tied_best,
)
from loopwright.search._resolve import ResolvedRun, resolve_run
from loopwright.search._selection import cost_aware_order, tournament
from loopwright.search._settings import SETTINGS_SECTION, merged_config, run_settings
from loopwright.search._staging import StageVerdict
from loopwright.search._stop import RunStopped, ShouldStop, StopHandle
from loopwright.search.mutations._core import (
    MUTATIONS,
    MutationRegistry,
    RandomStrategy,
    mutate,
    mutation,
)
from loopwright.search.mutations._guided import GuidedStrategy, guided_mutate
from loopwright.search.mutations._prompt import GUIDANCE
from loopwright.search.mutations._roles import ROLES, make_role
from loopwright.stats import BootstrapCI, paired_bootstrap

__all__ = [
    "DESIGN_KINDS",
    "EVOLVE_RUN",
    "GUIDANCE",
    "MUTATIONS",
    "OUTER_LOOP_WORKFLOW",
    "PROGRESS_EVENTS",
    "ROLES",
    "SETTINGS_SECTION",
    "AddOutcome",
    "ArchiveSnapshot",
    "BootstrapCI",
    "Budgets",
    "Calibration",
    "CalibrationFinished",
    "CalibrationRunFinished",
    "CalibrationSettings",
    "Checkpoint",
    "ChildCreated",
    "CreditRow",
    "CreditTable",
    "Descriptor",
    "DesignEvaluated",
    "DesignHoldout",
    "DesignScore",
    "EphemeralModeRegistry",
    "EvaluationFinished",
    "EvolutionEngine",
    "EvolveConfig",
    "EvolveResult",
    "Execution",
    "GenerationFinished",
    "GenerationStarted",
    "GenerationSummary",
    "Guidance",
    "GuidedStrategy",
    "HyperparameterRecord",
    "Individual",
    "Lineage",
    "Listener",
    "MapElitesArchive",
    "MutationContext",
    "MutationOperator",
    "MutationRegistry",
    "MutationRejected",
    "MutationResult",
    "MutationStrategy",
    "NoveltyFilter",
    "NoveltyVerdict",
    "OuterLoop",
    "OverfitDetector",
    "OverfitSignal",
    "PopulationShort",
    "ProgressEvent",
    "RandomStrategy",
    "ReflectionFinished",
    "ReflectionSettings",
    "ReflectionSkipped",
    "ResolvedRun",
    "RunFinished",
    "RunResumed",
    "RunStarted",
    "RunStopped",
    "ShouldStop",
    "Spent",
    "StageVerdict",
    "StopHandle",
    "TaskResult",
    "calibrate",
    "check_inputs",
    "cost_aware_order",
    "credit_table",
    "default_descriptors",
    "descriptors_by_name",
    "design",
    "evolve",
    "evolve_result",
    "evolve_run",
    "executor_for",
    "failures_in",
    "failures_of",
    "finalize_run",
    "guided_mutate",
    "hand_designs",
    "load_checkpoint",
    "make_role",
    "merged_config",
    "mode_name",
    "mutate",
    "mutation",
    "open_run",
    "paired_bootstrap",
    "parse_config",
    "promote_winner",
    "read_progress",
    "reflect_generation",
    "resolve_run",
    "resume",
    "run_settings",
    "split_tasks",
    "start",
    "tied_best",
    "tournament",
    "workflow_distance",
    "write_checkpoint",
    "write_result",
]
