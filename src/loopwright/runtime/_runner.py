"""The Runner: executes a workflow graph on one task workspace and writes the exhaust.

Nodes run one at a time in topological order (ties in declaration order). Independent
branches could run concurrently later; they share the workspace, so that needs care about
which node produced which file, and is left out for now.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal

import networkx as nx

from loopwright.models import CallLabels, ChatModel, ModelRouter, Usage, label_scope
from loopwright.records import ErrorEvent, EventWriter, GateDecision, NodeEnd, NodeStart
from loopwright.runtime._catalog import Registries, default_registries, runtime_catalog
from loopwright.runtime._context import (
    INSTRUCTION_VIEW,
    CostFn,
    NodeStatus,
    NotesBook,
    StepResult,
    ToolContext,
    workspace_view,
)
from loopwright.runtime._gates import decide, judge
from loopwright.runtime._loops import LoopContext, UsageMeter, run_agent
from loopwright.runtime._loops_plan import EngineSettings
from loopwright.runtime._prompts import prompt_values
from loopwright.runtime._snapshot import produced_files, take_snapshot
from loopwright.sandbox import Sandbox
from loopwright.tasks import Task
from loopwright.workflow import (
    AgentNode,
    FnNode,
    GateNode,
    Workflow,
    check_workflow,
    fill_prompt,
    to_networkx,
    topological_order,
)

__all__ = ["RunOutcome", "RunStatus", "Runner"]

RunStatus = Literal["completed", "timeout", "error"]
_SUMMARY_CHARS = 2_000
_REASON_CHARS = 1_000


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run of a workflow went (the events hold the details).

    `status`: "completed" when every node was visited in time (whatever the nodes' own
    outcomes), "timeout" when the run's budget ran out (nodes were cut short or skipped),
    "error" when the runner itself failed (an ErrorEvent with where="runner" says why).
    `attempts`: visits per node that ran; `loop_counts`: RELOOPs taken per gate;
    `node_status`: the last status of each node; `notes`: the run's notes; `usage`: tokens
    summed over every model call.
    """

    status: RunStatus
    attempts: Mapping[str, int]
    loop_counts: Mapping[str, int]
    node_status: Mapping[str, NodeStatus]
    notes: str
    usage: Usage
    duration_s: float
    error: str | None = None


@dataclass(frozen=True, slots=True)
class _NodeResult:
    status: NodeStatus
    summary: str = ""
    error: str | None = None


@dataclass(slots=True)
class _Run:
    """The mutable state of one run."""

    workflow: Workflow
    task: Task
    workspace: Path
    instruction_file: Path
    writer: EventWriter
    deadline: float
    budget_s: float
    base_commit: str | None
    directives: str = ""
    workspace_shown: str = "."
    notes: NotesBook = field(default_factory=NotesBook)
    meter: UsageMeter = field(default_factory=UsageMeter)
    attempts: Counter[str] = field(default_factory=Counter)
    loops: Counter[str] = field(default_factory=Counter)
    feedback: dict[str, str] = field(default_factory=dict)
    node_status: dict[str, NodeStatus] = field(default_factory=dict)
    timed_out: bool = False

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def tool_context(
        self, node_id: str, attempt: int, deadline: float, sandbox: Sandbox
    ) -> ToolContext:
        return ToolContext(
            workspace=self.workspace,
            instruction_file=self.instruction_file,
            sandbox=sandbox,
            task=self.task,
            notes=self.notes,
            events=self.writer,
            deadline=deadline,
            node_id=node_id,
            attempt=attempt,
            base_commit=self.base_commit,
        )

    def values(self, node_id: str) -> dict[str, str]:
        return prompt_values(
            self.task,
            self.workspace_shown,
            INSTRUCTION_VIEW,
            notes=self.notes.text(),
            feedback=self.feedback.get(node_id, ""),
            directives=self.directives,
        )


