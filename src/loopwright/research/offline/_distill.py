"""DISTILL's offline rule: verdicts from the measured deltas, lessons, knowledge, hypotheses.

Per spec (numbers from the loop; e = the goal's Escalation):
- not measured: the verdict is its outcome class (implementer_skip, critic_block);
- no valid pair: inconclusive;
- perf scale (or a probe when e.perf_passes <= e.probe_passes: a probe is then already at
  perf size): confirmed when delta > e.adopt_gain; otherwise a confirmation of a promising
  probe is not_confirmed, and a new idea is judged as a probe below (never promising);
- probe: promising when delta >= e.escalate_gain, inconclusive when 0 < delta < that,
  no_effect when delta == 0, refuted when delta < 0.
The confirmed spec with the largest delta (the first on ties) is adopted. One knowledge bullet
per spec, tagged `[iter N sK]`; a not_confirmed perf run supersedes the bullet that called its
probe promising. Each decided spec's hypothesis is removed with its verdict as the reason;
a promising probe's stays open until its perf run decides it.
"""

from __future__ import annotations

from loopwright.research._context import DistillContext, SpecOutcome
from loopwright.research._schemas import (
    Distillation,
    DistillVerdict,
    HypothesisRemove,
    KnowledgeAdd,
    SpecVerdict,
)

__all__ = ["sim_distill", "verdict_of"]

_ZERO = 1e-9


def verdict_of(o: SpecOutcome, ctx: DistillContext) -> DistillVerdict:
    """The offline verdict of one spec (before adoption)."""
    e = ctx.escalation
    if o.outcome_class != "measured":
        return o.outcome_class
    if o.delta is None:
        return "inconclusive"
    perf = o.spec.scale == "perf" or e.perf_passes <= e.probe_passes
    if perf and o.delta > e.adopt_gain + _ZERO:
        return "confirmed"
    if perf and o.spec.confirms is not None:
        return "not_confirmed"
    if not perf and o.delta >= e.escalate_gain - _ZERO:
        return "promising"
    if o.delta > _ZERO:
        return "inconclusive"
    return "no_effect" if o.delta >= -_ZERO else "refuted"


def sim_distill(ctx: DistillContext) -> Distillation:
    """DISTILL's offline reply for the whole iteration."""
    verdicts: dict[str, DistillVerdict] = {o.spec.spec_id: verdict_of(o, ctx) for o in ctx.outcomes}
    confirmed = [o for o in ctx.outcomes if verdicts[o.spec.spec_id] == "confirmed"]
    adopt = max(confirmed, key=lambda o: o.delta or 0.0, default=None)
    if adopt is not None:
        verdicts[adopt.spec.spec_id] = "adopted"
    specs, knowledge, removed = [], [], []
    for o in ctx.outcomes:
        verdict = verdicts[o.spec.spec_id]
        lesson = _lesson(o, verdict)
        specs.append(SpecVerdict(spec_id=o.spec.spec_id, verdict=verdict, lesson=lesson))
        knowledge.append(_bullet(ctx, o, verdict, lesson))
        if verdict != "promising":
            removed += _removals(ctx, o, verdict)
    return Distillation(
        specs=tuple(specs),
        cross_spec_lesson=_cross(ctx, verdicts),
        milestone=_milestone(ctx, adopt),
        adopt=adopt.spec.spec_id if adopt is not None else None,
        knowledge_add=tuple(knowledge),
        hypotheses_remove=tuple(removed),
    )


def _what(o: SpecOutcome) -> str:
    shown = " ".join(o.pattern) or "no change"
    return f"{o.spec.title} ({o.spec.intervention_axis}: {shown})"


def _lesson(o: SpecOutcome, verdict: str) -> str:
    what = _what(o)
    if o.outcome_class != "measured":
        return f"{what} did not run: {o.note}"
    if o.delta is None:
        return f"{what}: no valid pair to compare"
    numbers = f"{o.score:.3f} vs {o.baseline:.3f} ({o.delta:+.3f}) on {o.pairs} pairs"
    return {
        "adopted": f"{what} held at perf scale: {numbers}; adopted",
        "confirmed": f"{what} held at perf scale: {numbers}",
        "not_confirmed": f"{what} did not hold at perf scale: {numbers}",
        "promising": f"{what} looks promising: {numbers}; to be confirmed at perf scale",
        "inconclusive": f"{what} gained too little to call: {numbers}",
        "no_effect": f"{what} changed nothing measurable: {numbers}",
        "refuted": f"{what} lowered the score: {numbers}",
    }[verdict]


def _bullet(ctx: DistillContext, o: SpecOutcome, verdict: str, lesson: str) -> KnowledgeAdd:
    tag = f"[iter {ctx.iteration} {o.spec.spec_id}]"
    supersedes: tuple[str, ...] = ()
    ref = o.spec.confirms
    if verdict == "not_confirmed" and ref is not None:
        old = f"[iter {ref.iter} {ref.spec_id}]"
        supersedes = tuple(k.id for k in ctx.knowledge if k.text.startswith(old))
        lesson += f"; this corrects the promise of {old}"
    return KnowledgeAdd(text=f"{tag} {lesson}.", supersedes=supersedes)


def _removals(ctx: DistillContext, o: SpecOutcome, verdict: str) -> list[HypothesisRemove]:
    refs = {f"iter_{ctx.iteration}/{o.spec.spec_id}"}
    if o.spec.confirms is not None:
        refs.add(f"iter_{o.spec.confirms.iter}/{o.spec.confirms.spec_id}")
    return [HypothesisRemove(id=h.id, reason=verdict) for h in ctx.hypotheses if h.spec in refs]


def _cross(ctx: DistillContext, verdicts: dict[str, DistillVerdict]) -> str:
    measured = sorted(
        (o for o in ctx.outcomes if o.delta is not None), key=lambda o: -(o.delta or 0.0)
    )
    if not measured:
        return "no spec was measured this iteration: " + ", ".join(
            f"{k} {v}" for k, v in verdicts.items()
        )
    ceiling = all(o.baseline is not None and o.baseline >= 1.0 - _ZERO for o in measured)
    note = (
        "; the workspace already scores 1.000 on these pairs, so they cannot show a gain"
        if ceiling
        else ""
    )
    if len(measured) == 1:
        o = measured[0]
        return (
            f"one measured spec: {o.spec.spec_id} ({o.spec.intervention_axis}) {o.delta:+.3f}{note}"
        )
    ranked = " > ".join(
        f"{o.spec.spec_id} ({o.spec.intervention_axis} {o.delta:+.3f})" for o in measured
    )
    top, bottom = measured[0], measured[-1]
    if (top.delta or 0.0) - (bottom.delta or 0.0) <= _ZERO:
        return f"side by side: {ranked}; no lever did better than another{note}"
    return (
        f"side by side: {ranked}; on this workspace the {top.spec.intervention_axis} lever "
        f"did better than {bottom.spec.intervention_axis}{note}"
    )


def _milestone(ctx: DistillContext, adopt: SpecOutcome | None) -> str:
    if adopt is None or adopt.baseline is None or adopt.score is None:
        now = "unmeasured" if ctx.workspace_score is None else f"{ctx.workspace_score:.3f}"
        return f"workspace unchanged (score {now})"
    return (
        f"workspace {adopt.baseline:.3f} -> {adopt.score:.3f} on the same pairs: adopted "
        f"{adopt.spec.spec_id} ({adopt.spec.title})"
    )
