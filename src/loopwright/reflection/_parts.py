"""Rules that read what each part of a workflow did in its runs, not only what it scored.

The contrast rules (`_rules`) compare candidates with and without a feature; on a small
generation they are often silent or confounded. These rules read the node traces of each run
instead, and suggest adding or removing one part:

- **idle part** (`remove_idle`): a file-writing agent other than the main writer that changed no
  workspace file in any of its runs (at least IDLE_MIN_RUNS) cost tokens and did nothing a
  grade can see. Stronger when some of those runs ended unresolved (it had something to fix
  and fixed nothing) than when every run was resolved anyway (then only its cost speaks).
- **costly part without effect** (`prune_<role>`): an agent role whose contrast shows no effect
  either way (|effect| < MARGIN, at least PRUNE_MIN_RUNS runs on each side) while it takes at
  least PRUNE_COST_SHARE of its candidates' dollars: dropping it should keep the score and
  save its cost.
- **hidden miss** (`insert_fixer`, `insert_test_writer`): runs where a gate let the work
  through (its last decision PROCEED: the visible checks passed) yet the hidden tests failed.
  The visible tests miss what is wrong, so a gate cannot repair it: a reviewer that may edit
  (`fixer`) can, and tests written from the instruction first make the visible tests stricter.

Every rule reads only the candidates' workflows and their training records (node traces,
gate decisions, grades, costs), never node ids or names as meaning, nor the model.
Deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from loopwright.records import CycleRecord
from loopwright.reflection._digest import Candidate, ExhaustDigest
from loopwright.reflection._features import writers
from loopwright.reflection._report import Evidence, StructuralRecommendation
from loopwright.workflow import AgentNode, GateNode, Workflow

__all__ = [
    "FIXER_ROLE",
    "IDLE_MIN_RUNS",
    "PRUNE_COST_SHARE",
    "PRUNE_MIN_RUNS",
    "hidden_misses",
    "part_recommendations",
]

IDLE_MIN_RUNS = 2
"""Runs a file-writing agent must have had, none of them changing a file, to count as idle."""
PRUNE_MIN_RUNS = 3
"""Runs on each side of a role's contrast before "no effect" counts as evidence."""
PRUNE_COST_SHARE = 0.15
"""The share of its candidates' dollars a role must take for a no-effect contrast to prune it."""
FIXER_ROLE = "fixer"
"""The role-library name of a reviewer that may edit (search/mutations/_roles.py)."""
_MARGIN = 0.05  # the contrast rules' MARGIN (kept in step by a test)

Rec = tuple[StructuralRecommendation, float, str]


@dataclass(frozen=True, slots=True)
class _Usage:
    """One node id over every run that visited it: runs, runs that changed a file, unresolved."""

    runs: int = 0
    wrote: int = 0
    unresolved: int = 0
    candidates: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()


def _rec(
    action: str, target: str, role: str | None, why: str, ev: Evidence
) -> StructuralRecommendation:
    return StructuralRecommendation.model_validate(
        {"action": action, "target": target, "role": role, "rationale": why[:500], "evidence": ev}
    )


def _ev(cands: Sequence[str], tasks: Sequence[str], count: int, detail: str) -> Evidence:
    return Evidence(
        candidates=sorted(set(cands)), tasks=sorted(set(tasks)), count=max(1, count),
        detail=detail[:400],
    )  # fmt: skip


def _unresolved(record: CycleRecord) -> bool:
    return record.failure_category != "none"


def _usage(cands: Sequence[Candidate], main: str) -> dict[str, _Usage]:
    """Per node id: the file-writing agents (not the main writer, not frozen) over their runs."""
    out: dict[str, _Usage] = {}
    for cand in cands:
        ids = {w.id for w in writers(cand.workflow) if w.id != main}
        ids -= set(cand.workflow.frozen)
        for record in cand.records:
            if not record.valid:
                continue
            for node_id in sorted(ids):
                trace = record.node_trace.get(node_id)
                if trace is None or trace.fired == 0:
                    continue
                u = out.get(node_id, _Usage())
                out[node_id] = _Usage(
                    u.runs + 1, u.wrote + bool(trace.produced),
                    u.unresolved + _unresolved(record),
                    (*u.candidates, cand.id), (*u.tasks, record.task_id),
                )  # fmt: skip
    return out


