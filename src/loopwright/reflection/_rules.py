"""The offline reflector's rules: a ReflectionReport body derived from the digest alone.

Used with the `sim` model (no meta model to ask) and as the fallback when the meta model's
replies fail validation. Every rule is a plain reading of the digest; docs/reflection.md lists
them with their thresholds. `MARGIN` is the smallest difference in mean partial credit that a
contrast must show to count as evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from loopwright.reflection._digest import Candidate, Contrast, ExhaustDigest, FeedbackRow
from loopwright.reflection._features import LESSON_PREFIX, writers
from loopwright.reflection._parts import part_recommendations
from loopwright.reflection._report import (
    Evidence,
    MutationSuggestion,
    Pattern,
    PromptImprovement,
    ReflectionBody,
    StructuralRecommendation,
)
from loopwright.reflection._taxonomy import lesson_head, write_feedback_lesson, write_lesson
from loopwright.reflection._validate import ACTION_OPERATORS
from loopwright.workflow import AgentNode, Workflow, prompt_lessons

__all__ = ["GATE_LOOPS", "KNOWLEDGE_KINDS", "MARGIN", "PRIOR_CONFIDENCE", "offline_body"]

MARGIN = 0.05
PRIOR_CONFIDENCE = 0.4
GATE_LOOPS = 3
"""RELOOPs allowed by a gate the rules suggest: the most gate_add draws. The gate is there to
repair runs that ended with failing tests; each loop is one more repair attempt and costs only
when the visible tests fail."""
KNOWLEDGE_KINDS = frozenset({"signatures", "imports", "completeness", "edge_cases"})
"""Failure kinds that come from not knowing the task well enough: a study step addresses them."""
CHECKABLE_CATEGORIES = frozenset({"tests_failing", "regression", "import_error", "syntax_error"})
"""Run outcomes a gate that runs the visible tests can catch (some of the time)."""
_MAX_KINDS = 3
_MAX_LESSON = 500
_MAX_FEEDBACK = 2
"""Tasks whose evaluator feedback becomes a pattern and a lesson (the most frequent ones)."""


def _confidence(contrast: Contrast) -> float:
    """How far a contrast supports acting on it: its effect's size (0.5 + 5|effect|, at most 1)
    times the support of its smaller side, m / (m + 1) for m candidates (one against one: 0.5,
    three against three: 0.75), since one candidate against one is one comparison, whatever
    the size of the gap. Deterministic."""
    strength = min(1.0, 0.5 + 5 * abs(contrast.effect))
    m = min(len(contrast.with_ids), len(contrast.without_ids))
    return round(max(0.05, strength * m / (m + 1)), 3)


def _lesson_confidence(runs: int) -> float:
    """A one-sentence lesson is a nudge whose effect nothing has measured yet: at most half
    the weight of a structural change backed by a strong contrast."""
    return round(min(0.5, 0.2 + 0.05 * runs), 3)


def _contrast(digest: ExhaustDigest, feature: str) -> Contrast | None:
    return next((c for c in digest.contrasts if c.feature == feature), None)


def _ev(cands: Sequence[str], tasks: Sequence[str], count: int, detail: str = "") -> Evidence:
    return Evidence(
        candidates=sorted(set(cands)),
        tasks=sorted(set(tasks)),
        count=max(1, count),
        detail=detail[:400],
    )


class _Reader:
    """Facts about the generation the rules share: runs, categories, the main builder."""

    def __init__(self, digest: ExhaustDigest, cands: Sequence[Candidate]) -> None:
        self.digest = digest
        self.cands = cands
        self.runs = [(c.id, r) for c in cands for r in c.records]
        self.unresolved = [(cid, r) for cid, r in self.runs if r.failure_category != "none"]
        ranked = sorted(
            (d for d in digest.candidates if d.mean_score is not None),
            key=lambda d: (-(d.mean_score or 0.0), d.id),
        )
        self.best_id = ranked[0].id if ranked else (cands[0].id if cands else "")
        self.best = next((c.workflow for c in cands if c.id == self.best_id), None)

    def with_feature(self, feature: str) -> list[str]:
        return [d.id for d in self.digest.candidates if feature in d.features]

    def main_writer(self) -> str | None:
        """The most common id of a non-frozen file-writing agent of role builder (any
        file-writing agent when none is a builder), preferring the best candidate's."""
        counts: Counter[str] = Counter()
        for cand in self.cands:
            for w in writers(cand.workflow):
                if w.id not in cand.workflow.frozen:
                    counts[w.id] += 2 if w.role == "builder" else 1
        if self.best is not None:
            for w in writers(self.best):
                if w.id not in self.best.frozen and w.role == "builder":
                    return w.id
        return max(sorted(counts), key=counts.__getitem__) if counts else None


