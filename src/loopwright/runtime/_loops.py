"""Agent loops: the `AgentLoop` protocol, the `@agent_loop` registry, and the `react` loop.

A loop drives one agent node: it calls the model, runs the tool calls it asks for, and stops
by the node's rules. Failures never escape `run_agent`: they become an AgentResult.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from loopwright.errors import ConfigError
from loopwright.models import ChatModel, Message, ModelError, ModelResponse, ToolSpec, Usage
from loopwright.records import ErrorEvent, ModelCall, ToolCallEvent
from loopwright.runtime._context import CostFn, NodeStatus, ToolContext
from loopwright.runtime._prompts import SYSTEM_PREAMBLE
from loopwright.runtime._registry import Registry
from loopwright.runtime._tools import FINISH, Tool, execute_tool_call
from loopwright.workflow import AgentNode

__all__ = [
    "LOOPS",
    "AgentLoop",
    "AgentResult",
    "LoopContext",
    "UsageMeter",
    "agent_loop",
    "call_model",
    "react",
    "run_agent",
]

_ARGS_CHARS = 2_000


@dataclass(slots=True)
class UsageMeter:
    """Token usage summed over every model call of a run (mutable; one per run)."""

    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True)
class LoopContext:
    """What a loop needs besides its node and prompt: the model, the tools, where tools act
    (`tool_ctx`, which also holds the node's deadline and the event writer), how calls are
    priced, and the run's usage meter."""

    model: ChatModel
    tools: Registry[Tool]
    tool_ctx: ToolContext
    cost_fn: CostFn
    price_table: str
    meter: UsageMeter


@dataclass(frozen=True, slots=True)
class AgentResult:
    """How an agent node ended: status ok | error | timeout | max_turns, its summary (the
    finish summary or final reply), the error message when not ok, the turns it took, and the
    replans it made (always 0 for loops that cannot replan, such as react)."""

    status: NodeStatus
    summary: str = ""
    error: str | None = None
    turns: int = 0
    replans_used: int = 0


class AgentLoop(Protocol):
    """One verb: run the agent `node` from its rendered `prompt` until it stops. May raise
    (ModelError or anything): `run_agent` turns that into an error result."""

    def __call__(self, node: AgentNode, prompt: str, ctx: LoopContext) -> AgentResult: ...


LOOPS: Registry[AgentLoop] = Registry("agent loop")
"""The default agent-loop registry, filled by `@agent_loop`."""


def agent_loop(name: str) -> Callable[[AgentLoop], AgentLoop]:
    """Register an AgentLoop under `name` in LOOPS (the name agent nodes give as `loop`)."""
    return LOOPS.register(name)


def run_agent(
    node: AgentNode, prompt: str, ctx: LoopContext, loops: Registry[AgentLoop]
) -> AgentResult:
    """Run `node` with the loop it names. Never raises: an unknown loop, a ModelError or any
    exception inside the loop is written as an ErrorEvent and returned as status "error"."""
    writer = ctx.tool_ctx.events
    try:
        loop = loops.get(node.loop)
        return loop(node, prompt, ctx)
    except ConfigError as exc:
        message, where = f"{exc.what}; known loops: {', '.join(loops.names())}", "node"
    except ModelError as exc:
        message, where = f"model call failed: {exc}", "model_call"
    except Exception as exc:  # noqa: BLE001  the node boundary: recorded below, never propagated
        message, where = f"{type(exc).__name__}: {exc}", "node"
    writer.write(ErrorEvent(t=writer.now(), node_id=node.id, where=where, message=message))
    return AgentResult("error", error=message)


def call_model(
    ctx: LoopContext, messages: Sequence[Message], tools: Sequence[ToolSpec], turn: int
) -> ModelResponse:
    """One model call, recorded as a ModelCall event (with its error if it raised ModelError,
    which is then re-raised). Adds the usage to the run's meter."""
    tc, started = ctx.tool_ctx, time.monotonic()
    try:
        response = ctx.model.chat(messages, tools)
    except ModelError as exc:
        tc.events.write(_model_call(ctx, turn, None, time.monotonic() - started, str(exc)))
        raise
    ctx.meter.usage = ctx.meter.usage + response.usage
    tc.events.write(_model_call(ctx, turn, response, response.latency_s, None))
    return response


def _model_call(
    ctx: LoopContext, turn: int, r: ModelResponse | None, latency: float, error: str | None
) -> ModelCall:
    tc, usage = ctx.tool_ctx, r.usage if r is not None else Usage()
    model = r.model if r is not None else ctx.model.name
    return ModelCall(
        t=tc.events.now(),
        node_id=tc.node_id,
        attempt=tc.attempt,
        turn=turn,
        model=model,
        simulated=r.simulated if r is not None else ctx.model.simulated,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        latency_s=max(latency, 0.0),
        # A failed call used no tokens: it costs 0 on a priced model, as in the gateway's ledger
        # (None there would make the whole run's cost unknown, and escape a dollar budget).
        cost_usd=ctx.cost_fn(model, usage),
        price_table=ctx.price_table,
        tool_calls=len(r.tool_calls) if r is not None else 0,
        error=error,
    )


def offered_tools(node: AgentNode, tools: Registry[Tool]) -> list[ToolSpec]:
    """The specs of the node's allowed tools, in allowlist order, then finish."""
    names = [*(n for n in node.tools if n != FINISH), FINISH]
    return [tools.get(name).spec() for name in names if name in tools]


@agent_loop("react")
def react(node: AgentNode, prompt: str, ctx: LoopContext) -> AgentResult:
    """Model -> tool calls -> results, turn after turn. Stops on finish (ok, its summary), a
    reply without tool calls (ok, the reply), `max_turns` model calls (max_turns) or the
    node's deadline (timeout, checked before and after each model call; a call in flight is
    not interrupted). Tool calls after finish in the same reply are not run."""
    messages = [Message("system", SYSTEM_PREAMBLE), Message("user", prompt)]
    specs, tc = offered_tools(node, ctx.tools), ctx.tool_ctx
    for turn in range(1, node.max_turns + 1):
        if tc.remaining() <= 0:
            return _timed_out(node, turn - 1)
        response = call_model(ctx, messages, specs, turn)
        if tc.remaining() <= 0:
            return _timed_out(node, turn)
        if not response.tool_calls:
            return AgentResult("ok", summary=response.text, turns=turn)
        messages.append(Message("assistant", response.text, response.tool_calls))
        for call in response.tool_calls:
            outcome = execute_tool_call(call, node.tools, ctx.tools, tc)
            tc.events.write(
                ToolCallEvent(
                    t=tc.events.now(),
                    node_id=node.id,
                    attempt=tc.attempt,
                    turn=turn,
                    tool=call.name,
                    arguments=call.arguments_json[:_ARGS_CHARS],
                    ok=outcome.error is None,
                    error=outcome.error,
                    output_chars=len(outcome.output),
                    duration_s=outcome.duration_s,
                )
            )
            if outcome.finished:
                return AgentResult("ok", summary=outcome.output, turns=turn)
            messages.append(Message("tool", outcome.output, tool_call_id=call.id, name=call.name))
    error = f"stopped at max_turns={node.max_turns} without finish"
    return AgentResult("max_turns", error=error, turns=node.max_turns)


def _timed_out(node: AgentNode, turns: int) -> AgentResult:
    error = f"timed out: node {node.id!r} passed its time limit (timeout_s={node.timeout_s} or the run's budget)"
    return AgentResult("timeout", error=error, turns=turns)
