"""workspace/: the current workflow and what has been measured of it; frozen mid-iteration.

`workspace/workflow.yaml` is the workflow every spec of an iteration patches (in its own
overlay, never here); `workspace/state.json` holds its measured (task, repetition) pairs and
the failures seen, and the committed iteration it reflects. Only `init` and `reconcile` write
here: reconcile runs after a commit and before the next iteration starts, and rebuilds the
workspace from the committed record (adopting a spec's overlay, or adding new baseline pairs);
it is idempotent, so a crash between the commit and the reconcile is repaired on resume.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from statistics import fmean

from pydantic import BaseModel, ConfigDict

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError
from loopwright.records import CycleRecord, FailureCategory
from loopwright.runtime import runtime_catalog
from loopwright.workflow import Workflow, load_workflow, workflow_to_yaml

__all__ = [
    "PairScore",
    "Workspace",
    "WorkspaceState",
    "failures_from",
    "pair_of",
    "paired_delta",
    "tree_digest",
]

STATE_SCHEMA_VERSION = 1


class PairScore(BaseModel):
    """One measured (task, repetition) run: its partial credit, whether it resolved the task,
    whether the grade counts (valid, or tampered: a zero), and its failure category."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str
    rep: int
    score: float
    resolved: bool
    valid: bool
    failure: str


class WorkspaceState(BaseModel):
    """workspace/state.json."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = STATE_SCHEMA_VERSION
    iteration: int
    workflow_hash: str
    source: str
    pairs: tuple[PairScore, ...] = ()
    failures: dict[str, tuple[str, ...]] = {}

    def score(self, below: int | None = None) -> float | None:
        """Mean partial credit over the valid pairs, of repetitions below `below` when given
        (None when there is none)."""
        valid = [p.score for p in self.pairs if p.valid and (below is None or p.rep < below)]
        return fmean(valid) if valid else None

    def resolved_rate(self) -> float | None:
        valid = [p for p in self.pairs if p.valid]
        return fmean(1.0 if p.resolved else 0.0 for p in valid) if valid else None

    def missing_reps(self, tasks: Sequence[str], reps: Iterable[int]) -> list[int]:
        """The repetitions of `reps` for which some task has no pair yet."""
        have = {(p.task, p.rep) for p in self.pairs}
        return [r for r in reps if any((t, r) not in have for t in tasks)]

    def with_pairs(self, pairs: Iterable[PairScore]) -> tuple[PairScore, ...]:
        merged = {(p.task, p.rep): p for p in self.pairs}
        merged.update({(p.task, p.rep): p for p in pairs})
        return tuple(merged[k] for k in sorted(merged))


def pair_of(record: CycleRecord) -> PairScore:
    """The PairScore of one run's record."""
    return PairScore(
        task=record.task_id,
        rep=record.repetition,
        score=record.score_end,
        resolved=record.resolved,
        valid=record.scored,  # a tampered run counts: as the zero it is
        failure=str(record.failure_category),
    )


def paired_delta(
    spec: Sequence[PairScore], baseline: Sequence[PairScore]
) -> tuple[float | None, float | None, float | None, int]:
    """(spec mean, baseline mean, delta, pairs) over the (task, rep) pairs valid on both sides.

    Means are computed exactly (fractions) before rounding to float, so a delta of zero is
    exactly 0.0 when both sides scored the same."""
    base = {(p.task, p.rep): p for p in baseline if p.valid}
    both = [(p, base[(p.task, p.rep)]) for p in spec if p.valid and (p.task, p.rep) in base]
    if not both:
        return None, None, None, 0
    mine = sum(Fraction(a.score) for a, _ in both) / len(both)
    theirs = sum(Fraction(b.score) for _, b in both) / len(both)
    return float(mine), float(theirs), float(mine - theirs), len(both)


def failures_from(records: Iterable[CycleRecord]) -> dict[str, tuple[str, ...]]:
    """Node id -> failure messages: each agent step's error and, for an unresolved run, its
    failure category on the last node that ran (what prompt_mutate weighs guidance by)."""
    out: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if record.grade is not None and record.grade.resolved:
            continue
        for step in record.steps:
            if step.error:
                out[step.node_id].append(f"{record.task_id}: {step.error}")
        if record.steps and record.failure_category != FailureCategory.NONE:
            out[record.steps[-1].node_id].append(f"{record.task_id}: {record.failure_category}")
    return {k: tuple(v[-20:]) for k, v in out.items()}


def tree_digest(root: Path) -> str:
    """SHA-256 over every file under `root` (relative path and bytes), in sorted order."""
    digest = hashlib.sha256()
    if root.is_dir():
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class Workspace:
    """The workspace/ directory of a working directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workflow_path = root / "workflow.yaml"
        self.state_path = root / "state.json"

    def workflow(self) -> Workflow:
        return load_workflow(self.workflow_path, catalog=runtime_catalog())

    def state(self) -> WorkspaceState:
        if not self.state_path.is_file():
            raise ConfigError(
                f"{self.state_path} is missing: the workspace is incomplete",
                fix="restore it from the last iteration, or start a new working directory",
            )
        return WorkspaceState.model_validate_json(self.state_path.read_text(encoding="utf-8"))

    def digest(self) -> str:
        return tree_digest(self.root)

    def write(self, workflow: Workflow | None, state: WorkspaceState) -> None:
        """Replace the workflow (when given) then the state, each atomically; the state last,
        so a crash in between leaves the old iteration number and the write is redone."""
        self.root.mkdir(parents=True, exist_ok=True)
        if workflow is not None:
            atomic_write(self.workflow_path, workflow_to_yaml(workflow))
        atomic_write(self.state_path, state.model_dump_json(indent=2) + "\n")
