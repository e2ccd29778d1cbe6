"""The structured replies of the meta model, one pydantic model per phase (docs/research.md).

Every reply is one JSON object validated against these models (frozen, unknown keys refused),
then against the phase's rules with the iteration's context (`_validate`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

__all__ = [
    "AppendPromptOp",
    "AxisStatus",
    "Critique",
    "Distillation",
    "Envelope",
    "HypothesisAdd",
    "HypothesisRemove",
    "KnowledgeAdd",
    "MutationOp",
    "NewAxis",
    "PatchOp",
    "Reflection",
    "Repair",
    "ReplaceWorkflowOp",
    "SetNodeOp",
    "Spec",
    "SpecRef",
    "SpecVerdict",
    "ToolFile",
]

SPEC_ID = r"^[a-z][a-z0-9_-]{0,23}$"
AXIS = r"^[a-z][a-z0-9_]{0,31}$"

DistillVerdict = Literal[
    "adopted",
    "confirmed",
    "promising",
    "inconclusive",
    "no_effect",
    "refuted",
    "not_confirmed",
    "implementer_skip",
    "critic_block",
]


class _Reply(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# -- patches ----------------------------------------------------------------------------------


class MutationOp(_Reply):
    """Apply a mutation operator of the outer loop's library with `random.Random(seed)`."""

    op: Literal["mutation"]
    operator: str
    seed: int = Field(ge=0)


class SetNodeOp(_Reply):
    """Set fields of one node (agent: prompt, model, loop, max_turns, timeout_s, tools;
    gate: max_loops, check, judge, reloop_to; fn: args)."""

    op: Literal["set_node"]
    node: str
    fields: dict[str, JsonValue]


class AppendPromptOp(_Reply):
    """Append text (one or more lines) to an agent's prompt."""

    op: Literal["append_prompt"]
    node: str
    text: str = Field(min_length=1)


class ReplaceWorkflowOp(_Reply):
    """Replace the whole workflow with this document (docs/workflow.md schema)."""

    op: Literal["replace_workflow"]
    workflow: dict[str, JsonValue]


PatchOp = Annotated[
    MutationOp | SetNodeOp | AppendPromptOp | ReplaceWorkflowOp, Field(discriminator="op")
]


# -- THINK ------------------------------------------------------------------------------------


class SpecRef(_Reply):
    """A spec of a committed iteration."""

    iter: int = Field(ge=1)
    spec_id: str


class Spec(_Reply):
    """One ExperimentSpec: the idea, its axis, and the patch (None: measure the workspace)."""

    spec_id: Annotated[str, Field(pattern=SPEC_ID)]
    title: str = Field(min_length=1, max_length=200)
    intervention_axis: Annotated[str, Field(pattern=AXIS)]
    hypothesis: str = Field(min_length=1)
    prediction: str = ""
    scale: Literal["probe", "perf"] = "probe"
    patch: tuple[PatchOp, ...] | None = None
    rebuttal: str | None = None
    confirms: SpecRef | None = None


class HypothesisAdd(_Reply):
    text: str = Field(min_length=1)
    axis: str | None = None
    spec_id: str | None = None


class HypothesisRemove(_Reply):
    id: Annotated[str, Field(pattern=r"^H\d+$")]
    reason: str = Field(min_length=1)


class KnowledgeAdd(_Reply):
    text: str = Field(min_length=1, max_length=2000)
    supersedes: tuple[Annotated[str, Field(pattern=r"^K\d+$")], ...] = ()


class ToolFile(_Reply):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    content: str = Field(max_length=65536)


class Envelope(_Reply):
    """THINK's reply: K >= 1 specs (status OK), or none (SKIP_THINK_EMPTY), and eager writes."""

    status: Literal["OK", "SKIP_THINK_EMPTY"]
    reasoning: str = ""
    rebuttal: str | None = None
    specs: tuple[Spec, ...] = ()
    hypotheses_add: tuple[HypothesisAdd, ...] = ()
    knowledge_add: tuple[KnowledgeAdd, ...] = ()
    experiment_design: str | None = None
    tools: tuple[ToolFile, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Envelope:
        if self.status == "OK" and not self.specs:
            raise ValueError("status OK needs at least one spec (or say SKIP_THINK_EMPTY)")
        if self.status == "SKIP_THINK_EMPTY" and self.specs:
            raise ValueError("SKIP_THINK_EMPTY must carry no specs")
        ids = [s.spec_id for s in self.specs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"spec ids must be distinct, got {ids}")
        return self


# -- CRITIC, DISTILL, REFLECT, repair ------------------------------------------------------


class Critique(_Reply):
    """CRITIC's prediction for one patched spec."""

    verdict: Literal["OK", "WARN", "REVISE", "BLOCK"]
    reason: str = Field(min_length=1)
    matches: tuple[str, ...] = ()


class SpecVerdict(_Reply):
    spec_id: str
    verdict: DistillVerdict
    lesson: str = Field(min_length=1)


class Distillation(_Reply):
    """DISTILL's reply over all K specs of the iteration."""

    specs: tuple[SpecVerdict, ...]
    cross_spec_lesson: str
    milestone: str
    adopt: str | None = None
    knowledge_add: tuple[KnowledgeAdd, ...] = ()
    hypotheses_add: tuple[HypothesisAdd, ...] = ()
    hypotheses_remove: tuple[HypothesisRemove, ...] = ()


class AxisStatus(_Reply):
    axis: str
    status: Literal["open", "exhausted", "closed"]
    note: str = ""


class NewAxis(_Reply):
    axis: Annotated[str, Field(pattern=AXIS)]
    description: str = Field(min_length=1)


class Reflection(_Reply):
    """REFLECT's map of the space: a status per axis and a ranked frontier of open axes."""

    verdict: Literal["FRONTIER", "SPACE_EXHAUSTED"]
    axes: tuple[AxisStatus, ...]
    frontier: tuple[str, ...] = ()
    taxonomy_add: tuple[NewAxis, ...] = ()
    notes: str = ""


class Repair(_Reply):
    """The editor's answer after a failed smoke attempt: a new patch, or None (give up)."""

    patch: tuple[PatchOp, ...] | None
    note: str = ""