class Runner:
    """Runs workflows with one model and one sandbox. Stateless between runs; one run at a time
    per instance when the model keeps state.

    `cost_fn(model_name, usage)` prices each model call (None: not in the table) and
    `price_table` names that table in the events. `registries` (default: the decorator-filled
    ones) supply tools, loops, functions and checks. Every agent node uses `model`, whatever
    its `model` field names, unless `model` is a ModelRouter: then a node uses
    `model.select(node.model)` (its tier, role or model name) and an LLM-judge gate
    `model.select("meta")`. Every gateway call a node makes is labelled with the node's id and
    role in the cost ledger (`label_scope`).
    `engine` chooses the loop of agent nodes whose `loop` is "react" (see EngineSettings;
    default: every node runs its own `loop`); ConfigError if it names an unknown loop.
    """

    def __init__(
        self,
        model: ChatModel,
        sandbox: Sandbox,
        *,
        cost_fn: CostFn,
        price_table: str,
        registries: Registries | None = None,
        engine: EngineSettings | None = None,
    ) -> None:
        self.model = model
        self.sandbox = sandbox
        self.cost_fn = cost_fn
        self.price_table = price_table
        self.registries = registries if registries is not None else default_registries()
        self.engine = engine if engine is not None else EngineSettings()
        self.engine.check(runtime_catalog(self.registries))

    def run(
        self,
        workflow: Workflow,
        task: Task,
        workspace: Path,
        instruction_file: Path,
        writer: EventWriter,
        *,
        run_timeout_s: float | None = None,
        directives: str = "",
        labels: CallLabels | None = None,
    ) -> RunOutcome:
        """Execute `workflow` on `workspace` (modified in place), writing node, model, tool,
        notes, gate and error events to `writer` (not run_start/run_end: the caller's).

        `directives` (outer-loop steering, one rule per line) are added to every prompt's
        `{rules}`. `labels` (e.g. run and candidate) label every gateway call of the run in the
        cost ledger, under the labels of any enclosing `label_scope`.

        The run's budget is `run_timeout_s` (default: the task's agent timeout); nodes reached
        after it are skipped. A node's failure is recorded, never raised. Raises ConfigError,
        before running anything, when the workflow is invalid against `runtime_catalog()`.
        """
        check_workflow(workflow, runtime_catalog(self.registries))
        started = time.monotonic()
        budget = run_timeout_s if run_timeout_s is not None else task.spec.timeouts.agent
        workspace = workspace.resolve()
        state = _Run(
            workflow, task, workspace, instruction_file.resolve(), writer,
            started + budget, budget, _base_commit(workspace), directives,
            workspace_view(self.sandbox, workspace),
        )  # fmt: skip
        status: RunStatus = "completed"
        error = None
        try:
            with label_scope(**(labels or CallLabels()).model_dump(exclude_none=True)):
                self._execute(state)
        except Exception as exc:  # noqa: BLE001  the run boundary: recorded, returned as "error"
            status, error = "error", f"{type(exc).__name__}: {exc}"
            writer.write(ErrorEvent(t=writer.now(), where="runner", message=error))
        if status == "completed" and state.timed_out:
            status = "timeout"
        return RunOutcome(
            status=status,
            attempts=dict(state.attempts),
            loop_counts=dict(state.loops),
            node_status=dict(state.node_status),
            notes=state.notes.text(),
            usage=state.meter.usage,
            duration_s=time.monotonic() - started,
            error=error,
        )

    def _execute(self, state: _Run) -> None:
        order = topological_order(state.workflow)
        queue = deque(order)
        while queue:
            node = state.workflow.node(queue.popleft())
            if state.remaining() <= 0:
                state.timed_out = True
                self._skip(state, node)
            elif isinstance(node, GateNode):
                queue.extendleft(reversed(self._gate(state, node, order)))
            elif isinstance(node, AgentNode):
                self._visit(state, node, partial(self._agent, state, node))
            else:
                self._visit(state, node, partial(self._fn, node))

    def _visit(
        self,
        state: _Run,
        node: AgentNode | FnNode | GateNode,
        body: Callable[[ToolContext], _NodeResult],
    ) -> _NodeResult:
        """One node visit: NodeStart, the body (any exception becomes status "error"), the
        files it produced, NodeEnd."""
        state.attempts[node.id] += 1
        attempt, writer = state.attempts[node.id], state.writer
        role = node.role if isinstance(node, AgentNode) else ""
        writer.write(
            NodeStart(t=writer.now(), node_id=node.id, kind=node.kind, role=role, attempt=attempt)
        )
        started, before = time.monotonic(), take_snapshot(state.workspace)
        timeout = node.timeout_s if isinstance(node, AgentNode) else state.budget_s
        deadline = min(started + timeout, state.deadline)
        try:
            with label_scope(node=node.id, role=_label_role(node)):
                result = body(state.tool_context(node.id, attempt, deadline, self.sandbox))
        except Exception as exc:  # noqa: BLE001  the node boundary: recorded, the run goes on
            message = f"{type(exc).__name__}: {exc}"
            writer.write(ErrorEvent(t=writer.now(), node_id=node.id, where="node", message=message))
            result = _NodeResult("error", error=message)
        if result.status == "timeout" and state.remaining() <= 0:
            state.timed_out = True
        state.node_status[node.id] = result.status
        writer.write(
            NodeEnd(
                t=writer.now(),
                node_id=node.id,
                attempt=attempt,
                status=result.status,
                duration_s=time.monotonic() - started,
                error=result.error,
                produced=produced_files(before, take_snapshot(state.workspace)),
                summary=result.summary[:_SUMMARY_CHARS],
            )
        )
        return result

    def _skip(self, state: _Run, node: AgentNode | FnNode | GateNode) -> None:
        writer, attempt = state.writer, state.attempts[node.id] + 1
        error = f"skipped: the run's time budget ({state.budget_s:g}s) was used up"
        writer.write(NodeStart(t=writer.now(), node_id=node.id, kind=node.kind, attempt=attempt))
        writer.write(
            NodeEnd(t=writer.now(), node_id=node.id, attempt=attempt, status="skipped",
                    duration_s=0.0, error=error)
        )  # fmt: skip
        state.node_status[node.id] = "skipped"

    def _loop_context(self, tc: ToolContext, state: _Run, model_key: str) -> LoopContext:
        return LoopContext(
            self._model(model_key), self.registries.tools, tc, self.cost_fn, self.price_table,
            state.meter,
        )  # fmt: skip

    def _model(self, key: str) -> ChatModel:
        """The model for an agent node's `model` field or a role (see the class docstring)."""
        return self.model.select(key) if isinstance(self.model, ModelRouter) else self.model

    def _agent(self, state: _Run, node: AgentNode, tc: ToolContext) -> _NodeResult:
        prompt = fill_prompt(node.prompt, state.values(node.id))
        loop = self.engine.loop_for(node, state.task)
        if loop != node.loop:
            node = node.model_copy(update={"loop": loop})
        context = self._loop_context(tc, state, node.model)
        result = run_agent(node, prompt, context, self.registries.loops)
        return _NodeResult(result.status, result.summary, result.error)

    def _fn(self, node: FnNode, tc: ToolContext) -> _NodeResult:
        step = self.registries.functions.get(node.fn)(tc, node.args)
        return _NodeResult("ok" if step.passed else "failed", step.detail)

    def _gate(self, state: _Run, gate: GateNode, order: list[str]) -> list[str]:
        """Visit the gate; return the node ids to run again (empty unless it RELOOPs)."""
        rerun: list[str] = []

        def body(tc: ToolContext) -> _NodeResult:
            nonlocal rerun
            step, failure = self._evaluate(state, gate, tc)
            rerun = self._decide(state, gate, step, order)
            if failure is not None:
                return _NodeResult("error", step.detail, failure)
            return _NodeResult("ok" if step.passed else "failed", step.detail)

        self._visit(state, gate, body)
        return rerun

    def _evaluate(
        self, state: _Run, gate: GateNode, tc: ToolContext
    ) -> tuple[StepResult, str | None]:
        """The gate's check or judge. A check that raises counts as failed: (result, error)."""
        try:
            if gate.check is not None:
                return self.registries.checks.get(gate.check)(tc), None
            prompt = fill_prompt(gate.judge or "", state.values(gate.id))
            return judge(prompt, self._loop_context(tc, state, "meta")), None
        except Exception as exc:  # noqa: BLE001  a crashed check fails its gate; recorded
            message = f"{type(exc).__name__}: {exc}"
            where = "model_call" if gate.judge is not None else "node"
            state.writer.write(
                ErrorEvent(t=state.writer.now(), node_id=gate.id, where=where, message=message)
            )
            return StepResult(False, f"The gate's check could not run: {message}"), message

    def _decide(self, state: _Run, gate: GateNode, step: StepResult, order: list[str]) -> list[str]:
        verdict = decide(gate, step.passed, state.loops[gate.id])
        state.loops[gate.id] = verdict.loop_count
        writer = state.writer
        writer.write(
            GateDecision(
                t=writer.now(),
                node_id=gate.id,
                decision=verdict.decision,
                target=verdict.target,
                loop_count=verdict.loop_count,
                max_loops=gate.max_loops,
                passed=step.passed,
                reason=step.detail[-_REASON_CHARS:] if not step.passed else "",
            )
        )
        if verdict.decision != "reloop":
            return []
        span = _reloop_span(state.workflow, gate, order)
        text = (
            f"Gate {gate.id!r} sent the work back (RELOOP {verdict.loop_count} of "
            f"{gate.max_loops}):\n{step.detail}"
        )
        state.feedback.update(dict.fromkeys(span, text))
        return [*span, gate.id]


def _label_role(node: AgentNode | FnNode | GateNode) -> str | None:
    """The ledger's role label of a node's calls: an agent's role; "meta:judge" for an
    LLM-judge gate (it runs on the meta model); None for the rest (they call no model)."""
    if isinstance(node, AgentNode):
        return node.role or None
    if isinstance(node, GateNode) and node.judge is not None:
        return "meta:judge"
    return None


def _reloop_span(wf: Workflow, gate: GateNode, order: list[str]) -> list[str]:
    """The nodes a RELOOP re-runs before the gate: its target and every node on a forward path
    from the target to the gate, in topological order."""
    g = to_networkx(wf)
    between = nx.descendants(g, gate.reloop_to) & nx.ancestors(g, gate.id)
    return [n for n in order if n == gate.reloop_to or n in between]


def _base_commit(workspace: Path) -> str | None:
    """The workspace's commit when the run starts (the branch create_workspace makes)."""
    head = workspace / ".git" / "refs" / "heads" / "main"
    return head.read_text(encoding="ascii").strip() if head.is_file() else None
