"""The ReflectionReport: what a generation's exhaust says went wrong and right, and what to try.

`ReflectionBody` is what the meta model must reply (five lists, every item with its evidence);
`ReflectionReport` is what is stored as `reflection_gen{N}.json` (the body, validated and
normalised, plus where it came from, what was dropped, every attempt and, for the agent
reflector, every tool call it made). schema_version 2 (2 added `Evidence.runs`, the `agent`
source and `tool_calls`; a schema-1 file still loads).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright.errors import ConfigError

__all__ = [
    "REFLECTION_SCHEMA_VERSION",
    "Attempt",
    "Dropped",
    "Evidence",
    "MutationSuggestion",
    "Pattern",
    "PromptImprovement",
    "ReflectionBody",
    "ReflectionReport",
    "ReflectionSource",
    "StructuralRecommendation",
    "ToolUse",
    "load_reflection",
    "reflection_path",
    "write_reflection",
]

REFLECTION_SCHEMA_VERSION = 2
READABLE_REFLECTION_VERSIONS = (1, 2)

ReflectionSource = Literal["model", "agent", "offline_rules", "digest_fallback", "empty"]
"""Where a report came from: the meta model's validated reply to the digest; the reflector
agent's validated reply after it read the exhaust with its tools; the offline rules (the `sim`
path); the offline rules after the meta model's replies failed validation (a fallback); or no
records to reflect on (no call made)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Evidence(_Frozen):
    """What supports an item: the candidates and tasks it was seen in and how many runs or
    messages show it. `detail` may quote a message or a contrast. `runs` names the runs the
    agent reflector read that show it (`CANDIDATE/TASK/repK`); the agent must cite only runs
    it read."""

    candidates: list[str] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list)
    runs: list[str] = Field(default_factory=list)
    count: int = Field(ge=1, description="runs or messages that show it")
    detail: str = Field(default="", max_length=400)


class Pattern(_Frozen):
    """A failure or success pattern seen across the generation."""

    description: str = Field(min_length=1, max_length=500)
    kind: str = Field(default="", max_length=60, description="failure kind, category or feature")
    evidence: Evidence


class MutationSuggestion(_Frozen):
    """Apply `operator` at node `target` (node_insert: `role` names what to insert before or
    after it; gate_add: `max_loops` how many RELOOPs the new gate allows, None to draw 1-3).
    `kind` groups suggestions for credit assignment; `confidence` weights it."""

    id: str = Field(default="", max_length=20)
    operator: str
    target: str
    kind: str = Field(default="", max_length=60)
    rationale: str = Field(default="", max_length=500)
    confidence: float = Field(default=0.5, gt=0.0, le=1.0)
    role: str | None = None
    max_loops: int | None = Field(default=None, ge=1, le=10)
    evidence: Evidence


class PromptImprovement(_Frozen):
    """A sentence to add to the prompt of agent `target`, against failure kind `kind`."""

    target: str
    kind: str = Field(default="", max_length=60)
    text: str = Field(min_length=1, max_length=600)
    evidence: Evidence


class StructuralRecommendation(_Frozen):
    """A change of the graph: insert an agent of `role` at `target` (before it for preparing
    roles, after it for checking ones), add a verify gate after `target`, or remove it."""

    action: Literal["insert_node", "add_gate", "remove_node", "remove_gate"]
    target: str
    role: str | None = None
    rationale: str = Field(default="", max_length=500)
    evidence: Evidence


class ReflectionBody(_Frozen):
    """The five lists the meta model replies with (extra keys are an error)."""

    failure_patterns: list[Pattern] = Field(default_factory=list)
    success_patterns: list[Pattern] = Field(default_factory=list)
    mutation_suggestions: list[MutationSuggestion] = Field(default_factory=list)
    prompt_improvements: list[PromptImprovement] = Field(default_factory=list)
    structural_recommendations: list[StructuralRecommendation] = Field(default_factory=list)


class Dropped(_Frozen):
    """An item left out of the report after validation, and why (unknown node, frozen node)."""

    item: str
    reason: str


class Attempt(_Frozen):
    """One call of the meta model: whether its reply validated, and the error when it did not."""

    attempt: int = Field(ge=1)
    ok: bool
    error: str | None = None


class ToolUse(_Frozen):
    """One tool call of the reflector agent: the tool, its arguments (JSON, cut at 300
    characters), whether it answered, and how many characters it returned."""

    turn: int = Field(ge=1)
    tool: str
    arguments: str = Field(default="", max_length=300)
    ok: bool
    chars: int = Field(ge=0)


class ReflectionReport(ReflectionBody):
    """A generation's reflection as stored in `reflection_gen{N}.json` (schema_version 2).

    Every mutation suggestion names a known operator and a node some candidate has and that is
    not frozen (others are in `dropped` with the reason); every structural recommendation and
    prompt improvement is also covered by a suggestion, so the guided strategy can weight it.
    `simulated` is True when the records were made with a simulated model. `tool_calls` is
    every tool call of the agent reflector (empty for the other sources).
    """

    schema_version: int = REFLECTION_SCHEMA_VERSION
    generation: int = Field(ge=0)
    source: ReflectionSource
    model: str | None = None
    simulated: bool
    candidates: list[str] = Field(default_factory=list, description="the generation's ids")
    dropped: list[Dropped] = Field(default_factory=list)
    attempts: list[Attempt] = Field(default_factory=list)
    tool_calls: list[ToolUse] = Field(default_factory=list)
    digest_chars: int = 0
    digest_omitted: list[str] = Field(default_factory=list)
    note: str = ""

    @property
    def empty(self) -> bool:
        return not (self.failure_patterns or self.success_patterns or self.mutation_suggestions)


def reflection_path(run_dir: Path, generation: int) -> Path:
    """`<run>/reflection_gen{N}.json`."""
    return run_dir / f"reflection_gen{generation}.json"


def write_reflection(run_dir: Path, report: ReflectionReport) -> Path:
    """Write the report to `reflection_path` atomically (temp file, fsync, rename)."""
    path = reflection_path(run_dir, report.generation)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(report.model_dump_json(indent=2) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    return path


def load_reflection(path: Path) -> ReflectionReport:
    """Read a reflection_gen{N}.json. ConfigError naming the file when it is missing, not JSON,
    of another schema_version, or invalid."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"{path} does not exist", fix="run `loopwright outer-loop reflect` first"
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not JSON", got=str(exc)) from None
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version not in READABLE_REFLECTION_VERSIONS:
        raise ConfigError(
            f"{path} has reflection schema_version {version!r}; this loopwright reads "
            f"{', '.join(map(str, READABLE_REFLECTION_VERSIONS))}",
            fix="reflect on the generation again, or use the loopwright version that wrote it",
        )
    try:
        return ReflectionReport.model_validate({**raw, "schema_version": REFLECTION_SCHEMA_VERSION})
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a valid reflection report", got=str(exc)[:500]) from None
