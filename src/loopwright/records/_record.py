"""The CycleRecord: what one run of a workflow on a task did, as one versioned model.

Nested models (AgentStep, NodeTrace, ...) only ever appear on disk inside a record.json, so the
record's `schema_version` versions all of them. `write_record` / `load_record` own record.json.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError
from loopwright.records._events import NodeStatus

FORFEIT_PREFIXES = ("tamper:", "suspect:")
"""How an invalid grade's reason starts when the agent forfeited the run: `tamper:` (its code
forged or cut short the test run, or it broke the workspace's git) or `suspect:` (the audit of
its change found code that interferes with the test machinery). Such a grade counts as a zero
in every mean, and its workflow is never promoted on it (docs/grading.md)."""


def forfeited(reason: str | None) -> bool:
    """Whether an invalid grade with this reason is a forfeit (FORFEIT_PREFIXES): the one
    predicate every mean, table and promotion uses."""
    return (reason or "").startswith(FORFEIT_PREFIXES)


__all__ = [
    "FORFEIT_PREFIXES",
    "RECORD_FILE",
    "RECORD_SCHEMA_VERSION",
    "AgentStep",
    "CycleRecord",
    "ExperimentRecord",
    "FailureCategory",
    "GateRecord",
    "GradeSummary",
    "NodeTrace",
    "RunStatus",
    "StepStatus",
    "TestOutcome",
    "TestOutcomeRecord",
    "forfeited",
    "load_record",
    "parse_record",
    "record_from_json",
    "write_record",
]

RECORD_FILE = "record.json"
RECORD_SCHEMA_VERSION: Literal[3] = 3
"""2 dropped the InnerLoop's verdict counts and stall signals (kept, reverted, errored,
consecutive_reverts, plateau_detected): a run on its own never filled them. They are the
InnerLoop's `CycleVerdict` now. 3 added `GradeSummary.feedback` (an evaluator function's
feedback, for reflection). Version-1 and version-2 record.json files still load
(`parse_record`), with no feedback."""
READABLE_RECORD_VERSIONS = (1, 2, 3)
_DROPPED_IN_2 = ("kept", "reverted", "errored", "consecutive_reverts", "plateau_detected")

RunStatus = Literal["completed", "error", "timeout", "interrupted"]
"""RunEnd's status; `interrupted` also when events.jsonl has no run_end (the run was cut off)."""

StepStatus = NodeStatus | Literal["unfinished"]
"""NodeEnd's status; `unfinished` when a node_start has no node_end (the run stopped in it)."""

