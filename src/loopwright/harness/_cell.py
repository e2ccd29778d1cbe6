"""One cell of the matrix: a fresh workspace, one agent node run by the cell's loop, the hidden
checks, and the figures the rubric consumes, written as `result.json`.

The cell's workflow is one agent node (the brief's `max_turns`, file and shell tools scoped to
the workspace) whose `loop` is the cell's loop. Every cell recreates its workspace from the
brief's seed fixture, gets a fresh cost tracker, and captures its wall clock as it runs.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright import __version__
from loopwright._fs import atomic_write
from loopwright.harness._briefs import Brief, Complexity
from loopwright.harness._checks import CheckOutcome, CheckReport, run_checks
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
    ErrorEvent,
    EventWriter,
    NodeEnd,
    RunEnd,
    RunStart,
    ToolCallEvent,
    read_events,
)
from loopwright.runtime import REPLAN, Registries, Runner
from loopwright.sandbox import DiffEvidence, Sandbox, Workspace, create_workspace, remove_workspace
from loopwright.scoring import TAMPER_PREFIX
from loopwright.workflow import EXTERNAL_LOOP_PREFIX, AgentNode, Workflow, workflow_hash

__all__ = [
    "AGENT_TOOLS",
    "CELL_RESULT_FILE",
    "CELL_SCHEMA_VERSION",
    "CellEnv",
    "CellKey",
    "CellResult",
    "cell_workflow",
    "run_cell",
    "unavailable_result",
]

CELL_RESULT_FILE = "result.json"
CELL_SCHEMA_VERSION: Literal[1] = 1
CELL_LEDGER_FILE = "ledger.jsonl"
INSTRUCTION_FILE = "instruction.md"
DIFF_FILE = "diff.patch"
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

CellStatus = Literal["ok", "error", "timeout", "max_turns", "failed", "skipped", "unavailable"]


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
    loop's runtime could not run here; an unavailable cell has no correctness and no figures.
    Tokens, turns (successful model calls) and cost come from the cell's own ledger;
    `replans_used` from the replan events; `wall_clock_s` was measured around the run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = CELL_SCHEMA_VERSION
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
    """Run `cell` in a fresh workspace under `cell_dir` (created; must not hold a result yet)
    and return its result. Never raises for what the loop does: failures are data. A loop
    that is not registered, an external agent with no relay to meter it, or a loop that
    reports `unavailable: ...` (an external agent whose executable is missing) gives an
    `unavailable` row with the reason."""
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
    run = _CellRun(cell, brief, env, model, ledger, labels, cell_dir)
    try:
        atomic_write(cell_dir / INSTRUCTION_FILE, brief.instruction_file.read_bytes())
        status, error, wall, report = run.in_fresh_workspace()
        if report is None:
            return unavailable_result(cell, error or UNAVAILABLE_PREFIX)
        return run.result(status, error, wall, report)
    except Exception as exc:  # noqa: BLE001  the boundary: a cell that broke is a row
        message = f"the cell broke: {type(exc).__name__}: {exc}"
        failed = CheckReport(tuple(_failed(name, message) for name in brief.checks))
        return run.result("error", message, None, failed, events=False)


def _relayed_model(cell: Cell, relay: MeteringRelay, prices: PriceTable) -> ChatModel:
    """What an external loop is given as its model: the tier's binding at the relay's URL.
    The external agent makes its own calls there; the relay meters them (so this gateway gets
    no ledger, which would count the agent's self-reported usage a second time)."""
    settings = GatewaySettings(api_base=relay.url)
    return LiteLLMGateway(cell.model, settings, prices=prices, seed=cell.seed)


@dataclass(frozen=True)
class _CellRun:
    cell: Cell
    brief: Brief
    env: CellEnv
    model: ChatModel
    ledger: CostLedger
    labels: CallLabels
    cell_dir: Path

    def in_fresh_workspace(self) -> tuple[CellStatus, str | None, float, CheckReport | None]:
        """Recreate the workspace from the brief's fixture, run the agent, keep its diff (or a
        note saying why there is none) and grade it: (status, error, wall clock, report); no
        report when the loop said it is unavailable. An agent that removed or corrupted the
        workspace's git repository gets status `error`, a `tamper:` reason and every check
        failed. The workspace is removed afterwards."""
        scratch = Path(tempfile.mkdtemp(prefix="lw-ab-"))
        try:
            workspace = create_workspace(self.brief.repo_dir, scratch)
            try:
                status, error, wall, evidence = self.agent(workspace)
                if status == "error" and (error or "").startswith(UNAVAILABLE_PREFIX):
                    return status, error, wall, None
                atomic_write(self.cell_dir / DIFF_FILE, evidence.text)
                report = run_checks(self.brief, workspace.path, self.env.sandbox)
                if evidence.tamper is None:
                    return status, error, wall, report
                # The agent broke the repository its diff is read from: no credit at all.
                reason = f"{TAMPER_PREFIX} {evidence.tamper}"
                failed = tuple(_failed(c.name, reason) for c in report.checks)
                return "error", reason, wall, CheckReport(failed)
            finally:
                remove_workspace(workspace)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def result(
        self,
        status: CellStatus,
        error: str | None,
        wall: float | None,
        report: CheckReport,
        *,
        events: bool = True,
    ) -> CellResult:
        """The cell's figures: the grade, and tokens, turns and cost from its own ledger;
        replans from its events unless `events` is False (a cell that broke)."""
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
            replans_used=_replans(self.cell_dir / EVENTS_FILE) if events else 0,
            wall_clock_s=wall,
            cost_usd=totals.cost_usd,
            simulated=self.model.simulated,
            finished_at=_now(),
        )

    def agent(self, workspace: Workspace) -> tuple[CellStatus, str | None, float, DiffEvidence]:
        """Run the cell's workflow on `workspace`, external agents metered through the relay;
        return the agent node's status and error, the wall clock of the run, and the
        workspace's diff (a diff that could not be taken is also an error event)."""
        cell, env = self.cell, self.env
        workflow, task = cell_workflow(cell.loop, self.brief), self.brief.task()
        runner = Runner(
            self.model,
            env.sandbox,
            cost_fn=env.prices.cost_usd,
            price_table=env.prices.version,
            registries=env.registries,
        )
        instruction = self.cell_dir / INSTRUCTION_FILE
        with EventWriter(self.cell_dir / EVENTS_FILE) as writer:
            writer.write(self._run_start(workflow, task.digest, writer))
            metering = (
                env.relay.metering(self.ledger, cell.model, self.labels)
                if env.relay is not None
                else contextlib.nullcontext()
            )
            with metering:
                started = env.clock()
                outcome = runner.run(workflow, task, workspace.path, instruction, writer)
                wall = env.clock() - started
            evidence = workspace.evidence()
            if evidence.error is not None:
                writer.write(ErrorEvent(t=writer.now(), where="diff", message=evidence.error))
            writer.write(
                RunEnd(t=writer.now(), status=outcome.status, duration_s=wall, error=outcome.error)
            )
        if outcome.status == "error":
            return "error", outcome.error, wall, evidence
        status, error = _agent_end(self.cell_dir / EVENTS_FILE)
        return status, error, wall, evidence

    def _run_start(self, workflow: Workflow, digest: str, writer: EventWriter) -> RunStart:
        cell = self.cell
        return RunStart(
            t=writer.now(),
            run_id=cell.id,
            task_id=cell.brief,
            task_digest=digest,
            workflow_name=workflow.name,
            workflow_hash=workflow_hash(workflow),
            model=cell.model,
            simulated=self.model.simulated,
            seed=cell.seed,
            repetition=cell.repetition,
            loopwright_version=__version__,
            started_at=_now(),
        )


def _failed(name: str, error: str) -> CheckOutcome:
    return CheckOutcome(name=name, passed=False, error=error)


def _agent_end(events: Path) -> tuple[CellStatus, str | None]:
    """The agent node's last status and error, from its node_end event."""
    ends = [e for e in read_events(events) if isinstance(e, NodeEnd) and e.node_id == AGENT_NODE]
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
