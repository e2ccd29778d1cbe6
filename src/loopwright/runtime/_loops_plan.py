"""The planning agent loops, `plan_execute` and `hybrid`, and the engine settings that choose a
node's loop (`EngineSettings`).

Both loops open with one planning call (no tools offered; the plan is parsed from the reply's
text). `plan_execute` then runs each step as a short react sub-loop and may replan after a
step that ran into trouble; `hybrid` runs one react loop that carries the plan and offers a
`replan` pseudo-tool. Every model call of the node, planning and replanning included, is one
turn of the node's `max_turns`. Each counted replan is written as a `tool_call` event with
`tool="replan"` and `ok=True`, so `replans_used` can be derived from the events alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright.errors import ConfigError
from loopwright.models import Message, ModelResponse, ToolCall, ToolSpec
from loopwright.records import ToolCallEvent
from loopwright.runtime._loops import (
    AgentResult,
    LoopContext,
    _timed_out,
    agent_loop,
    call_model,
    offered_tools,
)
from loopwright.runtime._prompts import SYSTEM_PREAMBLE
from loopwright.runtime._tools import FINISH, ToolOutcome, execute_tool_call
from loopwright.tasks import Task
from loopwright.workflow import AgentNode, Catalog

__all__ = [
    "COMPLEXITY_BY_LEVEL",
    "MAX_PLAN_STEPS",
    "PLAN_PREAMBLE",
    "REPLAN",
    "REPLAN_CAP",
    "Complexity",
    "EngineSettings",
    "hybrid",
    "parse_plan",
    "plan_execute",
]

REPLAN = "replan"
"""The pseudo-tool `hybrid` offers, and the `tool` of the event recording every replan."""

REPLAN_CAP = 2
"""Replans a node visit may make; later requests are refused (hybrid) or not asked (plan_execute)."""

MAX_PLAN_STEPS = 12
"""Steps kept from a plan; later ones are dropped."""

_ARGS_CHARS = 2_000
_TROUBLE_CHARS = 1_500
_DEFAULT_STEP = "Carry out the task described above."

PLAN_PREAMBLE = (
    "You are an autonomous software engineering agent planning one step of a coding task. "
    "You cannot use tools yet. Reply with a short numbered plan, one action per line "
    "('1. ...', '2. ...'), at most {max_steps} steps, and nothing else."
)

_STEP_REQUEST = (
    "Plan step {k} of {n}: {step}\n\n{done}"
    "Do this plan step now with the tools. When it is done, reply with a one-line summary of "
    "what you did and no tool calls. Call finish only when the whole task is done."
)

_REPLAN_REQUEST = (
    "Plan step {k} ({step}) ran into trouble:\n{trouble}\n\n{done}"
    "If the rest of the plan should change, reply with the revised numbered plan for the "
    "remaining work. Otherwise reply KEEP."
)

_HYBRID_NOTE = (
    "Your plan:\n{plan}\n\nWork through it with the tools. If it proves wrong, call {replan} "
    "with the revised numbered plan (at most {cap} times). Call finish when the task is done."
)

_REPLAN_SPEC = ToolSpec(
    REPLAN,
    "Replace your plan with a revised one when the current plan proves wrong.",
    {
        "type": "object",
        "properties": {
            "plan": {"type": "string", "description": "the revised plan, one numbered step a line"}
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
)

_NUMBERED = re.compile(r"^\s*(?:step\s*)?\d+\s*[.):]\s*(\S.*)$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*[-*]\s+(\S.*)$")


def parse_plan(text: str) -> list[str]:
    """The steps of a plan written as text: its numbered lines ("1. ...", "2) ...", "Step 3:
    ..."); failing that its bullet lines ("- ...", "* ..."); failing that the whole text as one
    step; [] for blank text. At most MAX_PLAN_STEPS. Deterministic."""
    lines = text.splitlines()
    for pattern in (_NUMBERED, _BULLET):
        steps = [m.group(1).strip() for line in lines if (m := pattern.match(line))]
        if steps:
            return steps[:MAX_PLAN_STEPS]
    return [text.strip()] if text.strip() else []


def _numbered(steps: Sequence[str], start: int = 1) -> str:
    return "\n".join(f"{i}. {step}" for i, step in enumerate(steps, start))


class _Halt(Exception):
    """Raised inside a loop to stop the node with `result` (max_turns or timeout)."""

    def __init__(self, result: AgentResult) -> None:
        super().__init__(result.status)
        self.result = result


@dataclass(slots=True)
class _Session:
    """One node visit of a planning loop: the shared turn count and the replans used."""

    node: AgentNode
    ctx: LoopContext
    turns: int = 0
    replans: int = 0

    def chat(self, messages: Sequence[Message], specs: Sequence[ToolSpec]) -> ModelResponse:
        """One turn. Raises _Halt when max_turns is used up or the deadline has passed (before
        or after the call)."""
        if self.turns >= self.node.max_turns:
            error = f"stopped at max_turns={self.node.max_turns} without finish"
            raise _Halt(self.result("max_turns", error=error))
        if self.ctx.tool_ctx.remaining() <= 0:
            raise _Halt(self._timeout())
        self.turns += 1
        response = call_model(self.ctx, messages, specs, self.turns)
        if self.ctx.tool_ctx.remaining() <= 0:
            raise _Halt(self._timeout())
        return response

    def run_call(self, call: ToolCall) -> ToolOutcome:
        """Execute one tool call under the node's allowlist and workspace; record its event."""
        tc = self.ctx.tool_ctx
        outcome = execute_tool_call(call, self.node.tools, self.ctx.tools, tc)
        self._event(
            call.name, call.arguments_json, outcome.error, outcome.output, outcome.duration_s
        )
        return outcome

    def record_replan(self, steps: Sequence[str] | None, error: str | None, latency: float) -> str:
        """Write the replan event (counted when `error` is None) and return what the model sees."""
        plan = _numbered(steps or [])
        if error is None:
            self.replans += 1
            output = f"plan revised ({self.replans} of {REPLAN_CAP} replans used):\n{plan}"
        else:
            output = f"error: {error}"
        self._event(REPLAN, json.dumps({"plan": plan}), error, output, latency)
        return output

    def result(
        self, status: Literal["ok", "max_turns"], summary: str = "", error: str | None = None
    ) -> AgentResult:
        return AgentResult(status, summary, error, self.turns, self.replans)

    def _timeout(self) -> AgentResult:
        return replace(_timed_out(self.node, self.turns), replans_used=self.replans)

    def _event(
        self, tool: str, arguments: str, error: str | None, output: str, duration: float
    ) -> None:
        tc = self.ctx.tool_ctx
        tc.events.write(
            ToolCallEvent(
                t=tc.events.now(),
                node_id=self.node.id,
                attempt=tc.attempt,
                turn=max(self.turns, 1),
                tool=tool,
                arguments=arguments[:_ARGS_CHARS],
                ok=error is None,
                error=error,
                output_chars=len(output),
                duration_s=max(duration, 0.0),
            )
        )


def _make_plan(s: _Session, prompt: str) -> list[str]:
    """The planning call: the node's prompt, no tools; tool calls in the reply are not run."""
    system = PLAN_PREAMBLE.format(max_steps=MAX_PLAN_STEPS)
    response = s.chat([Message("system", system), Message("user", prompt)], [])
    return parse_plan(response.text) or [_DEFAULT_STEP]


def _run_loop(
    s: _Session, messages: list[Message], specs: Sequence[ToolSpec], hybrid: bool
) -> tuple[bool, str, list[str]]:
    """React turns on `messages` until a reply without tool calls or finish. Returns
    (finished, summary, trouble): trouble lists the tool errors and a failing last run_tests."""
    errors: list[str] = []
    tests_failed: str | None = None
    while True:
        response = s.chat(messages, specs)
        if not response.tool_calls:
            return False, response.text, errors + ([tests_failed] if tests_failed else [])
        messages.append(Message("assistant", response.text, response.tool_calls))
        for call in response.tool_calls:
            if hybrid and call.name == REPLAN:
                output = _hybrid_replan(s, call, response.latency_s)
            else:
                outcome = s.run_call(call)
                if outcome.finished:
                    return True, outcome.output, []
                output = outcome.output
                if outcome.error is not None:
                    errors.append(f"{call.name} failed: {outcome.error[:_TROUBLE_CHARS]}")
                elif call.name == "run_tests":
                    failed = output.split("\n", 1)[0] != "exit code 0"
                    tests_failed = (
                        f"run_tests failed: {output[-_TROUBLE_CHARS:]}" if failed else None
                    )
            messages.append(Message("tool", output, tool_call_id=call.id, name=call.name))


@agent_loop("plan_execute")
def plan_execute(node: AgentNode, prompt: str, ctx: LoopContext) -> AgentResult:
    """A plan, then its steps. One planning call (no tools) gives a numbered plan; each step
    runs as a react sub-loop on [system preamble, the prompt, the plan, the step] with the
    node's tools, ending at a reply without tool calls. After a step with a tool error or a
    failing last run_tests, and while fewer than REPLAN_CAP replans were made, one replanning
    call may revise the remaining steps (a reply KEEP, or with no steps, keeps them).

    Stops on finish (ok, its summary), the plan exhausted (ok, the steps' summaries),
    `max_turns` model calls over the whole visit (max_turns) or the deadline (timeout)."""
    s = _Session(node, ctx)
    try:
        return _plan_execute(s, prompt)
    except _Halt as halt:
        return halt.result


def _plan_execute(s: _Session, prompt: str) -> AgentResult:
    plan = _make_plan(s, prompt)
    specs = offered_tools(s.node, s.ctx.tools)
    done: list[tuple[str, str]] = []  # (step, its summary)
    while plan:
        step = plan.pop(0)
        k, n = len(done) + 1, len(done) + 1 + len(plan)
        request = _STEP_REQUEST.format(k=k, n=n, step=step, done=_done_text(done))
        messages = _plan_messages(prompt, [*(d for d, _ in done), step, *plan], request)
        finished, summary, trouble = _run_loop(s, messages, specs, hybrid=False)
        if finished:
            return s.result("ok", summary)
        done.append((step, summary.strip() or "(no summary)"))
        if trouble and s.replans < REPLAN_CAP:
            plan = _replan(s, prompt, done, plan, trouble)
    return s.result("ok", "Plan completed.\n" + _done_lines(done))


def _done_lines(done: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"- {step}: {summary}" for step, summary in done)


def _done_text(done: Sequence[tuple[str, str]]) -> str:
    return f"Done so far:\n{_done_lines(done)}\n\n" if done else ""


def _plan_messages(prompt: str, steps: Sequence[str], request: str) -> list[Message]:
    return [
        Message("system", SYSTEM_PREAMBLE),
        Message("user", prompt),
        Message("assistant", _numbered(steps)),
        Message("user", request),
    ]


def _replan(
    s: _Session, prompt: str, done: list[tuple[str, str]], plan: list[str], trouble: list[str]
) -> list[str]:
    """Ask whether to revise the remaining `plan` after the last step done; the new steps (a
    counted replan), or `plan` when the reply is KEEP or holds no steps."""
    step = done[-1][0]
    request = _REPLAN_REQUEST.format(
        k=len(done), step=step, trouble="\n".join(trouble), done=_done_text(done)
    )
    response = s.chat(_plan_messages(prompt, [*(d for d, _ in done), *plan], request), [])
    words = response.text.split(maxsplit=1)
    keep = bool(words) and words[0].strip(".!:").upper() == "KEEP"
    revised = [] if keep else parse_plan(response.text)
    if not revised:
        return plan
    s.record_replan(revised, None, response.latency_s)
    return revised


@agent_loop("hybrid")
def hybrid(node: AgentNode, prompt: str, ctx: LoopContext) -> AgentResult:
    """React within a plan. One planning call (no tools) gives a numbered plan; then one react
    loop on [system preamble, the prompt followed by the plan] with the node's tools plus the
    `replan` pseudo-tool, which replaces the plan (counted) until REPLAN_CAP replans were
    made, then answers with an error (recorded, not counted).

    Stops as react does: finish, a reply without tool calls (ok), `max_turns` model calls over
    the whole visit, planning call included (max_turns), or the deadline (timeout)."""
    s = _Session(node, ctx)
    try:
        plan = _make_plan(s, prompt)
        note = _HYBRID_NOTE.format(plan=_numbered(plan), replan=REPLAN, cap=REPLAN_CAP)
        messages = [Message("system", SYSTEM_PREAMBLE), Message("user", f"{prompt}\n\n{note}")]
        specs = offered_tools(node, ctx.tools)
        specs = [
            *(t for t in specs if t.name != FINISH),
            _REPLAN_SPEC,
            *(t for t in specs if t.name == FINISH),
        ]
        _, summary, _ = _run_loop(s, messages, specs, hybrid=True)
        return s.result("ok", summary)
    except _Halt as halt:
        return halt.result


def _hybrid_replan(s: _Session, call: ToolCall, latency: float) -> str:
    try:
        raw = call.arguments().get("plan")
    except ValueError as exc:
        return s.record_replan(None, str(exc), 0.0)
    steps = parse_plan(raw) if isinstance(raw, str) else []
    if s.replans >= REPLAN_CAP:
        error = f"the replan cap ({REPLAN_CAP}) is used up; keep to the current plan"
        return s.record_replan(steps, error, 0.0)
    if not steps:
        return s.record_replan(None, "replan takes plan: a non-empty numbered plan (a string)", 0.0)
    return s.record_replan(steps, None, 0.0)


Complexity = Literal["simple", "medium", "complex"]

COMPLEXITY_BY_LEVEL: dict[int, Complexity] = {1: "simple", 2: "medium", 3: "complex"}
"""A task's complexity bucket, from its `level` (1 to 3)."""


class EngineSettings(BaseModel):
    """Which loop an agent node runs (settings `engine.default_loop_type` and
    `engine.loop_complexity_overrides`).

    A node whose `loop` is anything but "react" runs that loop. A node whose `loop` is "react"
    (the field's default, so explicit and default cannot be told apart) runs the override for
    its task's complexity if there is one, else `default_loop_type`. Deterministic.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    default_loop_type: str = "react"
    loop_complexity_overrides: dict[Complexity, str] = Field(default_factory=dict)

    def loop_for(self, node: AgentNode, task: Task) -> str:
        """The loop `node` runs on `task` under these settings."""
        if node.loop != "react":
            return node.loop
        bucket = COMPLEXITY_BY_LEVEL[task.level]
        return self.loop_complexity_overrides.get(bucket, self.default_loop_type)

    def check(self, catalog: Catalog) -> None:
        """Raise ConfigError naming every loop these settings use that `catalog` does not know."""
        used = {"default_loop_type": self.default_loop_type} | {
            f"loop_complexity_overrides.{k}": v for k, v in self.loop_complexity_overrides.items()
        }
        bad = [f"{key}={loop!r}" for key, loop in used.items() if not catalog.knows_loop(loop)]
        if bad:
            raise ConfigError(
                f"engine settings name unknown agent loops: {', '.join(bad)}",
                got=", ".join(bad),
                fix=f"use one of: {', '.join(sorted(catalog.loops))}, or external:NAME",
            )
