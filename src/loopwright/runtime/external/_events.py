"""An external agent's transcript written as our events (`model_call`, `tool_call`) and, when the
run has one, as records of the cost ledger.

Tokens: a turn carries the tokens the agent reported for it. An agent that reports only totals
(Codex per turn of its own, OpenHands per run) has them on its last turn, the earlier ones at 0,
so sums over a node visit are right and the number of turns is the number it reported. Cost:
from our price table when it prices every turn's model; else the agent's own reported total on
the last turn (earlier turns 0.0) with the price table `agent-reported:NAME`; else unknown.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from loopwright.models import (
    CostLedger,
    LedgerRecord,
    Usage,
    current_labels,
    provider_of,
    redact,
)
from loopwright.records import ModelCall, ToolCallEvent
from loopwright.runtime._loops import LoopContext
from loopwright.runtime.external._types import AgentTurn, Transcript

__all__ = ["REPORTED_PRICES_PREFIX", "emit_transcript"]

REPORTED_PRICES_PREFIX = "agent-reported:"
"""`price_table` of costs an external agent computed itself (`agent-reported:claude-code`)."""

_ARGS_CHARS = 2_000


def emit_transcript(
    ctx: LoopContext,
    agent: str,
    requested_model: str | None,
    transcript: Transcript,
    ledger: CostLedger | None,
) -> None:
    """Write one `model_call` per turn, each followed by its `tool_call`s, add the tokens to the
    run's meter, and append one ledger record (source `external:AGENT`) per turn that carries
    tokens. Tool arguments and errors are redacted. Deterministic given the transcript."""
    turns = _turns(transcript)
    usages = _usages(transcript, turns)
    models = [t.model or transcript.model or requested_model or f"external:{agent}" for t in turns]
    costs, table = _costs(ctx, agent, transcript, models, usages)
    per_turn = any(t.usage is not None for t in turns)
    tc = ctx.tool_ctx
    for number, (turn, usage, model, cost) in enumerate(
        zip(turns, usages, models, costs, strict=True), 1
    ):
        used = usage or Usage()
        ctx.meter.usage = ctx.meter.usage + used
        tc.events.write(
            ModelCall(
                t=tc.events.now(),
                node_id=tc.node_id,
                attempt=tc.attempt,
                turn=number,
                model=model,
                simulated=False,
                input_tokens=used.input_tokens,
                output_tokens=used.output_tokens,
                cached_tokens=used.cached_tokens,
                latency_s=0.0,  # not reported per call by the agents
                cost_usd=cost,
                price_table=table,
                tool_calls=len(turn.tools),
            )
        )
        _write_tools(ctx, turn, number)
        if ledger is not None and usage is not None:
            last = number == len(turns)
            writes = (
                turn.cache_write_tokens
                if per_turn
                else _if(last, transcript.total_cache_write_tokens)
            )
            _record(ledger, agent, model, used, writes, cost, table)


def _if(condition: bool, value: int) -> int:
    return value if condition else 0


def _turns(transcript: Transcript) -> list[AgentTurn]:
    """The transcript's turns; one bare turn when it has none but reported usage or cost."""
    if transcript.turns:
        return list(transcript.turns)
    if transcript.total_usage is not None or transcript.cost_usd is not None:
        return [AgentTurn(text=transcript.summary)]
    return []


def _usages(transcript: Transcript, turns: Sequence[AgentTurn]) -> list[Usage | None]:
    """Per-turn tokens when any turn has them; else the reported total on the last turn."""
    usages: list[Usage | None]
    if any(t.usage is not None for t in turns):
        usages = [t.usage or Usage() for t in turns]
    elif transcript.total_usage is None or not turns:
        usages = [None] * len(turns)
    else:
        usages = [Usage()] * (len(turns) - 1)
        usages.append(transcript.total_usage)
    return usages


def _costs(
    ctx: LoopContext,
    agent: str,
    transcript: Transcript,
    models: Sequence[str],
    usages: Sequence[Usage | None],
) -> tuple[list[float | None], str]:
    if usages and all(u is not None for u in usages):
        priced = [ctx.cost_fn(m, u or Usage()) for m, u in zip(models, usages, strict=True)]
        if all(c is not None for c in priced):
            return priced, ctx.price_table
    if transcript.cost_usd is not None and usages:
        reported: list[float | None] = [0.0] * (len(usages) - 1)
        reported.append(transcript.cost_usd)
        return reported, REPORTED_PRICES_PREFIX + agent
    return [None] * len(usages), ctx.price_table


def _write_tools(ctx: LoopContext, turn: AgentTurn, number: int) -> None:
    tc = ctx.tool_ctx
    for use in turn.tools:
        tc.events.write(
            ToolCallEvent(
                t=tc.events.now(),
                node_id=tc.node_id,
                attempt=tc.attempt,
                turn=number,
                tool=use.name,
                arguments=redact(use.arguments)[:_ARGS_CHARS],
                ok=use.ok,
                error=redact(use.error) if use.error is not None else None,
                output_chars=max(use.output_chars, 0),
                duration_s=0.0,  # not reported per call by the agents
            )
        )


def _record(
    ledger: CostLedger,
    agent: str,
    model: str,
    usage: Usage,
    cache_write: int,
    cost: float | None,
    table: str,
) -> None:
    ledger.record(
        LedgerRecord(
            t=time.time(),
            source=f"external:{agent}",
            provider=provider_of(model),
            model=model,
            attempt=1,
            ok=True,
            input_tokens=max(usage.input_tokens, 0),
            output_tokens=max(usage.output_tokens, 0),
            cache_read_tokens=max(usage.cached_tokens, 0),
            cache_write_tokens=max(cache_write, 0),
            latency_s=0.0,
            cost_usd=cost,
            price_table=table,
            labels=current_labels(),
        )
    )
