"""IterRecord (iteration/iter_N/record.json), eval_metadata_<spec>.json, and the atomic commit.

The commit writes record.json inside `.staging/iter_N/`, fsyncs it, then renames the whole
directory to `iteration/iter_N/` (one rename: atomic on POSIX). Before the rename nothing under
iteration/ changed, so a crash leaves the last committed iteration exactly as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loopwright.errors import ConfigError
from loopwright.evaluation import Aggregate
from loopwright.research._context import SpecOutcome
from loopwright.research._knowledge import KnowledgeDigest
from loopwright.research._schemas import AxisStatus, NewAxis, Spec
from loopwright.research._workspace import PairScore, WorkspaceState

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "CriticRound",
    "CritiqueFile",
    "DistillBlock",
    "DistillFile",
    "DistillSummary",
    "EvalMetadata",
    "ExperimentBlock",
    "IterRecord",
    "IterSummary",
    "ReflectBlock",
    "RunRow",
    "SmokeAttempt",
    "SpecBlock",
    "SubmissionMeta",
    "ThinkBlock",
    "WaveBlock",
    "commit",
    "load_iter_record",
]

RECORD_SCHEMA_VERSION = 1
OutcomeClass = Literal["measured", "implementer_skip", "critic_block"]


class _R(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SmokeAttempt(_R):
    """One implementer attempt: the patch tried, why it failed to realise, or its smoke run.
    `reused` names the committed spec ("iter_N/SPEC") whose identical workflow already passed
    its smoke run and was measured; no new smoke run was made then."""

    attempt: int
    patch: str
    error: str | None
    workflow_hash: str | None
    run_dir: str | None
    run_status: str | None
    failure_category: str | None
    score: float | None
    passed: bool
    reused: str | None = None


class CriticRound(_R):
    round: int
    verdict: Literal["OK", "WARN", "REVISE", "BLOCK"]
    reason: str
    matches: tuple[str, ...] = ()
    malformed: bool = False


class CritiqueFile(_R):
    """critique_<spec_id>.json: CRITIC's rounds on one spec and whether it ended blocked."""

    schema_version: int = RECORD_SCHEMA_VERSION
    spec_id: str
    rounds: tuple[CriticRound, ...]
    blocked: bool
    pattern: tuple[str, ...]


class ExperimentBlock(_R):
    """The experiment of one spec: every spec has one, whether it ran or not."""

    outcome_class: OutcomeClass
    overlay: str | None
    workflow_hash: str | None
    pattern: tuple[str, ...]
    smoke: tuple[SmokeAttempt, ...]
    passes: int
    runs: int
    score: float | None
    baseline: float | None
    delta: float | None
    pairs: int
    eval_metadata: str | None
    note: str


class DistillBlock(_R):
    verdict: str
    lesson: str


class SpecBlock(_R):
    """Everything about one spec: as proposed (after any revision), CRITIC's rounds, its
    experiment, its DISTILL verdict."""

    spec: Spec
    revised: bool
    critic: tuple[CriticRound, ...]
    experiment: ExperimentBlock
    distill: DistillBlock


class ThinkBlock(_R):
    status: Literal["OK", "SKIP_THINK_EMPTY"]
    calls: int
    malformed: int
    escalations: int
    rebuttal: str | None
    shared_axes: tuple[str, ...]
    frontier: tuple[str, ...]
    reasoning: str
    hypotheses_added: tuple[str, ...]
    knowledge_added: tuple[str, ...]
    tools_written: tuple[str, ...]


class ReflectBlock(_R):
    """One REFLECT: why it fired, its verdict, the status of every axis and the frontier."""

    trigger: Literal["heartbeat", "axis_concentration", "think_escalation"]
    verdict: Literal["FRONTIER", "SPACE_EXHAUSTED"]
    axes: tuple[AxisStatus, ...]
    frontier: tuple[str, ...]
    taxonomy_add: tuple[NewAxis, ...] = ()
    notes: str = ""
    malformed: bool = False


