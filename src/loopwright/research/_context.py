"""What each phase shows the meta model: one typed context per phase, sent as JSON.

The prompt of a phase (`_prompts.render`) is its instructions followed by the context as a
JSON block; the offline meta model (`_sim_meta.SimResearcher`) parses the same block back into
these models, so a real model and the sim see exactly the same information.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from loopwright.research._goal import Escalation
from loopwright.research._journal import Experience, OpenHypothesis
from loopwright.research._schemas import Critique, PatchOp, Spec

__all__ = [
    "AxisView",
    "CriticContext",
    "DistillContext",
    "KnowledgeView",
    "Promising",
    "ReflectContext",
    "RepairContext",
    "Revision",
    "Rules",
    "SpecOutcome",
    "ThinkContext",
]


class _Ctx(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AxisView(_Ctx):
    """An axis of the taxonomy with its status at the last REFLECT."""

    name: str
    description: str
    operators: tuple[str, ...]
    status: Literal["open", "exhausted", "closed"] = "open"


class KnowledgeView(_Ctx):
    id: str
    origin: str
    text: str


class Rules(_Ctx):
    """The constraints' enforced directives."""

    forbid_axes: tuple[str, ...] = ()
    forbid_operators: tuple[str, ...] = ()
    max_nodes: int | None = None
    protect_nodes: tuple[str, ...] = ()


class Promising(_Ctx):
    """A probe DISTILL found promising on the current workspace, not yet measured at perf."""

    iter: int
    spec_id: str
    axis: str
    title: str
    hypothesis: str
    patch: tuple[PatchOp, ...] | None
    delta: float | None


class Revision(_Ctx):
    """A spec CRITIC sent back to THINK, with its critique."""

    spec: Spec
    critique: Critique


class ThinkContext(_Ctx):
    """`score` is the workspace's mean over every measured pair; `probe_score` over the pairs
    a probe is compared on (the first probe_passes repetitions)."""

    phase: Literal["think"] = "think"
    iteration: int
    seed: int
    goal: str
    constraints: str
    rules: Rules
    knowledge: tuple[KnowledgeView, ...]
    workflow: dict[str, JsonValue]
    workflow_hash: str
    score: float | None
    probe_score: float | None
    failures: dict[str, tuple[str, ...]]
    experience: tuple[Experience, ...]
    hypotheses: tuple[OpenHypothesis, ...]
    taxonomy: tuple[AxisView, ...]
    frontier: tuple[str, ...]
    shared_axes: tuple[str, ...]
    axis_window: int
    max_specs: int
    escalation: Escalation
    promising: tuple[Promising, ...]
    revise: Revision | None = None


class CriticContext(_Ctx):
    phase: Literal["critic"] = "critic"
    iteration: int
    round: Literal[1, 2]
    spec: Spec
    pattern: tuple[str, ...]
    preview_error: str | None
    workflow_hash: str
    experience: tuple[Experience, ...]
    knowledge: tuple[KnowledgeView, ...]


class SpecOutcome(_Ctx):
    """One spec's experiment as DISTILL sees it (numbers computed by the loop)."""

    spec: Spec
    outcome_class: Literal["measured", "implementer_skip", "critic_block"]
    pattern: tuple[str, ...]
    score: float | None
    baseline: float | None
    delta: float | None
    pairs: int
    resolved_rate: float | None
    baseline_resolved_rate: float | None
    failure_counts: dict[str, int]
    note: str


class DistillContext(_Ctx):
    phase: Literal["distill"] = "distill"
    iteration: int
    escalation: Escalation
    workspace_hash: str
    workspace_score: float | None
    outcomes: tuple[SpecOutcome, ...]
    hypotheses: tuple[OpenHypothesis, ...]
    knowledge: tuple[KnowledgeView, ...]
    experience: tuple[Experience, ...]


class ReflectContext(_Ctx):
    phase: Literal["reflect"] = "reflect"
    iteration: int
    seed: int
    trigger: str
    rules: Rules
    taxonomy: tuple[AxisView, ...]
    workflow: dict[str, JsonValue]
    workflow_hash: str
    failures: dict[str, tuple[str, ...]]
    experience: tuple[Experience, ...]
    exhaust_after: int
    last_adoption: int
    shared_axes: tuple[str, ...]


class RepairContext(_Ctx):
    phase: Literal["repair"] = "repair"
    iteration: int
    attempt: int
    spec: Spec
    patch: tuple[PatchOp, ...]
    error: str
    workflow: dict[str, JsonValue]
