"""DISTILL: one call over all K specs side by side; verdicts, lessons, and the eager appends.

The reply must give every spec exactly one verdict (a spec that did not run keeps its outcome
class), adopt at most one spec (the one marked adopted), and name only existing knowledge
bullets and open hypotheses. The loop then checks the adoption itself: the spec must have been
measured at perf scale (or a probe when perf_passes <= probe_passes) with a delta above
adopt_gain; otherwise the adoption is refused and recorded as such. A reply still unusable
after the retry is SKIP_DISTILL_EMPTY: the phase ran, every measured spec is `undistilled`,
nothing is adopted and no knowledge is written; experience lines are still appended (facts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from loopwright.research._context import DistillContext, SpecOutcome
from loopwright.research._journal import (
    Experience,
    HypothesisEvent,
    append_line,
)
from loopwright.research._knowledge import Knowledge
from loopwright.research._patch import patch_summary
from loopwright.research._record import DistillBlock, DistillFile, DistillSummary, write_json
from loopwright.research._schemas import Distillation, SpecVerdict
from loopwright.research._scope import Scope
from loopwright.research._workspace import PairScore
from loopwright.research.phases._critic import Vetted
from loopwright.research.phases._experiment import ExperimentOutcome

__all__ = ["DistillResult", "run_distill"]


@dataclass
class DistillResult:
    """Per-spec verdict blocks, the summary, and the adopted spec (if the loop accepted one)."""

    blocks: dict[str, DistillBlock] = field(default_factory=dict)
    summary: DistillSummary | None = None
    adopted: str | None = None


def _outcomes(
    scope: Scope, vetted: list[Vetted], exp: ExperimentOutcome
) -> tuple[SpecOutcome, ...]:
    out = []
    for v in vetted:
        block = exp.blocks[v.spec.spec_id]
        pairs = exp.pairs.get(v.spec.spec_id, ())
        base = {(p.task, p.rep): p for p in scope.state.with_pairs(exp.baseline_pairs)}
        mine_base = [base[(p.task, p.rep)] for p in pairs if (p.task, p.rep) in base]
        failures: dict[str, int] = {}
        for p in pairs:
            failures[p.failure] = failures.get(p.failure, 0) + 1
        out.append(
            SpecOutcome(
                spec=v.spec, outcome_class=block.outcome_class, pattern=v.pattern,
                score=block.score, baseline=block.baseline, delta=block.delta, pairs=block.pairs,
                resolved_rate=_rate(pairs), baseline_resolved_rate=_rate(mine_base),
                failure_counts=failures, note=block.note,
            )
        )  # fmt: skip
    return tuple(out)


def _rate(pairs: list[PairScore] | tuple[PairScore, ...]) -> float | None:
    valid = [p for p in pairs if p.valid]
    return sum(p.resolved for p in valid) / len(valid) if valid else None


def _checker(scope: Scope, ctx: DistillContext) -> Callable[[Distillation], str | None]:
    kinds = {o.spec.spec_id: o.outcome_class for o in ctx.outcomes}
    bullets = {b.id for b in Knowledge(scope.wd.knowledge).bullets()}
    open_ids = {h.id for h in ctx.hypotheses}

    def check(reply: Distillation) -> str | None:
        given = [s.spec_id for s in reply.specs]
        if sorted(given) != sorted(kinds):
            return f"give exactly one verdict per spec {sorted(kinds)}, got {given}"
        for s in reply.specs:
            kind = kinds[s.spec_id]
            if kind != "measured" and s.verdict != kind:
                return f"spec {s.spec_id} did not run ({kind}): its verdict must be {kind}"
            if kind == "measured" and s.verdict in ("implementer_skip", "critic_block"):
                return f"spec {s.spec_id} was measured: {s.verdict} is not its verdict"
        adopted = [s.spec_id for s in reply.specs if s.verdict == "adopted"]
        if len(adopted) > 1 or (reply.adopt or None) != (adopted[0] if adopted else None):
            return f"adopt must name the one spec marked adopted (marked: {adopted}, adopt: {reply.adopt})"
        unknown = [i for k in reply.knowledge_add for i in k.supersedes if i not in bullets]
        if unknown:
            return f"knowledge_add supersedes unknown bullets {unknown}"
        gone = [h.id for h in reply.hypotheses_remove if h.id not in open_ids]
        return f"hypotheses_remove names hypotheses that are not open: {gone}" if gone else None

    return check


def run_distill(scope: Scope, vetted: list[Vetted], exp: ExperimentOutcome) -> DistillResult:
    """Run DISTILL and apply its writes (see the module docstring)."""
    scope.phase("DISTILL")
    outcomes = _outcomes(scope, vetted, exp)
    ctx = DistillContext(
        iteration=scope.n, escalation=scope.goal.escalation, workspace_hash=scope.base_hash,
        workspace_score=scope.state.score(), outcomes=outcomes,
        hypotheses=tuple(scope.memory.hypotheses()), knowledge=scope.memory.knowledge(),
        experience=tuple(scope.memory.experience()),
    )  # fmt: skip
    reply = scope.meta.ask("distill", ctx, Distillation, _checker(scope, ctx), subject="iteration")
    result = DistillResult()
    if reply is None:
        reply = _empty(outcomes)
        status = "SKIP_DISTILL_EMPTY"
    else:
        status = "OK"
    verdicts = {s.spec_id: s for s in reply.specs}
    refused = _adoption_refusal(scope, outcomes, reply.adopt)
    result.adopted = reply.adopt if reply.adopt and refused is None else None
    for o in outcomes:
        v = verdicts[o.spec.spec_id]
        verdict: str = v.verdict
        if status == "SKIP_DISTILL_EMPTY":
            verdict = o.outcome_class if o.outcome_class != "measured" else "undistilled"
        elif verdict == "adopted" and result.adopted is None:
            verdict = "confirmed"  # the loop refused the adoption: the measurement still stands
        block = DistillBlock(verdict=verdict, lesson=v.lesson)
        result.blocks[o.spec.spec_id] = block
        write_json(
            scope.staging / f"distill_{o.spec.spec_id}.json",
            DistillFile(spec_id=o.spec.spec_id, outcome=o, verdict=verdict, lesson=v.lesson),
        )
        append_line(scope.wd.experience, _experience(scope, o, block, exp))
    knowledge, added, removed = _apply(scope, reply) if status == "OK" else ([], [], [])
    result.summary = DistillSummary(
        status=status, cross_spec_lesson=reply.cross_spec_lesson, milestone=reply.milestone,
        adopted=result.adopted, adopt_refused=refused, knowledge_added=tuple(knowledge),
        hypotheses_added=tuple(added), hypotheses_removed=tuple(removed),
    )  # fmt: skip
    write_json(scope.staging / "distill_summary.json", result.summary)
    return result


def _empty(outcomes: tuple[SpecOutcome, ...]) -> Distillation:
    return Distillation(
        specs=tuple(
            SpecVerdict(
                spec_id=o.spec.spec_id,
                verdict=o.outcome_class if o.outcome_class != "measured" else "inconclusive",
                lesson="DISTILL reply unusable: no lesson drawn",
            )
            for o in outcomes
        ),
        cross_spec_lesson="SKIP_DISTILL_EMPTY: the DISTILL reply was unusable",
        milestone="workspace unchanged (DISTILL reply unusable)",
    )


def _adoption_refusal(
    scope: Scope, outcomes: tuple[SpecOutcome, ...], adopt: str | None
) -> str | None:
    if adopt is None:
        return None
    e = scope.goal.escalation
    o = next(o for o in outcomes if o.spec.spec_id == adopt)
    if o.outcome_class != "measured" or o.delta is None:
        return f"{adopt} has no paired measurement"
    if o.spec.scale != "perf" and e.perf_passes > e.probe_passes:
        return f"{adopt} was only probed; adoption needs a perf measurement"
    if o.delta <= e.adopt_gain:
        return f"{adopt}'s delta {o.delta:+.3f} is not above adopt_gain {e.adopt_gain}"
    return None


def _experience(
    scope: Scope, o: SpecOutcome, block: DistillBlock, exp: ExperimentOutcome
) -> Experience:
    ref = o.spec.confirms
    return Experience(
        iter=scope.n, spec_id=o.spec.spec_id, axis=o.spec.intervention_axis, scale=o.spec.scale,
        title=o.spec.title, pattern=o.pattern, patch_summary=patch_summary(o.spec.patch),
        base_hash=scope.base_hash, workflow_hash=exp.blocks[o.spec.spec_id].workflow_hash,
        outcome_class=o.outcome_class, verdict=block.verdict,
        score=o.score, baseline=o.baseline, delta=o.delta,
        runs=exp.blocks[o.spec.spec_id].runs, lesson=block.lesson,
        confirms=f"iter_{ref.iter}/{ref.spec_id}" if ref else None,
        meta_model=scope.meta_model, eval_model=scope.config.eval.model,
        simulated=scope.simulated,
    )  # fmt: skip


def _apply(scope: Scope, reply: Distillation) -> tuple[list[str], list[str], list[str]]:
    book = Knowledge(scope.wd.knowledge)
    knowledge = [
        book.append(
            k.text,
            origin=f"iter {scope.n}, distill",
            supersedes=k.supersedes,
            by=scope.provenance(),
        ).id
        for k in reply.knowledge_add
    ]
    added = []
    for h in reply.hypotheses_add:
        hid = scope.add_hypothesis(h, "distill")
        added.append(hid)
    removed = []
    for r in reply.hypotheses_remove:
        append_line(
            scope.wd.hypotheses,
            HypothesisEvent(
                op="remove",
                id=r.id,
                iter=scope.n,
                by="distill",
                reason=r.reason,
                meta_model=scope.meta_model,
                simulated=scope.simulated,
            ),
        )
        removed.append(r.id)
    return knowledge, added, removed
