"""One cell of the matrix: `run_task` (the one inner loop) of a one-agent-node workflow on the
brief, graded by the brief's hidden checks (`BriefGrader`), and the figures the rubric
consumes, written as `result.json`.

The cell's workflow is one agent node (the brief's `max_turns`, file and shell tools scoped to
the workspace) whose `loop` is the cell's loop. Every cell recreates its workspace from the
brief's seed fixture (run_task does), gets a fresh cost tracker, and captures the wall clock
of its agent phase. The cell directory is a run directory like any other (events.jsonl,
diff.patch, grade.json, record.json: a CycleRecord) plus the cell's ledger.jsonl and result.json.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.harness._briefs import Brief, Complexity
from loopwright.harness._checks import BriefGrader, CheckOutcome, CheckReport, tamper_reason
from loopwright.harness._manifest import Cell
from loopwright.harness._models import ModelSource, TeeLedger
from loopwright.harness._relay import MeteringRelay
from loopwright.models import (
    CallLabels,
    ChatModel,
    CostLedger,
    GatewaySettings,
    LiteLLMGateway,
    PriceTable,
)
from loopwright.records import (
    EVENTS_FILE,
    CycleRecord,
    ErrorEvent,
    NodeEnd,
    ToolCallEvent,
    read_events,
)
from loopwright.runtime import REPLAN, Registries
from loopwright.sandbox import Sandbox
from loopwright.workflow import EXTERNAL_LOOP_PREFIX, AgentNode, Workflow

__all__ = [
    "AGENT_TOOLS",
    "CELL_RESULT_FILE",
    "CELL_SCHEMA_VERSION",
    "CellEnv",
    "CellKey",
    "CellResult",
    "CellStatus",
    "cell_workflow",
    "run_cell",
    "unavailable_result",
]

CELL_RESULT_FILE = "result.json"
CELL_SCHEMA_VERSION: Literal[2] = 2
"""2 adds the status `tamper`; version 1 results are read as they are."""
CELL_LEDGER_FILE = "ledger.jsonl"
AGENT_NODE = "agent"
AGENT_ROLE = "builder"
AGENT_TOOLS = (
    "read_file",
    "list_files",
    "search_code",
    "write_file",
    "edit_file",
    "run_tests",
    "run_command",
)

_PROMPT = """Your task is described in {instruction_file}. Read it, then change the code in the
workspace to do what it asks. Rules:
{rules}

When the work is done, call finish with a one-line summary."""

UNAVAILABLE_PREFIX = "unavailable:"
"""How a loop says it cannot run here (the external agents' missing-executable error)."""
_NO_RELAY = (
    "unavailable: external agents are recorded only through the metering relay, so that "
    "every call is in the ledger; record with --gateway-base-url"
)

CellStatus = Literal[
    "ok", "error", "timeout", "max_turns", "failed", "skipped", "unavailable", "tamper"
]
"""The agent node's final status; `unavailable` when the loop cannot run here; `tamper` when
the grade says the agent or its code forged or broke the evidence (every check failed)."""
# Where run_task records an error that ended the run before or instead of the agent node.
_RUN_ERRORS = ("workspace", "runner", "run")


class CellKey(BaseModel):
    """Which cell a result is for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    loop: str
    tier: str
    model: str
    brief: str
    complexity: Complexity
    repetition: int
    seed: int

    @staticmethod
    def of(cell: Cell) -> CellKey:
        return CellKey(
            loop=cell.loop,
            tier=cell.tier,
            model=cell.model,
            brief=cell.brief,
            complexity=cell.complexity,
            repetition=cell.repetition,
            seed=cell.seed,
        )


class CellResult(BaseModel):
    """What one cell measured (`result.json`; written last, so its presence marks the cell done).

    `status` is the agent node's final status, or `unavailable` (with `reason`) when the
    loop's runtime could not run here (no correctness and no figures), or `tamper` (with the
    grade's `tamper:` reason) when the checks' evidence was forged or the workspace's git
    repository broken: correctness 0, every check failed with that reason.
    Tokens, turns (successful model calls) and cost come from the cell's own ledger;
    `replans_used` from the replan events; `wall_clock_s` was measured around the run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1, 2] = CELL_SCHEMA_VERSION
    cell: CellKey
    status: CellStatus
    reason: str | None = None
    correctness: float | None = Field(default=None, ge=0.0, le=1.0)
    checks: list[CheckOutcome] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    turns: int = 0
    failed_calls: int = 0
    replans_used: int = 0
    wall_clock_s: float | None = None
    cost_usd: float | None = None
    simulated: bool = False
    finished_at: str = ""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def available(self) -> bool:
        return self.status != "unavailable"