def _failure_patterns(rd: _Reader) -> list[Pattern]:
    out = []
    by_cat: dict[str, list[tuple[str, str]]] = {}
    for cid, record in rd.unresolved:
        by_cat.setdefault(str(record.failure_category), []).append((cid, record.task_id))
    for cat, cat_rows in sorted(by_cat.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        out.append(
            Pattern(
                description=f"{len(cat_rows)} of {len(rd.runs)} runs ended unresolved as {cat}",
                kind=cat,
                evidence=_ev([c for c, _ in cat_rows], [t for _, t in cat_rows], len(cat_rows)),
            )
        )
    groups: dict[tuple[str, str], list[tuple[str, int, list[str], str | None]]] = {}
    for cand in rd.digest.candidates:
        for node in cand.nodes:
            for err in node.errors:
                groups.setdefault((err.text, node.node_id), []).append(
                    (cand.id, err.count, err.tasks, err.kind)
                )
    ranked = sorted(groups.items(), key=lambda kv: (-sum(x[1] for x in kv[1]), kv[0]))
    for (text, node_id), rows in ranked[:5]:
        count = sum(x[1] for x in rows)
        kind = rows[0][3] or ""
        out.append(
            Pattern(
                description=f"at {node_id}: {text} ({count}x)"
                + (f", a {kind} failure" if kind else ""),
                kind=kind,
                evidence=_ev([x[0] for x in rows], [t for x in rows for t in x[2]], count, text),
            )
        )
    out += _feedback_patterns(rd)
    for cand in rd.digest.candidates:
        for loop in cand.reloops:
            if loop.exhausted:
                out.append(
                    Pattern(
                        description=f"gate {loop.gate} of {cand.id} ran out of RELOOPs in "
                        f"{loop.exhausted} of {loop.runs} runs",
                        kind="reloop_exhausted",
                        evidence=_ev([cand.id], [], loop.exhausted),
                    )
                )
    return out


def _top_feedback(rd: _Reader) -> list[tuple[str, FeedbackRow]]:
    """(task id, row) for the most frequent evaluator feedback of each task, most runs first
    (at most _MAX_FEEDBACK)."""
    rows = [(t.task_id, t.feedback[0]) for t in rd.digest.tasks if t.feedback]
    return sorted(rows, key=lambda tr: (-tr[1].runs, tr[0]))[:_MAX_FEEDBACK]


def _feedback_patterns(rd: _Reader) -> list[Pattern]:
    """What the tasks' evaluator functions said about unresolved runs, quoted."""
    return [
        Pattern(
            description=f"the evaluator of {task_id} said of {row.runs} unresolved "
            f"run{'s' if row.runs != 1 else ''} (mean score {row.mean_score:.2f}): {row.text}",
            kind="evaluator_feedback",
            evidence=_ev(row.candidates, [task_id], row.runs, row.text),
        )
        for task_id, row in _top_feedback(rd)
    ]


def _success_patterns(rd: _Reader) -> list[Pattern]:
    out = []
    for c in rd.digest.contrasts:
        if c.effect >= MARGIN:
            out.append(
                Pattern(
                    description=c.text,
                    kind="lesson" if c.feature.startswith(LESSON_PREFIX) else c.feature,
                    evidence=_ev(c.with_ids, [], c.with_runs, c.text),
                )
            )
    for cand in rd.digest.candidates:
        for loop in cand.reloops:
            if loop.helped:
                out.append(
                    Pattern(
                        description=f"gate {loop.gate} of {cand.id}: a RELOOP to {loop.reloop_to} "
                        f"led to passing visible tests in {loop.helped} of {loop.runs} runs",
                        kind="reloop_helped",
                        evidence=_ev([cand.id], [], loop.helped),
                    )
                )
    best = rd.digest.candidate(rd.best_id)
    if best is not None and best.resolved:
        tasks = [t.task_id for t in best.tasks if t.resolved]
        out.append(
            Pattern(
                description=f"{best.id} ({best.structure}) resolved {best.resolved} of "
                f"{best.runs} runs, mean partial credit {best.mean_score}",
                kind="best_candidate",
                evidence=_ev([best.id], tasks, best.resolved),
            )
        )
    return out


def _unresolved_kinds(rd: _Reader) -> set[str]:
    return set(rd.digest.failure_kinds)


def _structural(rd: _Reader, target: str) -> list[tuple[StructuralRecommendation, float, str]]:
    """(recommendation, confidence, suggestion kind) for study, gate and removals."""
    out: list[tuple[StructuralRecommendation, float, str]] = []
    failing = [cid for cid, _ in rd.unresolved]
    failing_tasks = [r.task_id for _, r in rd.unresolved]
    study = _contrast(rd.digest, "study")
    if study is not None and study.effect >= MARGIN:
        ev = _ev(study.with_ids, [], study.with_runs, study.text)
        out.append(
            (
                _rec("insert_node", target, "researcher", study.text, ev),
                _confidence(study),
                "insert_researcher",
            )
        )
    elif not rd.with_feature("study") and _unresolved_kinds(rd) & KNOWLEDGE_KINDS:
        kinds = sorted(_unresolved_kinds(rd) & KNOWLEDGE_KINDS)
        why = f"no candidate studies the task first, and unresolved runs show {', '.join(kinds)} failures"
        ev = _ev(failing, failing_tasks, len(failing), why)
        out.append(
            (
                _rec("insert_node", target, "researcher", why, ev),
                PRIOR_CONFIDENCE,
                "insert_researcher",
            )
        )
    gate = _contrast(rd.digest, "reloop_gate")
    helped = [(d.id, lp.helped) for d in rd.digest.candidates for lp in d.reloops if lp.helped]
    gated = set(rd.with_feature("reloop_gate"))
    checkable = [
        (cid, r)
        for cid, r in rd.unresolved
        if r.failure_category in CHECKABLE_CATEGORIES and cid not in gated
    ]
    if gate is not None and gate.effect >= MARGIN:
        ev = _ev(gate.with_ids, [], gate.with_runs, gate.text)
        out.append((_rec("add_gate", target, None, gate.text, ev), _confidence(gate), "add_gate"))
    elif helped and (gate is None or gate.effect > -MARGIN):
        why = f"RELOOPs led to passing visible tests in {sum(h for _, h in helped)} runs"
        ev = _ev([c for c, _ in helped], [], sum(h for _, h in helped), why)
        out.append((_rec("add_gate", target, None, why, ev), 0.6, "add_gate"))
    elif checkable and not any(
        lp.runs_with_reloop for d in rd.digest.candidates for lp in d.reloops
    ):
        # no gate ever sent a run back: the gate contrast (if any) measured nothing about RELOOP
        why = f"no candidate re-ran its builder on failing tests, and {len(checkable)} runs ended with failing tests"
        ev = _ev([c for c, _ in checkable], [r.task_id for _, r in checkable], len(checkable), why)
        out.append((_rec("add_gate", target, None, why, ev), PRIOR_CONFIDENCE, "add_gate"))
    out += _removals(rd)
    removed = {rec.target for rec, _, _ in out if rec.action == "remove_node"}
    for rec, conf, kind in part_recommendations(rd.digest, rd.cands, target):
        if rec.action == "remove_node" and rec.target in removed:
            continue  # a contrast already asks to remove it
        out.append((rec, conf, kind))
    return out


def _rec(
    action: str, target: str, role: str | None, why: str, ev: Evidence
) -> StructuralRecommendation:
    return StructuralRecommendation.model_validate(
        {"action": action, "target": target, "role": role, "rationale": why[:500], "evidence": ev}
    )


def _removals(rd: _Reader) -> list[tuple[StructuralRecommendation, float, str]]:
    out: list[tuple[StructuralRecommendation, float, str]] = []
    for c in rd.digest.contrasts:
        if c.effect > -MARGIN or not c.feature.startswith("role:"):
            continue
        role = c.feature.removeprefix("role:")
        ids: Counter[str] = Counter(
            n.id
            for cand in rd.cands
            if cand.id in c.with_ids
            for n in cand.workflow.nodes
            if isinstance(n, AgentNode) and n.role == role and n.id not in cand.workflow.frozen
        )
        if ids:
            node_id = max(sorted(ids), key=ids.__getitem__)
            ev = _ev(c.with_ids, [], c.with_runs, c.text)
            rec = _rec("remove_node", node_id, None, c.text, ev)
            out.append((rec, _confidence(c), f"remove_{role}"))
    return out


def _prompt_improvements(rd: _Reader) -> list[tuple[PromptImprovement, float]]:
    """Lessons for the best candidate's writer prompts, both read from the exhaust: every
    lesson whose contrast shows it helped (measured), then, for the most frequent failure
    kinds, a lesson quoting what the runs showed, for each writer with no lesson on that kind."""
    if rd.best is None:
        return []
    return (
        _measured_lessons(rd, rd.best) + _feedback_lessons(rd, rd.best) + _kind_lessons(rd, rd.best)
    )


def _feedback_lessons(rd: _Reader, best: Workflow) -> list[tuple[PromptImprovement, float]]:
    """A lesson quoting what a task's evaluator function said about unresolved runs, for each
    writer of the best candidate whose prompt does not carry it yet."""
    out = []
    for task_id, row in _top_feedback(rd):
        text = write_feedback_lesson(row.text, row.runs)
        for agent in writers(best):
            if agent.id in best.frozen or text in agent.prompt:
                continue
            ev = _ev(row.candidates, [task_id], row.runs, row.text)
            imp = PromptImprovement(target=agent.id, kind="feedback", text=text, evidence=ev)
            out.append((imp, _lesson_confidence(row.runs)))
    return out


def _measured_lessons(rd: _Reader, best: Workflow) -> list[tuple[PromptImprovement, float]]:
    out = []
    for c in rd.digest.contrasts:
        if c.effect < MARGIN or not c.feature.startswith(LESSON_PREFIX):
            continue
        text = c.feature.removeprefix(LESSON_PREFIX)
        if len(text) > _MAX_LESSON:
            continue  # longer than a suggestion's rationale can carry
        for agent in writers(best):
            if agent.id in best.frozen or text in prompt_lessons(agent.prompt):
                continue
            ev = _ev(c.with_ids, [], c.with_runs, c.text)
            imp = PromptImprovement(target=agent.id, kind="measured", text=text, evidence=ev)
            out.append((imp, min(0.6, _confidence(c))))
    return out


def _kind_lessons(rd: _Reader, best: Workflow) -> list[tuple[PromptImprovement, float]]:
    kinds = sorted(rd.digest.failure_kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:_MAX_KINDS]
    out = []
    for kind, count in kinds:
        open_writers = [
            w
            for w in writers(best)
            if w.id not in best.frozen and lesson_head(kind) not in w.prompt
        ]
        if not open_writers:
            continue
        tasks, cands = _where_kind(rd, kind)
        message, test_id = _example(rd.digest, kind)
        text = write_lesson(kind, count, message, test_id)
        for agent in open_writers:
            ev = _ev(cands, tasks, count, f"{count} unresolved runs show {kind} failures")
            imp = PromptImprovement(target=agent.id, kind=kind, text=text, evidence=ev)
            out.append((imp, _lesson_confidence(count)))
    return out


def _example(digest: ExhaustDigest, kind: str) -> tuple[str, str]:
    """The most frequent failing test of `kind` in the generation (its message and id), else
    the most frequent error message of that kind at any node; ("", "") when there is none."""
    rows = [r for t in digest.tasks for r in t.failing_tests if r.kind == kind and r.message]
    if rows:
        row = min(rows, key=lambda r: (-r.failed, r.test_id))
        return row.message, row.test_id
    groups = [g for c in digest.candidates for n in c.nodes for g in n.errors if g.kind == kind]
    if groups:
        return min(groups, key=lambda g: (-g.count, g.text)).text, ""
    return "", ""


def _where_kind(rd: _Reader, kind: str) -> tuple[list[str], list[str]]:
    tasks, cands = set(), set()
    for cand in rd.digest.candidates:
        for node in cand.nodes:
            for err in node.errors:
                if err.kind == kind:
                    tasks.update(err.tasks)
                    cands.add(cand.id)
    return sorted(tasks), sorted(cands)


def _crossover(rd: _Reader, target: str) -> MutationSuggestion | None:
    """Two candidates each carrying a helpful feature the other lacks: combine them."""
    good = [
        c
        for c in rd.digest.contrasts
        if c.effect >= MARGIN and not c.feature.startswith(LESSON_PREFIX)
    ]
    for i, a in enumerate(good):
        for b in good[i + 1 :]:
            only_a = set(a.with_ids) - set(b.with_ids)
            only_b = set(b.with_ids) - set(a.with_ids)
            if only_a and only_b:
                why = f"{a.feature} and {b.feature} each helped, in different candidates"
                ev = _ev([min(only_a), min(only_b)], [], a.with_runs + b.with_runs, why)
                return MutationSuggestion(
                    operator="crossover",
                    target=target,
                    kind="crossover",
                    rationale=why,
                    confidence=0.6,
                    evidence=ev,
                )
    return None


def offline_body(digest: ExhaustDigest, candidates: Sequence[Candidate]) -> ReflectionBody:
    """The report body the rules derive from `digest` (deterministic). See docs/reflection.md."""
    rd = _Reader(digest, candidates)
    target = rd.main_writer()
    structural = _structural(rd, target) if target else []
    improvements = _prompt_improvements(rd)
    suggestions = [
        MutationSuggestion(
            operator=ACTION_OPERATORS[rec.action],
            target=rec.target,
            kind=kind,
            rationale=rec.rationale,
            confidence=conf,
            role=rec.role,
            max_loops=GATE_LOOPS if rec.action == "add_gate" else None,
            evidence=rec.evidence,
        )
        for rec, conf, kind in structural
    ]
    suggestions += [
        MutationSuggestion(
            operator="prompt_mutate",
            target=imp.target,
            kind=f"prompt_{imp.kind}",
            rationale=imp.text,
            confidence=conf,
            evidence=imp.evidence,
        )
        for imp, conf in improvements
    ]
    cross = _crossover(rd, target) if target else None
    if cross is not None:
        suggestions.append(cross)
    return ReflectionBody(
        failure_patterns=_failure_patterns(rd),
        success_patterns=_success_patterns(rd),
        mutation_suggestions=suggestions,
        prompt_improvements=[imp for imp, _ in improvements],
        structural_recommendations=[rec for rec, _, _ in structural],
    )
