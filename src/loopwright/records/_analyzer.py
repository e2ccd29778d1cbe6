"""CycleAnalyzer: a task-run directory in, a CycleRecord out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypedDict

from loopwright.errors import ConfigError
from loopwright.records._events import EVENTS_FILE, read_events
from loopwright.records._failure import FailureEvidence, categorize_failure
from loopwright.records._grade import GRADE_FILE, read_grade
from loopwright.records._record import (
    RECORD_FILE,
    AgentStep,
    CycleRecord,
    ExperimentRecord,
    FailureCategory,
    GradeSummary,
    RunStatus,
)
from loopwright.records._trace import RunTrace, agent_steps, fold_events, node_traces

__all__ = ["DIFF_FILE", "CycleAnalyzer"]

DIFF_FILE = "diff.patch"
_BROKEN = (FailureCategory.AGENT_ERROR, FailureCategory.INTERRUPTED)


class _Identity(TypedDict):
    run_id: str
    task_id: str
    task_digest: str
    workflow_name: str
    workflow_hash: str
    model: str
    simulated: bool
    seed: int
    repetition: int
    started_at: str


class _Totals(TypedDict):
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    total_cost_usd: float | None
    cost_by_agent: dict[str, float]


class CycleAnalyzer:
    """Reads one task-run directory (events.jsonl, grade.json, diff.patch, ...) into a CycleRecord.

    Tolerates what a crash leaves: a truncated last events line, no run_end (run_status
    `interrupted`), no grade.json (grade None), no diff.patch. Reads only; never writes.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def analyze(
        self, *, frozen_nodes: Iterable[str] = (), mutable_node_ids: Iterable[str] = ()
    ) -> CycleRecord:
        """Build the run's CycleRecord. Deterministic: the same files give the same record.

        `frozen_nodes` and `mutable_node_ids` come from the workflow (events do not carry it);
        they are stored sorted. Raises ConfigError naming the file when events.jsonl is missing,
        has an invalid line before its last, or does not begin with run_start, and when
        grade.json has another schema_version or grades another task (see `read_grade`).
        """
        trace = self._trace()
        grade, grade_problem = read_grade(self.run_dir / GRADE_FILE, trace.start.task_id)
        steps = agent_steps(trace)
        diff_files, changed = self._diff(steps)
        run_status: RunStatus = trace.end.status if trace.end else "interrupted"
        category = categorize_failure(_evidence(trace, grade, run_status, changed))
        score_end = grade.score if grade else 0.0
        return CycleRecord(
            **_identity(trace),
            **_totals(trace),
            run_status=run_status,
            run_error=trace.end.error if trace.end else None,
            score_start=0.0,
            score_end=score_end,
            score_delta=score_end - 0.0,
            steps=steps,
            node_trace=node_traces(trace),
            gate_loops={g: ds[-1].loop_count for g, ds in trace.decisions.items()},
            grade=grade,
            failure_category=category,
            read_instruction=any(s.read_instruction for s in steps),
            diff_files=diff_files,
            errors=_errors(trace, grade_problem),
            eval_artifacts=self._artifacts(),
            duration_s=trace.end.duration_s if trace.end else trace.last_t,
            experiments=[_experiment(trace, score_end, category)],
            frozen_nodes=sorted(set(frozen_nodes)),
            mutable_node_ids=sorted(set(mutable_node_ids)),
        )

    def _trace(self) -> RunTrace:
        path = self.run_dir / EVENTS_FILE
        if not path.is_file():
            raise ConfigError(
                f"{path} does not exist",
                fix="pass the directory of one task run (it holds events.jsonl)",
            )
        return fold_events(read_events(path), path)

    def _diff(self, steps: Sequence[AgentStep]) -> tuple[list[str], bool]:
        """Files named in diff.patch, and whether anything changed. Without diff.patch, the
        files the nodes say they produced stand in for it."""
        path = self.run_dir / DIFF_FILE
        if not path.is_file():
            return [], any(s.produced for s in steps)
        text = path.read_text(encoding="utf-8", errors="replace")
        return diff_files(text), bool(text.strip())

    def _artifacts(self) -> list[str]:
        return sorted(
            p.relative_to(self.run_dir).as_posix()
            for p in self.run_dir.rglob("*")
            if p.is_file() and p.name != RECORD_FILE and not p.name.startswith(f".{RECORD_FILE}")
        )


