"""The workflow genome as pydantic models: agent, function and gate nodes, edges, the workflow.

The models check shape only (types, ranges, id syntax, unknown keys). Whether a workflow makes
sense as a graph, and whether the names it uses are known, is `validate_workflow`'s job, so that
every such problem can be reported at once and name the node or edge at fault.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Literal, TypeAlias

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from loopwright.errors import ConfigError

__all__ = [
    "EXTERNAL_LOOP_PREFIX",
    "MODEL_TIERS",
    "PLACEHOLDERS",
    "SCHEMA_VERSION",
    "AgentNode",
    "ArgValue",
    "Edge",
    "FnNode",
    "GateNode",
    "Node",
    "Workflow",
]

SCHEMA_VERSION = 1

PLACEHOLDERS: Mapping[str, str] = MappingProxyType(
    {
        "instruction_file": "path of the task's instruction file (required in every prompt)",
        "workspace": "path of the workspace: the task's repository, where the agent works",
        "rules": "the task's working rules as the runtime states them (test command, network...)",
        "notes": "notes written by earlier nodes in this run (write_notes); empty when none",
        "feedback": "why the last gate sent the run back (RELOOP); empty on the first pass",
        "task_id": "the task's id",
    }
)
"""Every placeholder a prompt template may use, with what the runtime fills it with."""

MODEL_TIERS: tuple[str, ...] = ("small", "medium", "large")
"""Model tiers an agent may name instead of a concrete model; the runtime maps them to models."""

EXTERNAL_LOOP_PREFIX = "external:"
"""`loop: external:NAME` runs the agent through an external agent CLI registered as NAME."""

_ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def _node_id(value: str) -> str:
    if not _ID_RE.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a valid node id: use up to 64 letters, digits, '_' and '-', "
            "starting with a letter or '_' (for example 'builder' or 'gate_verify')"
        )
    return value


def _workflow_name(value: str) -> str:
    if not _NAME_RE.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a valid workflow name: use letters, digits, '_', '.' and '-', "
            "starting with a letter or digit (for example 'research-build-verify')"
        )
    return value


def _no_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


NodeId: TypeAlias = Annotated[str, AfterValidator(_node_id)]
ArgValue: TypeAlias = str | int | float | bool
"""The value types a function node's `args` may hold."""


# Bounds on what a workflow may ask for (docs/workflow.md, "Limits"): far above any useful
# value, low enough that a typo (max_loops: 1000000000, a 10 MB prompt) is refused at load.
MAX_LOOPS = 1_000
MAX_TURNS = 1_000
MAX_TIMEOUT_S = 86_400
MAX_PROMPT_CHARS = 100_000


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AgentNode(_Frozen):
    """An LLM agent: a role, a prompt template, a tool allowlist, an agent loop and a model.

    `prompt` may use the placeholders in `PLACEHOLDERS` and must use `{instruction_file}`;
    `loop` is react | plan_execute | hybrid | external:NAME; `model` is a tier from
    `MODEL_TIERS` or a concrete model name. Names are checked by `validate_workflow`.
    """

    # Field order is the order files are written in: short settings first, the prompt last.
    id: NodeId
    kind: Literal["agent"] = "agent"
    role: Annotated[str, AfterValidator(_no_blank)]
    loop: str = "react"
    model: Annotated[str, Field(pattern=r"^\S+$")] = "medium"
    timeout_s: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_S)] = 600
    max_turns: Annotated[int, Field(ge=1, le=MAX_TURNS)] = 30
    tools: tuple[str, ...] = ()
    prompt: Annotated[str, Field(max_length=MAX_PROMPT_CHARS)]


class FnNode(_Frozen):
    """A registered Python function (run the visible tests, collect notes, ...) with its args."""

    id: NodeId
    kind: Literal["fn"] = "fn"
    fn: str
    args: dict[str, ArgValue] = Field(default_factory=dict)

    @field_validator("args", mode="before")
    @classmethod
    def _scalar_args(cls, value: object) -> object:
        # Checked here so a bad value gives one error, not one per member of the union.
        if isinstance(value, Mapping):
            for key, item in value.items():
                if not isinstance(item, str | int | float | bool) or (
                    isinstance(item, float) and not math.isfinite(item)
                ):
                    raise ValueError(
                        f"args[{key!r}] must be a string, a finite number or a boolean; "
                        f"got {item!r:.60}"
                    )
        return value


class GateNode(_Frozen):
    """A decision point: a registered `check` or an LLM `judge` prompt (exactly one of them).

    On PROCEED the run continues along the gate's forward edges; on failure it goes back
    (RELOOP) to `reloop_to`, an upstream node, at most `max_loops` times.
    """

    id: NodeId
    kind: Literal["gate"] = "gate"
    check: str | None = None
    reloop_to: NodeId
    max_loops: Annotated[int, Field(ge=1, le=MAX_LOOPS)] = 3
    judge: Annotated[str, Field(max_length=MAX_PROMPT_CHARS)] | None = None


Node: TypeAlias = Annotated[AgentNode | FnNode | GateNode, Field(discriminator="kind")]
"""Any workflow node; the `kind` key ("agent", "fn" or "gate") says which."""


class Edge(_Frozen):
    """A forward edge: `target` runs after `source`. Back-edges exist only as `reloop_to`."""

    source: NodeId
    target: NodeId

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}"


class Workflow(_Frozen):
    """A workflow graph (the genome): nodes, forward edges, and node ids mutations may not touch.

    Immutable. A parsed `Workflow` is well-formed but not necessarily valid: run
    `validate_workflow` or `check_workflow` (the loaders do, unless told not to).
    `name` and `description` are labels; they do not take part in `workflow_hash`.
    """

    schema_version: int = SCHEMA_VERSION
    name: Annotated[str, AfterValidator(_workflow_name)]
    description: str = ""
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...] = ()
    frozen: tuple[str, ...] = ()

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise ValueError(
                f"this version of loopwright reads workflow schema_version {SCHEMA_VERSION}, "
                f"not {value}"
            )
        return value

    @property
    def node_ids(self) -> tuple[str, ...]:
        """The node ids in declaration order."""
        return tuple(n.id for n in self.nodes)

    def node(self, node_id: str) -> AgentNode | FnNode | GateNode:
        """The node with this id (the first, if ids repeat); ConfigError listing the ids if none."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise ConfigError(
            f"workflow {self.name!r} has no node {node_id!r}",
            fix=f"use one of: {', '.join(self.node_ids) or '(no nodes)'}",
        )
