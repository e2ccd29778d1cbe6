"""THINK: one meta-model call per iteration producing the K-spec envelope, and its eager writes.

The envelope is validated against the iteration (K <= max_specs, known and allowed axes, each
library mutation on the axis its spec names, the axis-jump rule, references that exist). A
SKIP_THINK_EMPTY, or a reply still unusable after the retry, escalates to REFLECT and THINK is
asked again, at most `max_think_escalations` times; REFLECT's SPACE_EXHAUSTED then ends the run
as SATURATED, and a THINK that stays empty while REFLECT still sees a frontier stops the run
as `stalled` (resumable, not a termination). Eager writes (hypotheses, knowledge, the
iteration's experiment design, tools) go straight to the working files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from loopwright.research._axes import axis_of_operator
from loopwright.research._context import Revision, ThinkContext
from loopwright.research._knowledge import Knowledge
from loopwright.research._record import ReflectBlock, write_json
from loopwright.research._schemas import Critique, Envelope, MutationOp, Spec
from loopwright.research._scope import Scope
from loopwright.research.phases._reflect import run_reflect
from loopwright.search import MUTATIONS
from loopwright.workflow import workflow_to_json

__all__ = ["ThinkOutcome", "revise_spec", "run_think", "think_context"]

OTHER_EXPERIENCE_SHOWN = 40


@dataclass
class ThinkOutcome:
    """The envelope (None when the run must stop, `stop` says why) and what THINK wrote."""

    envelope: Envelope | None
    stop: Literal["saturated", "stalled"] | None
    escalations: int
    shared_axes: tuple[str, ...]
    frontier: tuple[str, ...]
    stop_reflect: ReflectBlock | None = None
    hypotheses_added: list[str] = field(default_factory=list)
    knowledge_added: list[str] = field(default_factory=list)
    tools_written: list[str] = field(default_factory=list)


def think_context(scope: Scope, revise: Revision | None = None) -> ThinkContext:
    """THINK's view of the working memory."""
    memory, cfg = scope.memory, scope.config
    experience = memory.experience()
    on_base = [e for e in experience if e.base_hash == scope.base_hash]
    others = [e for e in experience if e.base_hash != scope.base_hash][-OTHER_EXPERIENCE_SHOWN:]
    return ThinkContext(
        iteration=scope.n,
        seed=cfg.seed,
        goal=scope.goal.ultimate,
        constraints=scope.constraints,
        rules=scope.rules,
        knowledge=memory.knowledge(),
        workflow=json.loads(workflow_to_json(scope.base)),
        workflow_hash=scope.base_hash,
        score=scope.state.score(),
        probe_score=scope.state.score(below=scope.goal.escalation.probe_passes),
        failures=scope.state.failures,
        experience=tuple(others + on_base),
        hypotheses=tuple(memory.hypotheses()),
        taxonomy=memory.axis_views(scope.rules),
        frontier=memory.frontier(scope.rules),
        shared_axes=memory.shared(cfg.reflect.axis_window),
        axis_window=cfg.reflect.axis_window,
        max_specs=1 if revise else cfg.caps.max_specs_per_iter,
        escalation=scope.goal.escalation,
        promising=() if revise else memory.promising(scope.base_hash),
        revise=revise,
    )


def envelope_check(scope: Scope, ctx: ThinkContext) -> Callable[[Envelope], str | None]:
    """The rules an envelope must follow in this iteration (None when it does)."""
    axes = {a.name for a in ctx.taxonomy}
    refs = {f"iter_{e.iter}/{e.spec_id}" for e in scope.memory.experience()}
    bullets = {b.id for b in Knowledge(scope.wd.knowledge).bullets()}

    def check(env: Envelope) -> str | None:
        if env.status == "SKIP_THINK_EMPTY":
            return None
        if len(env.specs) > ctx.max_specs:
            return f"{len(env.specs)} specs; at most max_specs = {ctx.max_specs}"
        if ctx.revise is not None and env.specs[0].spec_id != ctx.revise.spec.spec_id:
            return f"a revision must keep spec_id {ctx.revise.spec.spec_id!r}"
        for spec in env.specs:
            problem = _spec_problem(spec, axes, ctx, refs)
            if problem:
                return f"spec {spec.spec_id}: {problem}"
        shared = [s.spec_id for s in env.specs if s.intervention_axis in ctx.shared_axes]
        if ctx.revise is None and shared and not env.rebuttal:
            return (
                f"axis-jump rule: the last {ctx.axis_window} iterations all used "
                f"{', '.join(ctx.shared_axes)}; specs {', '.join(shared)} stay on it. Jump to "
                "another axis or write a top-level rebuttal"
            )
        for k in env.knowledge_add:
            unknown = [s for s in k.supersedes if s not in bullets]
            if unknown:
                return f"knowledge_add supersedes unknown bullets {unknown}"
        ids = {s.spec_id for s in env.specs}
        stray = [h.spec_id for h in env.hypotheses_add if h.spec_id and h.spec_id not in ids]
        return f"hypotheses_add names unknown specs {stray}" if stray else None

    return check