@dataclass(frozen=True)
class CellEnv:
    """What every cell of a recording shares. `relay` meters external agents (None when the
    recording has no gateway URL); `run_ledger` receives every call of every cell;
    `unavailable(loop)` gives the reason a loop cannot run here, or None."""

    sandbox: Sandbox
    models: ModelSource
    registries: Registries
    prices: PriceTable
    clock: Callable[[], float]
    run_ledger: CostLedger | None
    relay: MeteringRelay | None
    unavailable: Callable[[str], str | None]


def cell_workflow(loop: str, brief: Brief) -> Workflow:
    """The one-node workflow every loop runs on a brief: same prompt, tools and max_turns."""
    node = AgentNode(
        id=AGENT_NODE,
        role=AGENT_ROLE,
        loop=loop,
        max_turns=brief.spec.max_turns,
        timeout_s=max(1, round(brief.spec.timeout_s)),
        tools=AGENT_TOOLS,
        prompt=_PROMPT,
    )
    return Workflow(name=f"ab-{brief.id}", nodes=(node,))


def unavailable_result(cell: Cell, reason: str) -> CellResult:
    """The row of a cell whose loop cannot run here."""
    return CellResult(
        cell=CellKey.of(cell), status="unavailable", reason=reason, finished_at=_now()
    )


def run_cell(cell: Cell, brief: Brief, env: CellEnv, cell_dir: Path) -> CellResult:
    """Run `cell` with `run_task` under `cell_dir` (created; must not hold a result yet) and
    return its result. Never raises for what the loop does: failures are data. A loop that is
    not registered, an external agent with no relay to meter it, or a loop that reports
    `unavailable: ...` (an external agent whose executable is missing) gives an `unavailable`
    row with the reason."""
    external = cell.loop.startswith(EXTERNAL_LOOP_PREFIX)
    reason = env.unavailable(cell.loop)
    if reason is None and external and env.relay is None:
        reason = _NO_RELAY
    if reason is not None:
        return unavailable_result(cell, reason)
    cell_dir.mkdir(parents=True, exist_ok=True)
    ledger = TeeLedger(cell_dir / CELL_LEDGER_FILE, env.run_ledger)
    labels = CallLabels(run=cell.id, candidate=cell.loop, node=AGENT_NODE, role=AGENT_ROLE)
    if external and env.relay is not None:
        model = _relayed_model(cell, env.relay, env.prices)
    else:
        model = env.models.model(cell, ledger, labels)
    phase = _AgentPhase(cell, env, ledger, labels)
    figures = _Figures(cell, ledger, model.simulated, brief.checks)
    try:
        record = run_task(_spec(cell, brief, env, model, cell_dir, phase))
        status, error = _agent_end(cell_dir / EVENTS_FILE)
        if status == "error" and (error or "").startswith(UNAVAILABLE_PREFIX):
            return unavailable_result(cell, error or UNAVAILABLE_PREFIX)
        return figures.result(status, error, phase.wall_s, record, cell_dir)
    except Exception as exc:  # noqa: BLE001  the boundary: a cell that broke is a row
        message = f"the cell broke: {type(exc).__name__}: {exc}"
        failed = CheckReport(tuple(_failed(name, message) for name in brief.checks))
        return figures.row("error", message, None, failed, 0)


def _spec(
    cell: Cell, brief: Brief, env: CellEnv, model: ChatModel, cell_dir: Path, phase: _AgentPhase
) -> TaskRunSpec:
    """The cell as one run of the inner loop: the cell's workflow on the brief's task, graded
    by the brief's hidden checks, the agents inside the cell's metering and clock."""
    return TaskRunSpec(
        workflow=cell_workflow(cell.loop, brief),
        task=brief.task(),
        model=model,
        sandbox=env.sandbox,
        prices=env.prices,
        run_dir=cell_dir,
        run_id=cell.id,
        seed=cell.seed,
        repetition=cell.repetition,
        grader=BriefGrader(env.sandbox),
        registries=env.registries,
        agent_scope=phase.scope,
    )