TestOutcome = Literal["passed", "xfailed", "skipped", "failed", "error", "missing"]
"""The grader's per-test outcomes (docs/grading.md); xfailed counts as passed."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FailureCategory(StrEnum):
    """Why a run did not resolve its task: exactly one per run.

    Members are listed in priority order: the analyzer assigns the first whose rule holds
    (see `loopwright.records.categorize_failure` and docs/records.md for each rule and why).
    """

    NONE = "none"
    INVALID_GRADE = "invalid_grade"
    AGENT_ERROR = "agent_error"
    INTERRUPTED = "interrupted"
    DID_NOT_READ_TASK = "did_not_read_task"
    RUN_TIMEOUT = "run_timeout"
    MAX_TURNS = "max_turns"
    NO_CHANGE = "no_change"
    SYNTAX_ERROR = "syntax_error"
    IMPORT_ERROR = "import_error"
    REGRESSION = "regression"
    TESTS_FAILING = "tests_failing"


class AgentStep(_Frozen):
    """One visit of one agent node (a RELOOP back to it is a new step with `attempt` + 1).

    Tokens and counts sum the visit's model_call and tool_call events. `cost_usd` is None when
    any of its model calls had no price (a model missing from the price table); 0.0 when it made
    no call. `duration_s` comes from node_end; for an unfinished visit it is the time from its
    node_start to the last event of the run.
    """

    node_id: str
    role: str
    attempt: int = Field(ge=1)
    started_t: float = Field(ge=0)
    duration_s: float = Field(ge=0)
    status: StepStatus
    succeeded: bool = Field(description="status == 'ok'")
    error: str | None
    turns: int = Field(ge=0, description="model calls made")
    model_errors: int = Field(ge=0, description="model calls that returned an error")
    tool_calls: int = Field(ge=0)
    tool_errors: int = Field(ge=0, description="tool calls that failed (the model saw an error)")
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_tokens: int = Field(ge=0)
    cost_usd: float | None
    notes_chars: int = Field(ge=0, description="characters of notes this visit wrote")
    read_instruction: bool = Field(description="a successful tool call touched instruction.md")
    produced: list[str] = Field(description="files changed by this visit, as node_end says")
    summary: str


class GateRecord(_Frozen):
    """One gate decision: proceed, reloop (to `target`) or exhausted (max_loops reached)."""

    t: float = Field(ge=0)
    decision: Literal["proceed", "reloop", "exhausted"]
    target: str | None
    loop_count: int = Field(
        ge=0, description="RELOOPs taken by this gate so far, this one included"
    )
    max_loops: int = Field(ge=1)
    passed: bool
    reason: str


class NodeTrace(_Frozen):
    """Every visit of one node of the graph, whatever its kind.

    `fired` counts node_start events (for a gate that logged decisions without a node_start,
    the number of decisions). `attempts` and `statuses` are per visit, in order. `produced` is
    the sorted union of the visits' files. For gates, `decisions` lists each decision and
    `loop_count` is the last decision's loop count (0 for other nodes).
    """

    node_id: str
    kind: Literal["agent", "fn", "gate"]
    role: str
    fired: int = Field(ge=0)
    attempts: list[int]
    statuses: list[StepStatus]
    produced: list[str]
    duration_s: float = Field(ge=0, description="sum of the visits' durations")
    decisions: list[GateRecord] = Field(default_factory=list)
    loop_count: int = Field(ge=0, default=0)


class TestOutcomeRecord(_Frozen):
    """One listed test of the grade: its outcome and whether it counts as passed."""

    __test__ = False  # not a pytest test class

    id: str
    outcome: TestOutcome
    fail_to_pass: bool
    passed: bool
    message: str = ""


class GradeSummary(_Frozen):
    """The parts of grade.json (a GradeResult) that a record keeps. See docs/grading.md.

    `score` is the fraction of fail_to_pass tests passing; an `invalid` grade is not a
    measurement (score 0.0, `invalid_reason` says why).
    """

    score: float = Field(ge=0.0, le=1.0)
    resolved: bool
    invalid: bool
    invalid_reason: str | None
    f2p_passed: int = Field(ge=0)
    f2p_total: int = Field(ge=0)
    p2p_passed: int = Field(ge=0)
    p2p_total: int = Field(ge=0)
    tests: list[TestOutcomeRecord]
    collection_errors: list[str]
    restored: list[str] = Field(description="what grading had to undo (tamper evidence)")
    timed_out: bool
    feedback: str = Field(
        default="",
        description="an evaluator function's feedback on the work (runner 'function'); "
        "empty for test runners and in records older than schema 3",
    )


class ExperimentRecord(_Frozen):
    """What was tried and how it came out. For one run of a workflow there is exactly one.

    `verdict` is `errored` when the run broke (agent_error or interrupted) and `pending`
    otherwise: keeping or reverting is not the run's decision. An `InnerLoop` running cycles
    on one task sets `kept`/`reverted` (`judge_cycle`); the outer loop's evaluations stay
    `pending` (its selection is its keep/revert).
    """

    id: str = Field(description="the run id")
    description: str
    score_before: float = Field(ge=0.0, le=1.0)
    score_after: float = Field(ge=0.0, le=1.0)
    verdict: Literal["pending", "kept", "reverted", "errored"]
    failure_category: FailureCategory


class CycleRecord(_Frozen):
    """What one run of one workflow on one task did: the exhaust the outer loop learns from.

    Built by `CycleAnalyzer` from a run directory; deterministic given its files. Scores:
    `score_start` is 0.0 (the starting commit does not solve the task), `score_end` the grade's
    score (0.0 without a grade), `score_delta` their difference. Totals sum every model call.
    `total_cost_usd` is None when any call's cost is unknown; `cost_by_agent` (keyed by role,
    or node id for a node without a role) omits roles with an unpriced call. The verdict
    `experiments` holds the run's one experiment: `errored` when the run broke, else
    `pending` (an `InnerLoop` judges it kept or reverted; its `CycleVerdict` carries the stall
    signals). Schema 2 has no verdict counts; 3 adds the grade's `feedback`: see
    `RECORD_SCHEMA_VERSION`.
    `eval_artifacts` are the run directory's files, relative, sorted, record.json excluded.
    """

    schema_version: Literal[3] = RECORD_SCHEMA_VERSION
    run_id: str
    task_id: str
    task_digest: str
    workflow_name: str
    workflow_hash: str
    model: str
    simulated: bool
    seed: int
    repetition: int = Field(ge=0)
    started_at: str
    run_status: RunStatus
    run_error: str | None
    score_start: float = Field(ge=0.0, le=1.0)
    score_end: float = Field(ge=0.0, le=1.0)
    score_delta: float
    steps: list[AgentStep]
    node_trace: dict[str, NodeTrace]
    gate_loops: dict[str, int]
    grade: GradeSummary | None
    failure_category: FailureCategory
    read_instruction: bool
    diff_files: list[str] = Field(description="files named in diff.patch, sorted")
    errors: list[str]
    eval_artifacts: list[str]
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_tokens: int = Field(ge=0)
    total_cost_usd: float | None
    cost_by_agent: dict[str, float]
    duration_s: float = Field(ge=0)
    experiments: list[ExperimentRecord]
    frozen_nodes: list[str]
    mutable_node_ids: list[str]

    @property
    def valid(self) -> bool:
        """The run was graded and the grade is valid (an invalid grade is not a zero)."""
        return self.grade is not None and not self.grade.invalid

    @property
    def tampered(self) -> bool:
        """The grade is invalid because the agent forfeited the run (`forfeited`: its reason
        starts with `tamper:` or `suspect:`): not a measurement of the code, but the agent's
        doing."""
        grade = self.grade
        return grade is not None and grade.invalid and forfeited(grade.invalid_reason)

    @property
    def scored(self) -> bool:
        """The run's score belongs in means and fitness: a valid grade, or a tampered one,
        which counts as the zero it is (else forging would take a failing run out of the mean)."""
        return self.valid or self.tampered

    @property
    def resolved(self) -> bool:
        """The grade says the task is resolved (False without a grade)."""
        return self.grade is not None and self.grade.resolved


def write_record(record: CycleRecord, run_dir: Path) -> Path:
    """Write `record` to `<run_dir>/record.json` (replacing it atomically, and replacing a
    symlink there rather than writing through it) and return the path."""
    path = run_dir / RECORD_FILE
    atomic_write(path, record.model_dump_json(indent=2) + "\n")  # never through a symlink
    return path


def parse_record(raw: dict[str, Any]) -> CycleRecord:
    """A CycleRecord from its JSON object, of schema 1 (the fields dropped in 2 left out), 2
    (no feedback: an empty one) or 3. Raises pydantic's ValidationError when it does not
    validate."""
    if raw.get("schema_version") == 1:
        raw = {k: v for k, v in raw.items() if k not in _DROPPED_IN_2}
    if raw.get("schema_version") in (1, 2):
        raw = {**raw, "schema_version": RECORD_SCHEMA_VERSION}
    return CycleRecord.model_validate(raw)


def record_from_json(text: str | bytes) -> CycleRecord:
    """`parse_record` of a JSON text (a cache entry, a worker's message)."""
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise ValueError(f"a CycleRecord is a JSON object, got {type(raw).__name__}")
    return parse_record(raw)


def load_record(path: Path) -> CycleRecord:
    """Read a record.json (or `<path>/record.json` when `path` is a directory).

    Raises ConfigError naming the file when it is missing, is not JSON, carries another
    schema_version than this loopwright reads, or does not validate.
    """
    if path.is_dir():
        path = path / RECORD_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist", fix="analyze the run first") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not JSON", got=str(exc)) from None
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version not in READABLE_RECORD_VERSIONS:
        raise ConfigError(
            f"{path} has CycleRecord schema_version {version!r}; "
            f"this loopwright reads versions {READABLE_RECORD_VERSIONS}",
            fix="re-analyze the run directory with CycleAnalyzer, or use the loopwright "
            "version that wrote it",
        )
    try:
        return parse_record(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a valid CycleRecord", got=str(exc)[:500]) from None