class WaveBlock(_R):
    executor: str
    cap: int
    queued: bool
    makespan_rounds: int
    workers: dict[str, int]
    episodes: dict[str, int]
    wall_s: float


class DistillFile(_R):
    """distill_<spec_id>.json: what DISTILL saw of one spec and the verdict it gave."""

    schema_version: int = RECORD_SCHEMA_VERSION
    spec_id: str
    outcome: SpecOutcome
    verdict: str
    lesson: str


class DistillSummary(_R):
    status: Literal["OK", "SKIP_DISTILL_EMPTY"]
    cross_spec_lesson: str
    milestone: str
    adopted: str | None
    adopt_refused: str | None
    knowledge_added: tuple[str, ...]
    hypotheses_added: tuple[str, ...]
    hypotheses_removed: tuple[str, ...]


class IterSummary(_R):
    specs: int
    measured: int
    implementer_skip: int
    critic_block: int
    axes: tuple[str, ...]
    best_spec: str | None
    best_delta: float | None
    adopted: str | None
    score_before: float | None
    score_after: float | None


class IterRecord(_R):
    """record.json of one committed iteration. `cost_usd` is every agent run's cost;
    `offline_cost_usd` the part of it run on offline models (sim's made-up price, which the
    cost ledger does not hold; 0.0 in records made before it existed)."""

    schema_version: int = RECORD_SCHEMA_VERSION
    iter: int
    attempt: int
    started_at: str
    committed_at: str
    wall_s: float
    cost_usd: float
    offline_cost_usd: float = 0.0
    simulated: bool
    meta_model: str
    eval_model: str
    workspace_digest_start: str
    workspace_digest_precommit: str
    knowledge: KnowledgeDigest
    think: ThinkBlock
    specs: tuple[SpecBlock, ...]
    wave: WaveBlock | None
    distill: DistillSummary
    summary: IterSummary
    reflect: tuple[ReflectBlock, ...] = ()
    workspace_next: WorkspaceState
    adopted_workflow: str | None


class RunRow(_R):
    task: str
    rep: int
    score: float
    resolved: bool
    valid: bool
    failure_category: str
    duration_s: float
    tokens: int
    cost_usd: float | None
    run_dir: str


class SubmissionMeta(_R):
    key: str
    pass_idx: int
    episodes: int
    workers: int
    wall_s: float


class EvalMetadata(_R):
    """eval_metadata_<spec_id>.json: the spec's measured evaluation and its share of the wave."""

    schema_version: int = RECORD_SCHEMA_VERSION
    iteration: int
    spec_id: str
    workflow_hash: str
    passes: int
    executor: str
    wave_cap: int
    wave_makespan_rounds: int
    wave_queued: bool
    submissions: tuple[SubmissionMeta, ...]
    runs: tuple[RunRow, ...]
    aggregate: Aggregate
    pairs: tuple[PairScore, ...]
    paired_with_baseline: int
    score: float | None
    baseline: float | None
    delta: float | None
    simulated: bool


def write_json(path: Path, model: BaseModel) -> None:
    """Write a model as indented JSON, flushed to disk."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write(model.model_dump_json(indent=2) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def commit(staging: Path, final: Path, record: IterRecord) -> None:
    """Write record.json into `staging`, then move `staging` to `final` in one rename."""
    if final.exists():
        raise ConfigError(
            f"{final} already exists: iteration {record.iter} was committed before",
            fix="this is a bug or a hand-made directory; remove the duplicate and resume",
        )
    write_json(staging / "record.json", record)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging.rename(final)  # one rename: atomic on POSIX
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)  # make the rename itself durable
    finally:
        os.close(fd)


def load_iter_record(path: Path) -> IterRecord:
    """Read iteration/iter_N/record.json. ConfigError when missing, of another schema, or bad."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} cannot be read", got=str(exc)) from None
    if raw.get("schema_version") != RECORD_SCHEMA_VERSION:
        raise ConfigError(
            f"{path} has record schema_version {raw.get('schema_version')!r}",
            fix=f"this loopwright reads schema_version {RECORD_SCHEMA_VERSION}",
        )
    return IterRecord.model_validate(raw)