def idle_parts(cands: Sequence[Candidate], main: str) -> list[Rec]:
    """`remove_idle` for each file-writing agent that changed no file in any of its runs."""
    out: list[Rec] = []
    for node_id, u in sorted(_usage(cands, main).items()):
        if u.runs < IDLE_MIN_RUNS or u.wrote:
            continue
        why = (
            f"{node_id} changed no workspace file in any of its {u.runs} runs"
            + (f", {u.unresolved} of which ended unresolved" if u.unresolved else "")
            + ": it costs tokens and does nothing a grade can see"
        )
        conf = 0.7 if u.unresolved else 0.35
        ev = _ev(u.candidates, u.tasks, u.runs, why)
        out.append((_rec("remove_node", node_id, None, why, ev), conf, "remove_idle"))
    return out


def costly_without_effect(
    digest: ExhaustDigest, cands: Sequence[Candidate], main: str
) -> list[Rec]:
    """`prune_<role>` for each role whose contrast shows no effect while it costs a share."""
    out: list[Rec] = []
    for c in digest.contrasts:
        if not c.feature.startswith("role:") or abs(c.effect) >= _MARGIN:
            continue
        if min(c.with_runs, c.without_runs) < PRUNE_MIN_RUNS:
            continue
        role = c.feature.removeprefix("role:")
        with_ = [d for d in digest.candidates if d.id in c.with_ids]
        total = sum(d.cost_usd or 0.0 for d in with_)
        spent = sum(d.cost_by_role.get(role, 0.0) for d in with_)
        if total <= 0 or spent / total < PRUNE_COST_SHARE:
            continue
        node_id = _node_of_role(cands, c.with_ids, role, main)
        if node_id is None:
            continue
        why = (
            f"{c.text}: no effect either way, while the {role} takes "
            f"{spent / total:.0%} of those candidates' dollars"
        )
        ev = _ev(c.with_ids, [], c.with_runs, why)
        out.append((_rec("remove_node", node_id, None, why, ev), 0.45, f"prune_{role}"))
    return out


def _node_of_role(
    cands: Sequence[Candidate], ids: Sequence[str], role: str, main: str
) -> str | None:
    counts: Counter[str] = Counter(
        n.id
        for cand in cands
        if cand.id in ids
        for n in cand.workflow.nodes
        if isinstance(n, AgentNode) and n.role == role and n.id not in cand.workflow.frozen
        and n.id != main
    )  # fmt: skip
    return max(sorted(counts), key=counts.__getitem__) if counts else None


def _passed_gate(record: CycleRecord, wf: Workflow) -> bool:
    """True when some gate's last decision in the run was PROCEED."""
    for node in wf.nodes:
        trace = record.node_trace.get(node.id)
        if (
            isinstance(node, GateNode)
            and trace is not None
            and trace.decisions
            and trace.decisions[-1].decision == "proceed"
        ):
            return True
    return False


def hidden_misses(cands: Sequence[Candidate]) -> list[tuple[str, str]]:
    """(candidate id, task id) of every valid run a gate let through that ended unresolved."""
    return [
        (cand.id, r.task_id)
        for cand in cands
        for r in cand.records
        if r.valid and r.grade is not None and _unresolved(r) and _passed_gate(r, cand.workflow)
    ]


def _hidden_miss(cands: Sequence[Candidate], main: str) -> list[Rec]:
    misses = hidden_misses(cands)
    if not misses:
        return []
    n = len(misses)
    why = (
        f"in {n} runs a gate let the work through (the visible checks passed) but the hidden "
        "tests failed: the visible tests miss what is wrong, so a reviewer that may edit, or "
        "tests written from the instruction first, can catch what a gate cannot"
    )
    ev = _ev([c for c, _ in misses], [t for _, t in misses], n, why)
    conf = round(min(0.8, 0.4 + 0.1 * n), 3)
    return [
        (_rec("insert_node", main, FIXER_ROLE, why, ev), conf, "insert_fixer"),
        (_rec("insert_node", main, "test_writer", why, ev), round(conf / 2, 3),
         "insert_test_writer"),
    ]  # fmt: skip


def part_recommendations(digest: ExhaustDigest, cands: Sequence[Candidate], main: str) -> list[Rec]:
    """Every part rule's (recommendation, confidence, suggestion kind), in the order of the
    module docstring. A role the run's vocabulary lacks is dropped later, by `check_body`."""
    return (
        idle_parts(cands, main)
        + costly_without_effect(digest, cands, main)
        + _hidden_miss(cands, main)
    )
