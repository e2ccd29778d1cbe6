"""REFLECT: when it fires, the call, its validation and fallback, and search_space.md.

Triggers, checked at the start of an iteration (the first that holds fires, once): axis
concentration (the last `axis_window` committed iterations share an axis), then the heartbeat
(every `heartbeat_every` committed iterations). THINK's SKIP_THINK_EMPTY fires it mid-iteration
(`think_escalation`). A reply that is still unusable after the retry becomes a FRONTIER of
every axis the constraints do not close, in taxonomy order (never SPACE_EXHAUSTED).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Literal

from loopwright._fs import atomic_write
from loopwright.research._axes import Axis
from loopwright.research._context import AxisView, ReflectContext
from loopwright.research._memory import Memory
from loopwright.research._record import ReflectBlock, write_json
from loopwright.research._schemas import AxisStatus, Reflection
from loopwright.research._scope import LoopEvent, Scope
from loopwright.workflow import workflow_to_json

__all__ = ["reflect_trigger", "render_search_space", "run_reflect"]

Trigger = Literal["heartbeat", "axis_concentration", "think_escalation"]


def reflect_trigger(memory: Memory, heartbeat_every: int, axis_window: int) -> Trigger | None:
    """Which start-of-iteration trigger holds, if any."""
    if memory.shared(axis_window):
        return "axis_concentration"
    done = len(memory.records)
    if done and done % heartbeat_every == 0:
        return "heartbeat"
    return None


def _context(scope: Scope, trigger: str) -> ReflectContext:
    memory = scope.memory
    return ReflectContext(
        iteration=scope.n,
        seed=scope.config.seed,
        trigger=trigger,
        rules=scope.rules,
        taxonomy=memory.axis_views(scope.rules),
        workflow=json.loads(workflow_to_json(scope.base)),
        workflow_hash=scope.base_hash,
        failures=scope.state.failures,
        experience=tuple(memory.experience()),
        exhaust_after=scope.config.reflect.exhaust_after,
        last_adoption=memory.last_adoption(),
        shared_axes=memory.shared(scope.config.reflect.axis_window),
    )


def _checker(taxonomy: Sequence[AxisView]) -> Callable[[Reflection], str | None]:
    names = [a.name for a in taxonomy]

    def check(reply: Reflection) -> str | None:
        added = [a.axis for a in reply.taxonomy_add]
        given = [a.axis for a in reply.axes]
        expected = set(names) | set(added)
        if sorted(given) != sorted(expected):
            return (
                f"axes must list every axis exactly once: expected {sorted(expected)}, got {given}"
            )
        open_axes = {a.axis for a in reply.axes if a.status == "open"}
        stray = [a for a in reply.frontier if a not in open_axes]
        if stray:
            return f"the frontier may hold open axes only, not {stray}"
        if reply.verdict == "SPACE_EXHAUSTED" and open_axes:
            return f"SPACE_EXHAUSTED while axes are open: {sorted(open_axes)}"
        if reply.verdict == "FRONTIER" and not reply.frontier:
            return "FRONTIER needs a non-empty frontier"
        return None

    return check


def run_reflect(scope: Scope, trigger: Trigger) -> ReflectBlock:
    """Run REFLECT once: call, validate (or fall back), record it in staging, rewrite
    search_space.md. The block is also added to `scope.memory.reflects`."""
    scope.phase(f"REFLECT ({trigger})")
    ctx = _context(scope, trigger)
    check = _checker(ctx.taxonomy)
    reply = scope.meta.ask("reflect", ctx, Reflection, check, subject=trigger)
    if reply is None:
        block = _fallback(ctx, trigger)
    else:
        block = ReflectBlock(
            trigger=trigger, verdict=reply.verdict, axes=reply.axes, frontier=reply.frontier,
            taxonomy_add=reply.taxonomy_add, notes=reply.notes,
        )  # fmt: skip
    scope.memory.reflects.append(block)
    write_json(scope.staging / f"reflect_{len(scope.memory.reflects)}.json", block)
    render_search_space(scope.memory, scope.rules.forbid_axes)
    scope.emit(
        LoopEvent("reflect", scope.n, f"{trigger}: {block.verdict} {' > '.join(block.frontier)}")
    )
    return block


def _fallback(ctx: ReflectContext, trigger: Trigger) -> ReflectBlock:
    axes = tuple(
        AxisStatus(
            axis=a.name,
            status="closed" if a.name in ctx.rules.forbid_axes else "open",
            note="REFLECT reply unusable: every axis the constraints allow is open",
        )
        for a in ctx.taxonomy
    )
    frontier = tuple(a.axis for a in axes if a.status == "open")
    return ReflectBlock(
        trigger=trigger,
        verdict="FRONTIER" if frontier else "SPACE_EXHAUSTED",
        axes=axes,
        frontier=frontier,
        notes="fallback after an unusable REFLECT reply",
        malformed=True,
    )


def render_search_space(memory: Memory, forbid_axes: Sequence[str] = ()) -> None:
    """Rewrite search_space.md: preamble, taxonomy, every REFLECT's coverage map (newest
    last), and the current frontier."""
    preamble = (resources.files("loopwright.research") / "data" / "seed_search_space.md").read_text(
        encoding="utf-8"
    )
    parts = ["# Search space\n", preamble.strip() + "\n", _taxonomy(memory.taxonomy())]
    parts.append(_coverage_now(memory))
    reflects = memory.all_reflects()
    if reflects:
        parts.append("## REFLECT history\n")
        for iteration, block in reflects:
            parts.append(_reflect_section(iteration, block))
    atomic_write(memory.wd.search_space, "\n".join(parts))


def _taxonomy(axes: Sequence[Axis]) -> str:
    rows = [
        "## Taxonomy\n",
        "| axis | levers (mutation operators) | what it changes |",
        "| --- | --- | --- |",
    ]
    rows += [
        f"| {a.name} | {', '.join(a.operators) or '(none: literal patches only)'} | {a.description} |"
        for a in axes
    ]
    return "\n".join(rows) + "\n"


def _coverage_now(memory: Memory) -> str:
    experience = memory.experience()
    rows = [
        "## Coverage\n",
        "| axis | specs | measured | refuted | best delta | last iter |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for axis in memory.taxonomy():
        mine = [e for e in experience if e.axis == axis.name]
        deltas = [e.delta for e in mine if e.delta is not None]
        rows.append(
            f"| {axis.name} | {len(mine)} | {sum(e.outcome_class == 'measured' for e in mine)} "
            f"| {sum(e.verdict in ('refuted', 'no_effect', 'not_confirmed', 'implementer_skip', 'critic_block') for e in mine)} "
            f"| {max(deltas):+.3f} | {max(e.iter for e in mine)} |"
            if deltas
            else f"| {axis.name} | {len(mine)} | 0 | {len(mine)} | - | {max((e.iter for e in mine), default='-')} |"
        )
    return "\n".join(rows) + "\n"


def _reflect_section(iteration: int, block: ReflectBlock) -> str:
    lines = [f"### iter {iteration}: {block.trigger} -> {block.verdict}"]
    lines += [f"- {a.axis}: {a.status}{f' ({a.note})' if a.note else ''}" for a in block.axes]
    lines.append(f"- frontier: {' > '.join(block.frontier) or '(none)'}")
    return "\n".join(lines) + "\n"