def _spec_problem(spec: Spec, axes: set[str], ctx: ThinkContext, refs: set[str]) -> str | None:
    axis = spec.intervention_axis
    if spec.spec_id == "baseline":
        return "spec_id 'baseline' is reserved for the workspace's own runs"
    if axis not in axes:
        return f"unknown intervention_axis {axis!r}; the taxonomy has {sorted(axes)}"
    if axis in ctx.rules.forbid_axes:
        return f"constraints forbid the axis {axis!r}"
    for op in spec.patch or ():
        if isinstance(op, MutationOp):
            if op.operator not in MUTATIONS:
                return f"unknown mutation operator {op.operator!r}; known: {', '.join(MUTATIONS)}"
            on = axis_of_operator(op.operator)
            if on is None:
                return (
                    f"mutation operator {op.operator!r} is on no intervention axis; use an "
                    "operator the taxonomy lists"
                )
            if on != axis:
                return f"operator {op.operator} is on axis {on!r}, not {axis!r}"
    if (
        spec.confirms is not None
        and f"iter_{spec.confirms.iter}/{spec.confirms.spec_id}" not in refs
    ):
        return (
            f"confirms iter {spec.confirms.iter} {spec.confirms.spec_id}, which has no experience"
        )
    return None


def run_think(scope: Scope) -> ThinkOutcome:
    """THINK with its escalations (see the module docstring)."""
    escalations = 0
    while True:
        scope.phase("THINK" if not escalations else f"THINK (after escalation {escalations})")
        ctx = think_context(scope)
        env = scope.meta.ask("think", ctx, Envelope, envelope_check(scope, ctx), subject="envelope")
        if env is not None and env.status == "OK":
            break
        if escalations >= scope.config.caps.max_think_escalations:
            return ThinkOutcome(None, "stalled", escalations, ctx.shared_axes, ctx.frontier)
        escalations += 1
        block = run_reflect(scope, "think_escalation")
        if block.verdict == "SPACE_EXHAUSTED":
            return ThinkOutcome(
                None, "saturated", escalations, ctx.shared_axes, ctx.frontier, block
            )
    outcome = ThinkOutcome(env, None, escalations, ctx.shared_axes, ctx.frontier)
    write_eager(scope, env, outcome)
    write_json(scope.staging / "spec.json", env)
    return outcome


def write_eager(scope: Scope, env: Envelope, outcome: ThinkOutcome) -> None:
    """Apply THINK's eager writes: hypotheses, knowledge, experiment design, tools."""
    for h in env.hypotheses_add:
        hid = scope.add_hypothesis(h, "think")
        outcome.hypotheses_added.append(hid)
    book = Knowledge(scope.wd.knowledge)
    for k in env.knowledge_add:
        bullet = book.append(
            k.text, origin=f"iter {scope.n}, think", supersedes=k.supersedes, by=scope.provenance()
        )
        outcome.knowledge_added.append(bullet.id)
    if env.experiment_design:
        with scope.wd.experiment_design.open("a", encoding="utf-8") as fh:
            fh.write(
                f"\n## iter {scope.n} (attempt {scope.attempt})\n\n{env.experiment_design.strip()}\n"
            )
    for tool in env.tools:
        scope.wd.tools.mkdir(exist_ok=True)
        (scope.wd.tools / tool.name).write_text(tool.content, encoding="utf-8")
        outcome.tools_written.append(tool.name)


def revise_spec(
    scope: Scope, spec: Spec, critique: Critique, outcome: ThinkOutcome
) -> tuple[Spec, bool]:
    """Send one spec back to THINK with CRITIC's critique. Returns (spec, changed): the
    revision, or the original when the reply is unusable or empty. Eager writes of the reply
    are applied and counted in `outcome`."""
    ctx = think_context(scope, Revision(spec=spec, critique=critique))
    env = scope.meta.ask(
        "think", ctx, Envelope, envelope_check(scope, ctx), subject=f"revise {spec.spec_id}"
    )
    if env is None or env.status != "OK":
        return spec, False
    write_eager(scope, env, outcome)
    new = env.specs[0]
    write_json(scope.staging / f"spec_revised_{spec.spec_id}.json", new)
    return new, new != spec