def diff_files(patch: str) -> list[str]:
    """The paths a git patch touches (the new path of a rename), sorted, as git spells them."""
    files: set[str] = set()
    for line in patch.splitlines():
        if not line.startswith("diff --git "):
            continue
        rest = line.removeprefix("diff --git ")
        half, odd = divmod(len(rest) - 5, 2)  # "a/" + P + " b/" + P
        if not odd and rest[2 : 2 + half] == rest[5 + half :] and rest.startswith("a/"):
            files.add(rest[2 : 2 + half])
        elif " b/" in rest:
            files.add(rest.rsplit(" b/", 1)[1])
    return sorted(files)


def _identity(trace: RunTrace) -> _Identity:
    s = trace.start
    return _Identity(
        run_id=s.run_id,
        task_id=s.task_id,
        task_digest=s.task_digest,
        workflow_name=s.workflow_name,
        workflow_hash=s.workflow_hash,
        model=s.model,
        simulated=s.simulated,
        seed=s.seed,
        repetition=s.repetition,
        started_at=s.started_at,
    )


def _evidence(
    trace: RunTrace, grade: GradeSummary | None, run_status: RunStatus, changed: bool
) -> FailureEvidence:
    statuses = tuple(v.status for v in trace.visits.values())
    broke = (
        "error" in statuses
        or run_status == "error"
        or any(e.where == "runner" for e in trace.errors)
    )
    agents = [v for v in trace.visits.values() if v.kind == "agent"]
    return FailureEvidence(
        grade=grade,
        run_status=run_status,
        node_statuses=statuses,
        broke=broke,
        agents_ran=bool(agents),
        read_instruction=any(v.read_instruction for v in agents),
        changed=changed,
    )


def _totals(trace: RunTrace) -> _Totals:
    """Token sums over every model call, and known costs by role (node id when a node has no role): a
    role with any unpriced call is left out, and the total is None when any call is unpriced."""
    by_agent: dict[str, float] = {}
    unknown: set[str] = set()
    for visit in trace.visits.values():
        key = visit.role or visit.node_id
        for call in visit.calls:
            if call.cost_usd is None:
                unknown.add(key)
            else:
                by_agent[key] = by_agent.get(key, 0.0) + call.cost_usd
    known = {k: v for k, v in sorted(by_agent.items()) if k not in unknown}
    calls = [c for v in trace.visits.values() for c in v.calls]
    return _Totals(
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        cached_tokens=sum(c.cached_tokens for c in calls),
        total_cost_usd=None if unknown else sum(known.values()),
        cost_by_agent=known,
    )


def _errors(trace: RunTrace, grade_problem: str | None) -> list[str]:
    """Error messages in the order first seen, identical ones grouped as "(xN)"."""
    messages: list[str] = []
    for event in trace.errors:
        where = f"{event.where} {event.node_id}" if event.node_id else event.where
        messages.append(f"{where}: {event.message}")
    for visit in trace.visits.values():
        if visit.end is None:
            messages.append(f"node {visit.node_id} attempt {visit.attempt}: unfinished")
        elif visit.end.error:
            name = f"node {visit.node_id} attempt {visit.attempt}"
            messages.append(f"{name} {visit.end.status}: {visit.end.error}")
    if trace.end is not None and trace.end.error:
        messages.append(f"run {trace.end.status}: {trace.end.error}")
    if grade_problem:
        messages.append(f"grade: {grade_problem}")
    counts = Counter(messages)
    ordered = dict.fromkeys(messages)
    return [m if counts[m] == 1 else f"{m} (x{counts[m]})" for m in ordered]


def _experiment(trace: RunTrace, score_end: float, category: FailureCategory) -> ExperimentRecord:
    s = trace.start
    return ExperimentRecord(
        id=s.run_id,
        description=f"workflow {s.workflow_name} ({s.workflow_hash}) on task {s.task_id}, "
        f"repetition {s.repetition}, model {s.model}" + (" (simulated)" if s.simulated else ""),
        score_before=0.0,
        score_after=score_end,
        verdict="errored" if category in _BROKEN else "pending",
        failure_category=category,
    )
