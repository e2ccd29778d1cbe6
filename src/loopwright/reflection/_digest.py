"""The exhaust digest: a generation's CycleRecords as compact, deterministic facts.

The meta model reads this, not megabytes of events. Per candidate: its structure and features,
scores per task, per node the visits, statuses, failure categories, error messages grouped by
normalised text, tokens, cost and time; RELOOP usage and whether it helped; cost, tokens and
time per role. Across the generation: failing tests per task, what a task's evaluator function
said about unresolved runs (its feedback), failure kinds, and contrasts of mean partial credit with and without each structural feature. `fit_digest` (in `_cap`) keeps it
under a size cap and lists what it left out. Only training records go in (the engine's choice):
holdout results never reach reflection, so they cannot steer the search.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from pydantic import BaseModel, ConfigDict, Field

from loopwright.records import CycleRecord
from loopwright.reflection._features import (
    feature_label,
    structure_line,
    workflow_features,
    writers,
)
from loopwright.reflection._taxonomy import KIND_OF_CATEGORY, message_kind, normalise_message
from loopwright.workflow import Workflow

__all__ = [
    "DIGEST_SCHEMA_VERSION",
    "Candidate",
    "CandidateDigest",
    "Contrast",
    "ErrorGroup",
    "ExhaustDigest",
    "FeedbackRow",
    "NodeDigest",
    "ReloopDigest",
    "TaskDigest",
    "TaskOutcome",
    "TestRow",
    "build_digest",
]

DIGEST_SCHEMA_VERSION = 2
"""2 added `TaskDigest.feedback` (what a task's evaluator function said)."""
FEEDBACK_ROW_CHARS = 300
"""The most of one evaluator feedback a digest row quotes (whitespace collapsed)."""
MAX_FEEDBACK_ROWS = 5
"""Distinct feedback texts a task's digest keeps (the most frequent)."""


@dataclass(frozen=True)
class Candidate:
    """One member of a generation as reflection sees it: its id, workflow, how it was made,
    and its training CycleRecords (may be empty: never evaluated). `run_dirs`, when given,
    holds each record's run directory (same order as `records`): the exhaust the agent
    reflector reads with its tools (events.jsonl, grade.json, diff.patch, notes.md)."""

    id: str
    workflow: Workflow
    records: tuple[CycleRecord, ...]
    operator: str = "seed"
    parents: tuple[str, ...] = ()
    run_dirs: tuple[Path, ...] = ()


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ErrorGroup(_Frozen):
    """Messages with the same normalised text: how often, on which tasks, which failure kind."""

    text: str
    count: int = Field(ge=1)
    tasks: list[str]
    kind: str | None


class NodeDigest(_Frozen):
    """One node of one candidate over all its runs."""

    node_id: str
    kind: str
    role: str
    visits: int
    statuses: dict[str, int]
    failure_categories: dict[str, int] = Field(
        description="runs that ended unresolved with this node as the last agent, by category"
    )
    errors: list[ErrorGroup]
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    duration_s: float


class ReloopDigest(_Frozen):
    """A gate's RELOOPs over a candidate's runs; `helped` counts runs where a RELOOP was
    followed by a passing PROCEED, `exhausted` runs where the gate ran out of loops."""

    gate: str
    reloop_to: str
    max_loops: int
    runs: int
    runs_with_reloop: int
    loops_taken: int
    helped: int
    exhausted: int


class TaskOutcome(_Frozen):
    """One candidate on one task, over repetitions."""

    task_id: str
    runs: int
    mean_score: float
    resolved: int
    categories: dict[str, int]


class CandidateDigest(_Frozen):
    """One candidate: structure, scores and per-node exhaust."""

    id: str
    operator: str
    parents: list[str]
    structure: str
    features: list[str]
    frozen: list[str]
    runs: int
    mean_score: float | None = Field(description="mean partial credit over valid runs")
    resolved: int
    cost_usd: float | None
    tasks: list[TaskOutcome]
    nodes: list[NodeDigest]
    reloops: list[ReloopDigest]
    cost_by_role: dict[str, float]
    tokens_by_role: dict[str, int]
    seconds_by_role: dict[str, float]


class TestRow(_Frozen):
    """A test that failed in at least one run of the generation."""

    __test__ = False  # not a pytest test class

    test_id: str
    fail_to_pass: bool
    failed: int
    runs: int
    candidates: list[str]
    message: str
    kind: str | None


class FeedbackRow(_Frozen):
    """What a task's evaluator function said (`GradeSummary.feedback`) about unresolved runs:
    one distinct text (whitespace collapsed, cut to FEEDBACK_ROW_CHARS), how many runs got it,
    from which candidates, their mean score, and the failure kind the text shows."""

    text: str
    runs: int = Field(ge=1)
    candidates: list[str]
    mean_score: float
    kind: str | None


class TaskDigest(_Frozen):
    """One task across the generation: mean score, the tests that failed and what its
    evaluator function said about unresolved runs (empty for test-graded tasks)."""

    task_id: str
    runs: int
    mean_score: float | None
    failing_tests: list[TestRow]
    feedback: list[FeedbackRow] = Field(default_factory=list)


class Contrast(_Frozen):
    """Mean partial credit of runs of candidates with and without a feature."""

    feature: str
    text: str
    with_ids: list[str]
    without_ids: list[str]
    with_mean: float
    without_mean: float
    with_runs: int
    without_runs: int

    @property
    def effect(self) -> float:
        return self.with_mean - self.without_mean


class ExhaustDigest(_Frozen):
    """A generation's exhaust as facts (schema_version 2). `omitted` says what the size cap
    left out; `failure_kinds` counts unresolved runs' messages by kind."""

    schema_version: int = DIGEST_SCHEMA_VERSION
    generation: int
    simulated: bool
    n_candidates: int
    n_runs: int
    candidates: list[CandidateDigest]
    tasks: list[TaskDigest]
    contrasts: list[Contrast]
    failure_kinds: dict[str, int]
    omitted: list[str] = Field(default_factory=list)

    def candidate(self, cand_id: str) -> CandidateDigest | None:
        return next((c for c in self.candidates if c.id == cand_id), None)


# -- building -----------------------------------------------------------------------------------

_E_LINE = re.compile(r"^E\s+(\S.*)$", re.MULTILINE)
_ERROR_WORDS = re.compile(r"Error|Exception|assert", re.IGNORECASE)
_WHERE = re.compile(r"^(\w+) ([A-Za-z_][\w-]*): ")


def _mean(values: Sequence[float]) -> float | None:
    return round(fmean(values), 4) if values else None


def _valid(record: CycleRecord) -> bool:
    return record.valid


def _last_writer(record: CycleRecord, writer_ids: set[str]) -> str | None:
    """The node whose code was graded: the last step of a file-writing agent, else the last step."""
    for step in reversed(record.steps):
        if step.node_id in writer_ids:
            return step.node_id
    return record.steps[-1].node_id if record.steps else None


def _messages(record: CycleRecord, writer_ids: set[str]) -> list[tuple[str, str, str]]:
    """(node id or 'run', raw message, test id) for every failure message of one run."""
    out: list[tuple[str, str, str]] = []
    for step in record.steps:
        if step.error:
            out.append((step.node_id, step.error, ""))
    for text in record.errors:
        if text.startswith("node "):
            continue  # the step's own error, already taken above
        where = _WHERE.match(text)
        node = where.group(2) if where and where.group(2) in record.node_trace else "run"
        out.append((node, text, ""))
    for trace in record.node_trace.values():
        for decision in trace.decisions:
            if decision.decision != "proceed" and decision.target:
                lines = [ln for ln in _E_LINE.findall(decision.reason) if _ERROR_WORDS.search(ln)]
                out.extend((decision.target, line, "") for line in lines[:3])
    graded = _last_writer(record, writer_ids) or "run"
    if record.grade is not None:
        for test in record.grade.tests:
            if not test.passed:
                out.append((graded, test.message or f"{test.outcome} (no message)", test.id))
        for error in record.grade.collection_errors:
            out.append((graded, error, ""))
    return out


def _error_groups(rows: list[tuple[str, str, str]]) -> list[ErrorGroup]:
    """rows of (task id, raw message, test id) grouped by normalised text, most frequent first."""
    counts: Counter[str] = Counter()
    tasks: dict[str, set[str]] = defaultdict(set)
    kinds: dict[str, str | None] = {}
    for task_id, raw, test_id in rows:
        text = normalise_message(raw)
        if not text:
            continue
        counts[text] += 1
        tasks[text].add(task_id)
        kinds.setdefault(text, message_kind(raw, test_id))
    order = sorted(counts, key=lambda t: (-counts[t], t))
    return [
        ErrorGroup(text=t, count=counts[t], tasks=sorted(tasks[t]), kind=kinds[t]) for t in order
    ]


def _nodes(cand: Candidate) -> list[NodeDigest]:
    writer_ids = {w.id for w in writers(cand.workflow)}
    msgs: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    cats: dict[str, Counter[str]] = defaultdict(Counter)
    for record in cand.records:
        for where, raw, test_id in _messages(record, writer_ids):
            msgs[where].append((record.task_id, raw, test_id))
        if record.failure_category != "none" and record.steps:
            cats[record.steps[-1].node_id][str(record.failure_category)] += 1
    out = []
    for node in cand.workflow.nodes:
        traces = [r.node_trace[node.id] for r in cand.records if node.id in r.node_trace]
        steps = [s for r in cand.records for s in r.steps if s.node_id == node.id]
        costs = [s.cost_usd for s in steps]
        out.append(
            NodeDigest(
                node_id=node.id,
                kind=node.kind,
                role=getattr(node, "role", ""),
                visits=sum(t.fired for t in traces),
                statuses=dict(sorted(Counter(s for t in traces for s in t.statuses).items())),
                failure_categories=dict(sorted(cats[node.id].items())),
                errors=_error_groups(msgs[node.id]),
                input_tokens=sum(s.input_tokens for s in steps),
                output_tokens=sum(s.output_tokens for s in steps),
                cost_usd=None
                if any(c is None for c in costs)
                else round(sum(c or 0 for c in costs), 6),
                duration_s=round(sum(t.duration_s for t in traces), 3),
            )
        )
    if msgs.get("run"):
        out.append(_run_level(msgs["run"]))
    return out


def _run_level(rows: list[tuple[str, str, str]]) -> NodeDigest:
    return NodeDigest(
        node_id="run",
        kind="run",
        role="",
        visits=0,
        statuses={},
        failure_categories={},
        errors=_error_groups(rows),
        input_tokens=0,
        output_tokens=0,
        cost_usd=0.0,
        duration_s=0.0,
    )


def _reloops(cand: Candidate) -> list[ReloopDigest]:
    out = []
    for node in cand.workflow.nodes:
        if node.kind != "gate":
            continue
        runs = with_reloop = taken = helped = exhausted = 0
        for record in cand.records:
            trace = record.node_trace.get(node.id)
            if trace is None:
                continue
            runs += 1
            decisions = [d.decision for d in trace.decisions]
            loops = decisions.count("reloop")
            taken += loops
            with_reloop += loops > 0
            exhausted += "exhausted" in decisions
            helped += loops > 0 and any(
                d.decision == "proceed" and d.passed for d in trace.decisions
            )
        out.append(
            ReloopDigest(
                gate=node.id,
                reloop_to=node.reloop_to,
                max_loops=node.max_loops,
                runs=runs,
                runs_with_reloop=with_reloop,
                loops_taken=taken,
                helped=helped,
                exhausted=exhausted,
            )
        )
    return out


def _by_role(cand: Candidate) -> tuple[dict[str, float], dict[str, int], dict[str, float]]:
    cost: dict[str, float] = defaultdict(float)
    tokens: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    for record in cand.records:
        for role, usd in record.cost_by_agent.items():
            cost[role] += usd
        for step in record.steps:
            tokens[step.role] += step.input_tokens + step.output_tokens
            seconds[step.role] += step.duration_s
    return (
        {k: round(v, 6) for k, v in sorted(cost.items())},
        dict(sorted(tokens.items())),
        {k: round(v, 3) for k, v in sorted(seconds.items())},
    )


def _task_outcomes(cand: Candidate) -> list[TaskOutcome]:
    grouped: dict[str, list[CycleRecord]] = defaultdict(list)
    for record in cand.records:
        grouped[record.task_id].append(record)
    return [
        TaskOutcome(
            task_id=task_id,
            runs=len(recs),
            mean_score=_mean([r.score_end for r in recs if _valid(r)]) or 0.0,
            resolved=sum(1 for r in recs if r.failure_category == "none"),
            categories=dict(sorted(Counter(str(r.failure_category) for r in recs).items())),
        )
        for task_id, recs in sorted(grouped.items())
    ]


def _candidate(cand: Candidate) -> CandidateDigest:
    cost, tokens, seconds = _by_role(cand)
    costs = [r.total_cost_usd for r in cand.records]
    return CandidateDigest(
        id=cand.id,
        operator=cand.operator,
        parents=list(cand.parents),
        structure=structure_line(cand.workflow),
        features=list(workflow_features(cand.workflow)),
        frozen=list(cand.workflow.frozen),
        runs=len(cand.records),
        mean_score=_mean([r.score_end for r in cand.records if _valid(r)]),
        resolved=sum(1 for r in cand.records if r.failure_category == "none"),
        cost_usd=None if any(c is None for c in costs) else round(sum(c or 0 for c in costs), 6),
        tasks=_task_outcomes(cand),
        nodes=_nodes(cand),
        reloops=_reloops(cand),
        cost_by_role=cost,
        tokens_by_role=tokens,
        seconds_by_role=seconds,
    )


def _tasks(candidates: Sequence[Candidate]) -> list[TaskDigest]:
    runs: dict[str, list[CycleRecord]] = defaultdict(list)
    tests: dict[str, dict[str, list[tuple[str, bool, str, bool]]]] = defaultdict(dict)
    for cand in candidates:
        for record in cand.records:
            runs[record.task_id].append(record)
            for test in record.grade.tests if record.grade else []:
                seen_rows = tests[record.task_id].setdefault(test.id, [])
                seen_rows.append((cand.id, test.passed, test.message, test.fail_to_pass))
    out = []
    for task_id in sorted(runs):
        rows: list[TestRow] = []
        for test_id, seen in sorted(tests[task_id].items()):
            failed = [s for s in seen if not s[1]]
            if not failed:
                continue
            raw = next((s[2] for s in failed if s[2]), "")
            rows.append(
                TestRow(
                    test_id=test_id,
                    fail_to_pass=failed[0][3],
                    failed=len(failed),
                    runs=len(seen),
                    candidates=sorted({s[0] for s in failed}),
                    message=normalise_message(raw),
                    kind=message_kind(raw, test_id),
                )
            )
        rows.sort(key=lambda r: (-r.failed, r.test_id))
        valid = [r.score_end for r in runs[task_id] if _valid(r)]
        out.append(
            TaskDigest(
                task_id=task_id,
                runs=len(runs[task_id]),
                mean_score=_mean(valid),
                failing_tests=rows,
                feedback=_feedback(candidates, task_id),
            )
        )
    return out


def _feedback(candidates: Sequence[Candidate], task_id: str) -> list[FeedbackRow]:
    """The distinct feedback texts the evaluator gave unresolved valid runs of `task_id`, most
    frequent first (MAX_FEEDBACK_ROWS of them)."""
    seen: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for cand in candidates:
        for record in cand.records:
            grade = record.grade
            if record.task_id != task_id or grade is None or grade.invalid or grade.resolved:
                continue
            text = " ".join(grade.feedback.split())[:FEEDBACK_ROW_CHARS]
            if text:
                seen[text].append((cand.id, record.score_end))
    order = sorted(seen, key=lambda t: (-len(seen[t]), t))[:MAX_FEEDBACK_ROWS]
    return [
        FeedbackRow(
            text=text,
            runs=len(seen[text]),
            candidates=sorted({c for c, _ in seen[text]}),
            mean_score=round(fmean(score for _, score in seen[text]), 4),
            kind=message_kind(text),
        )
        for text in order
    ]


def _contrasts(
    candidates: Sequence[Candidate], digests: Sequence[CandidateDigest]
) -> list[Contrast]:
    scored = [
        (d, [r.score_end for r in c.records if _valid(r)])
        for c, d in zip(candidates, digests, strict=True)
    ]
    scored = [(d, s) for d, s in scored if s]
    features = sorted({f for d, _ in scored for f in d.features})
    out = []
    for feature in features:
        with_ = [(d, s) for d, s in scored if feature in d.features]
        without = [(d, s) for d, s in scored if feature not in d.features]
        if not with_ or not without:
            continue
        w_scores = [x for _, s in with_ for x in s]
        o_scores = [x for _, s in without for x in s]
        w_mean, o_mean = fmean(w_scores), fmean(o_scores)
        text = (
            f"candidates with {feature_label(feature)}: {w_mean:.2f} mean partial credit "
            f"(n={len(with_)} candidates, {len(w_scores)} runs), without: {o_mean:.2f} "
            f"(n={len(without)} candidates, {len(o_scores)} runs)"
        )
        out.append(
            Contrast(
                feature=feature,
                text=text,
                with_ids=[d.id for d, _ in with_],
                without_ids=[d.id for d, _ in without],
                with_mean=round(w_mean, 4),
                without_mean=round(o_mean, 4),
                with_runs=len(w_scores),
                without_runs=len(o_scores),
            )
        )
    out.sort(key=lambda c: (-abs(c.effect), c.feature))
    return out


def _failure_kinds(candidates: Sequence[Candidate]) -> dict[str, int]:
    kinds: Counter[str] = Counter()
    for cand in candidates:
        writer_ids = {w.id for w in writers(cand.workflow)}
        for record in cand.records:
            if record.failure_category == "none":
                continue
            seen = {message_kind(raw, test) for _, raw, test in _messages(record, writer_ids)}
            category_kind = KIND_OF_CATEGORY.get(str(record.failure_category))
            seen.add(category_kind)
            kinds.update(k for k in seen if k is not None)
    return dict(sorted(kinds.items()))


def build_digest(generation: int, candidates: Sequence[Candidate]) -> ExhaustDigest:
    """The full digest of one generation (no size cap; see `fit_digest`). Candidates keep the
    order given; everything inside is sorted, so the same records give the same digest."""
    digests = [_candidate(c) for c in candidates]
    records = [r for c in candidates for r in c.records]
    return ExhaustDigest(
        generation=generation,
        simulated=any(r.simulated for r in records),
        n_candidates=len(candidates),
        n_runs=len(records),
        candidates=digests,
        tasks=_tasks(candidates),
        contrasts=_contrasts(candidates, digests),
        failure_kinds=_failure_kinds(candidates),
    )