def _relayed_model(cell: Cell, relay: MeteringRelay, prices: PriceTable) -> ChatModel:
    """What an external loop is given as its model: the tier's binding at the relay's URL.
    The external agent makes its own calls there; the relay meters them (so this gateway gets
    no ledger, which would count the agent's self-reported usage a second time). The agent is
    given the relay's placeholder key, never a real one: the relay puts the real key in."""
    settings = GatewaySettings(api_base=relay.url, agent_key=relay.agent_key)
    return LiteLLMGateway(cell.model, settings, prices=prices, seed=cell.seed)


@dataclass
class _AgentPhase:
    """The context the cell's agents run in: external agents metered through the relay, and
    the wall clock (the recording's clock) measured around them."""

    cell: Cell
    env: CellEnv
    ledger: CostLedger
    labels: CallLabels
    wall_s: float | None = field(default=None, init=False)

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        relay = self.env.relay
        metering = (
            relay.metering(self.ledger, self.cell.model, self.labels)
            if relay is not None
            else contextlib.nullcontext()
        )
        with metering:
            started = self.env.clock()
            try:
                yield
            finally:
                self.wall_s = self.env.clock() - started


@dataclass(frozen=True)
class _Figures:
    """Turns what a cell's run left into its result row."""

    cell: Cell
    ledger: CostLedger
    simulated: bool
    checks: tuple[str, ...]

    def result(
        self,
        status: CellStatus,
        error: str | None,
        wall: float | None,
        record: CycleRecord,
        cell_dir: Path,
    ) -> CellResult:
        """The row of a finished run: the grade's checks (a tampered grade overrides the agent's
        status), tokens, turns and cost from the cell's ledger, replans from its events."""
        grade = record.grade
        if grade is None:  # the run ended before it could be graded
            why = error or "the workspace was never graded"
            report = CheckReport(tuple(_failed(name, why) for name in self.checks))
        else:
            report = CheckReport.of(grade)
            tamper = tamper_reason(grade)
            if tamper is not None:
                status, error = "tamper", tamper
        return self.row(status, error, wall, report, _replans(cell_dir / EVENTS_FILE))

    def row(
        self,
        status: CellStatus,
        error: str | None,
        wall: float | None,
        report: CheckReport,
        replans: int,
    ) -> CellResult:
        totals = self.ledger.totals()[None]
        return CellResult(
            cell=CellKey.of(self.cell),
            status=status,
            reason=error,
            correctness=report.correctness,
            checks=list(report.checks),
            input_tokens=totals.input_tokens,
            output_tokens=totals.output_tokens,
            cache_read_tokens=totals.cache_read_tokens,
            turns=totals.calls - totals.failed_calls,
            failed_calls=totals.failed_calls,
            replans_used=replans,
            wall_clock_s=wall,
            cost_usd=totals.cost_usd,
            simulated=self.simulated,
            finished_at=_now(),
        )


def _failed(name: str, error: str) -> CheckOutcome:
    return CheckOutcome(name=name, passed=False, error=error)


def _agent_end(events: Path) -> tuple[CellStatus, str | None]:
    """The run's error when it ended before or instead of the agent node (no workspace, a
    runner failure), else the agent node's last status and error, from the events."""
    exhaust = read_events(events)
    for event in exhaust:
        if isinstance(event, ErrorEvent) and event.where in _RUN_ERRORS:
            return "error", event.message
    ends = [e for e in exhaust if isinstance(e, NodeEnd) and e.node_id == AGENT_NODE]
    if not ends:
        return "error", "the agent node never ended"
    return ends[-1].status, ends[-1].error


def _replans(events: Path) -> int:
    """Counted replans: `replan` tool-call events with ok=True (docs/runtime.md)."""
    return sum(
        1 for e in read_events(events) if isinstance(e, ToolCallEvent) and e.tool == REPLAN and e.ok
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
