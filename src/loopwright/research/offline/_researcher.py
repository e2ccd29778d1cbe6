"""`SimResearcher`: the offline meta model. It answers every phase by documented rules.

It is a ChatModel like any other: it reads the phase and the context JSON out of the prompt
(`_prompts.parse_prompt`) and replies with the phase's JSON, so the loop parses, validates and
records its replies exactly as a real model's. It is a simulator: `simulated` is True, its
name is `sim-researcher-1`, and everything made with it says so. The rules (docs/research.md,
"The offline meta model") in short:

- THINK: first confirm promising probes at perf scale, then one probe per frontier axis (open,
  not forbidden, not shared under the axis-jump rule) with the first untried library mutation
  on it (`_candidates`), up to min(max_specs, breadth) specs; a rebuttal only when every open
  axis is a shared one; nothing found: SKIP_THINK_EMPTY. When the workspace already scores 1.0
  on the probe pairs, new specs are measured at perf scale instead (a probe could show nothing).
- THINK revising a spec: the next untried candidate on the same axis whose pattern was never
  refuted; none: the spec unchanged.
- CRITIC: count past refutations of the spec's exact pattern: 2 or more BLOCK, 1 REVISE; a
  rebuttal lowers that to WARN; tokens refuted in 2+ patterns WARN; else OK.
- DISTILL: `_sim_distill`.
- REFLECT: per axis closed (constraints), exhausted (no operator, `exhaust_after` refutations
  in a row since the last adoption, or no untried candidate), else open; frontier = open axes
  by (shared last, fewest tries since the last adoption, best delta, taxonomy order).
- repair: re-draw every mutation's seed; a patch with other operations is given up (null).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from loopwright.models import Message, ModelError, ModelResponse, ToolSpec, response_usage
from loopwright.research._context import (
    AxisView,
    CriticContext,
    DistillContext,
    ReflectContext,
    RepairContext,
    ThinkContext,
)
from loopwright.research._journal import REFUTING, Experience
from loopwright.research._prompts import parse_prompt
from loopwright.research._schemas import (
    AxisStatus,
    Critique,
    Envelope,
    HypothesisAdd,
    MutationOp,
    Reflection,
    Repair,
    Spec,
    SpecRef,
)
from loopwright.research.offline._candidates import Candidate, candidates, derive_seed
from loopwright.research.offline._distill import sim_distill
from loopwright.workflow import Workflow

__all__ = ["SIM_RESEARCHER_NAME", "SimResearcher"]

SIM_RESEARCHER_NAME = "sim-researcher-1"
_ZERO = 1e-9


class SimResearcher:
    """The offline meta model (a ChatModel). Deterministic: its only randomness is seeds
    derived from the context's run seed and iteration. `breadth` caps the specs it proposes
    per iteration (below the loop's max_specs_per_iter)."""

    simulated: bool = True

    def __init__(self, breadth: int = 2) -> None:
        self.name = SIM_RESEARCHER_NAME
        self.breadth = breadth

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        """Answer a research-loop prompt. ModelError for any other prompt."""
        del tools
        try:
            phase, payload = parse_prompt(messages[0].content if messages else "")
        except ValueError as exc:
            raise ModelError(f"{self.name} answers research-loop prompts only: {exc}") from None
        if phase == "think":
            reply = self._think(ThinkContext.model_validate_json(payload)).model_dump_json()
        elif phase == "critic":
            reply = critic(CriticContext.model_validate_json(payload)).model_dump_json()
        elif phase == "distill":
            reply = sim_distill(DistillContext.model_validate_json(payload)).model_dump_json()
        elif phase == "reflect":
            reply = reflect(ReflectContext.model_validate_json(payload)).model_dump_json()
        elif phase == "repair":
            reply = repair(RepairContext.model_validate_json(payload)).model_dump_json()
        else:
            raise ModelError(f"{self.name} has no rule for phase {phase!r}")
        return ModelResponse(
            text=reply,
            tool_calls=(),
            usage=response_usage(messages, reply, ()),
            latency_s=0.0,
            model=self.name,
            simulated=True,
        )

    def _think(self, ctx: ThinkContext) -> Envelope:
        if ctx.revise is not None:
            return revise(ctx)
        return think(ctx, min(ctx.max_specs, self.breadth))


def _tried(experience: Sequence[Experience], base_hash: str) -> set[str]:
    return {e.workflow_hash for e in experience if e.base_hash == base_hash and e.workflow_hash}


def _axis_views(ctx: ThinkContext) -> dict[str, AxisView]:
    return {a.name: a for a in ctx.taxonomy}


def think(ctx: ThinkContext, slots: int) -> Envelope:
    """THINK's offline rule (see the module docstring)."""
    shared = set(ctx.shared_axes)
    specs, rebuttal = _confirmations(ctx, slots, shared)
    hypotheses: list[HypothesisAdd] = []
    views = _axis_views(ctx)
    open_axes = [
        a for a in ctx.frontier
        if a in views and views[a].status == "open" and a not in ctx.rules.forbid_axes
    ]  # fmt: skip
    order = [a for a in open_axes if a not in shared]
    if not order and open_axes:
        order = open_axes
        rebuttal = rebuttal or (
            f"every open axis ({', '.join(open_axes)}) is a shared one: no axis to jump to"
        )
    workflow = Workflow.model_validate(ctx.workflow)
    tried = _tried(ctx.experience, ctx.workflow_hash)
    used = {s.intervention_axis for s in specs}
    for axis in order:
        if len(specs) >= slots:
            break
        if axis in used:
            continue
        found = next(_on_axis(ctx, workflow, views[axis], tried), None)
        if found is None:
            continue
        spec = _probe(f"s{len(specs) + 1}", axis, found, ctx)
        specs.append(spec)
        hypotheses.append(HypothesisAdd(text=spec.hypothesis, axis=axis, spec_id=spec.spec_id))
        used.add(axis)
    if not specs:
        return Envelope(
            status="SKIP_THINK_EMPTY",
            reasoning="no untried change on any open frontier axis: "
            + (", ".join(open_axes) or "(no open axis)"),
        )
    return Envelope(
        status="OK",
        reasoning=f"frontier {', '.join(ctx.frontier)}; shared axes {', '.join(shared) or 'none'}",
        rebuttal=rebuttal,
        specs=tuple(specs),
        hypotheses_add=tuple(hypotheses),
        experiment_design=_design(ctx, specs),
    )


def _confirmations(
    ctx: ThinkContext, slots: int, shared: set[str]
) -> tuple[list[Spec], str | None]:
    """Perf re-runs of the promising probes (first in line), and a rebuttal when one of them is
    on a shared axis."""
    specs: list[Spec] = []
    rebuttal = None
    for p in ctx.promising[:slots]:
        if p.axis in shared:
            rebuttal = "confirming a promising probe at perf scale measures an idea already tested"
        specs.append(
            Spec(
                spec_id=f"s{len(specs) + 1}", title=f"confirm: {p.title}", intervention_axis=p.axis,
                hypothesis=p.hypothesis, scale="perf", patch=p.patch,
                confirms=SpecRef(iter=p.iter, spec_id=p.spec_id),
                prediction=f"the probe's gain ({_fmt(p.delta)}) holds over "
                f"{ctx.escalation.perf_passes} passes",
            )
        )  # fmt: skip
    return specs, rebuttal


def _on_axis(
    ctx: ThinkContext, workflow: Workflow, axis: AxisView, tried: set[str]
) -> Iterator[Candidate]:
    return iter(
        candidates(
            workflow, axis, rules=ctx.rules, failures=ctx.failures, tried=tried,
            seed=ctx.seed, iteration=ctx.iteration,
        )
    )  # fmt: skip


def _probe(spec_id: str, axis: str, found: Candidate, ctx: ThinkContext) -> Spec:
    # A workspace already perfect on the probe pairs leaves a probe nothing to show: measure
    # the new idea at perf scale, on every pass (the Escalation section's bigger size).
    ceiling = ctx.probe_score is not None and ctx.probe_score >= 1.0 - _ZERO
    return Spec(
        spec_id=spec_id,
        title=found.reason,
        intervention_axis=axis,
        hypothesis=f"{found.reason} raises the mean partial credit ({axis} axis)",
        prediction=(
            "score above the workspace's on every pass (the probe pairs are already at 1.0)"
            if ceiling
            else f"score at least {ctx.escalation.escalate_gain} above the workspace"
        ),
        scale="perf" if ceiling else "probe",
        patch=(found.op,),
    )


def _design(ctx: ThinkContext, specs: Sequence[Spec]) -> str:
    e = ctx.escalation
    lines = [f"Specs of iteration {ctx.iteration} (offline THINK):"]
    for s in specs:
        passes = e.perf_passes if s.scale == "perf" else e.probe_passes
        lines.append(
            f"- {s.spec_id} [{s.intervention_axis}, {s.scale}, {passes} pass(es)]: {s.title}. "
            f"Prediction: {s.prediction}."
        )
    return "\n".join(lines)


def revise(ctx: ThinkContext) -> Envelope:
    """THINK's offline answer to a CRITIC REVISE/BLOCK of one spec."""
    assert ctx.revise is not None
    spec = ctx.revise.spec
    refuted = {tuple(e.pattern) for e in ctx.experience if e.verdict in REFUTING}
    views = _axis_views(ctx)
    alternative: Candidate | None = None
    if spec.intervention_axis in views:
        workflow = Workflow.model_validate(ctx.workflow)
        tried = _tried(ctx.experience, ctx.workflow_hash)
        pool = _on_axis(ctx, workflow, views[spec.intervention_axis], tried)
        alternative = next((c for c in pool if c.pattern not in refuted and c.pattern), None)
    if alternative is None:
        return Envelope(
            status="OK", reasoning="no unrefuted alternative on the axis", specs=(spec,)
        )
    new = _probe(spec.spec_id, spec.intervention_axis, alternative, ctx)
    return Envelope(
        status="OK",
        reasoning=f"revised after CRITIC: {ctx.revise.critique.reason}",
        specs=(new.model_copy(update={"title": f"revised: {new.title}"}),),
    )


def critic(ctx: CriticContext) -> Critique:
    """CRITIC's offline rule (see the module docstring)."""
    spec = ctx.spec
    if spec.confirms is not None:
        return Critique(verdict="OK", reason="a perf confirmation of a promising probe")
    if ctx.preview_error is not None or not ctx.pattern:
        return Critique(verdict="OK", reason="no pattern to match: the smoke gate decides")
    same = [e for e in ctx.experience if e.verdict in REFUTING and e.pattern == ctx.pattern]
    refs = tuple(f"iter {e.iter} {e.spec_id}: {e.verdict}" for e in same)
    shown = " ".join(ctx.pattern)
    if same and spec.rebuttal:
        return Critique(
            verdict="WARN", reason=f"{shown} was refuted before; rebuttal given", matches=refs
        )
    if len(same) >= 2:
        return Critique(
            verdict="BLOCK", reason=f"{shown} was refuted {len(same)} times", matches=refs
        )
    if len(same) == 1:
        return Critique(verdict="REVISE", reason=f"{shown} was refuted once already", matches=refs)
    hot = [
        t for t in ctx.pattern
        if len({e.pattern for e in ctx.experience if e.verdict in REFUTING and t in e.pattern}) >= 2
    ]  # fmt: skip
    if hot:
        return Critique(
            verdict="WARN", reason=f"parts refuted in several patterns: {', '.join(hot)}"
        )
    return Critique(verdict="OK", reason="no refuted pattern matches")


def reflect(ctx: ReflectContext) -> Reflection:
    """REFLECT's offline rule (see the module docstring)."""
    workflow = Workflow.model_validate(ctx.workflow)
    tried = _tried(ctx.experience, ctx.workflow_hash)
    since = [e for e in ctx.experience if e.iter > ctx.last_adoption]
    statuses: list[AxisStatus] = []
    for axis in ctx.taxonomy:
        mine = [e for e in since if e.axis == axis.name]
        statuses.append(_axis_status(ctx, workflow, axis, mine, tried))
    open_names = [s.axis for s in statuses if s.status == "open"]
    index = {a.name: i for i, a in enumerate(ctx.taxonomy)}

    def rank(name: str) -> tuple[bool, int, float, int]:
        mine = [e for e in since if e.axis == name]
        best = max((e.delta for e in mine if e.delta is not None), default=0.0)
        return (name in ctx.shared_axes, len(mine), -best, index[name])

    frontier = tuple(sorted(open_names, key=rank))
    coverage = ", ".join(f"{s.axis} {s.status}" for s in statuses)
    return Reflection(
        verdict="FRONTIER" if frontier else "SPACE_EXHAUSTED",
        axes=tuple(statuses),
        frontier=frontier,
        notes=f"trigger {ctx.trigger}; {coverage}",
    )


def _axis_status(
    ctx: ReflectContext, workflow: Workflow, axis: AxisView, mine: list[Experience], tried: set[str]
) -> AxisStatus:
    usable = [op for op in axis.operators if op not in ctx.rules.forbid_operators]
    if axis.name in ctx.rules.forbid_axes or (axis.operators and not usable):
        return AxisStatus(axis=axis.name, status="closed", note="forbidden by constraints")
    if not axis.operators:
        return AxisStatus(
            axis=axis.name, status="exhausted", note="no operator the offline rules can use"
        )
    streak = 0
    for e in reversed(mine):
        if e.verdict not in REFUTING:
            break
        streak += 1
    if streak >= ctx.exhaust_after:
        return AxisStatus(
            axis=axis.name, status="exhausted", note=f"last {streak} experiments refuted"
        )
    probe = next(
        candidates(
            workflow, axis, rules=ctx.rules, failures=ctx.failures, tried=tried,
            seed=ctx.seed, iteration=ctx.iteration,
        ),
        None,
    )  # fmt: skip
    if probe is None:
        return AxisStatus(axis=axis.name, status="exhausted", note="no untried change left")
    return AxisStatus(
        axis=axis.name, status="open", note=f"{len(mine)} tried since the last adoption"
    )


def repair(ctx: RepairContext) -> Repair:
    """The offline editor: re-draw each mutation's seed; give up on any other operation."""
    if not all(isinstance(op, MutationOp) for op in ctx.patch):
        return Repair(patch=None, note="the offline editor only re-draws library mutations")
    redrawn = tuple(
        op.model_copy(update={"seed": derive_seed(op.seed, "repair", ctx.attempt)})
        for op in ctx.patch
        if isinstance(op, MutationOp)
    )
    return Repair(patch=redrawn, note=f"re-drew the seeds after: {ctx.error}")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"
