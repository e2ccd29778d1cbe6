"""The failure category of a run: one rule per category, tried in priority order.

The order follows the run's timeline, earliest point of failure first, so the category names
the cause rather than a consequence of it: the grade must be a measurement; the run must not
break or be stopped from outside; the agents must read the task; they must finish within their
time and turn budgets; they must change something; the change must load (syntax, then
imports); it must not break what worked (regression); then it must make the new tests pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loopwright.records._record import FailureCategory, GradeSummary, RunStatus, StepStatus

__all__ = ["FailureEvidence", "categorize_failure"]

_SYNTAX_MARKERS = ("SyntaxError", "IndentationError", "TabError")
_IMPORT_MARKERS = ("ImportError", "ModuleNotFoundError")


@dataclass(frozen=True, slots=True)
class FailureEvidence:
    """What categorisation looks at, gathered from one run directory.

    `node_statuses` holds every visit's status (agent, fn and gate nodes). `broke` is true when
    the runner or a node reported an error (an error event from `runner` or `node`, a node
    ending with status `error`, or run_end status `error`). `agents_ran` is true when any
    agent node started; `read_instruction` when a successful tool call of an agent node named
    instruction.md; `changed` when the workspace diff (or, without diff.patch, a node's
    produced files) is non-empty.
    """

    grade: GradeSummary | None
    run_status: RunStatus
    node_statuses: tuple[StepStatus, ...]
    broke: bool
    agents_ran: bool
    read_instruction: bool
    changed: bool


def _resolved(e: FailureEvidence) -> bool:
    return e.grade is not None and not e.grade.invalid and e.grade.resolved


def _invalid_grade(e: FailureEvidence) -> bool:
    return e.grade is not None and e.grade.invalid


def _interrupted(e: FailureEvidence) -> bool:
    # With a grade, every agent had finished (grading follows the agents): the run is complete.
    return e.grade is None and e.run_status == "interrupted"


def _did_not_read(e: FailureEvidence) -> bool:
    return e.agents_ran and not e.read_instruction


def _timed_out(e: FailureEvidence) -> bool:
    return e.run_status == "timeout" or "timeout" in e.node_statuses


def _collection_mentions(e: FailureEvidence, markers: tuple[str, ...]) -> bool:
    errors = e.grade.collection_errors if e.grade else []
    return any(marker in error for error in errors for marker in markers)


def _import_error(e: FailureEvidence) -> bool:
    if e.grade is None:
        return False
    all_missing = bool(e.grade.tests) and all(t.outcome == "missing" for t in e.grade.tests)
    return all_missing or _collection_mentions(e, _IMPORT_MARKERS)


_RULES: tuple[tuple[FailureCategory, Callable[[FailureEvidence], bool]], ...] = (
    (FailureCategory.NONE, _resolved),
    (FailureCategory.INVALID_GRADE, _invalid_grade),
    (FailureCategory.AGENT_ERROR, lambda e: e.broke),
    (FailureCategory.INTERRUPTED, _interrupted),
    (FailureCategory.DID_NOT_READ_TASK, _did_not_read),
    (FailureCategory.RUN_TIMEOUT, _timed_out),
    (FailureCategory.MAX_TURNS, lambda e: "max_turns" in e.node_statuses),
    (FailureCategory.NO_CHANGE, lambda e: not e.changed),
    # Nothing below can be judged without a grade: a missing one is no measurement.
    (FailureCategory.INVALID_GRADE, lambda e: e.grade is None),
    (FailureCategory.SYNTAX_ERROR, lambda e: _collection_mentions(e, _SYNTAX_MARKERS)),
    (FailureCategory.IMPORT_ERROR, _import_error),
    (
        FailureCategory.REGRESSION,
        lambda e: e.grade is not None and e.grade.p2p_passed < e.grade.p2p_total,
    ),
)


def categorize_failure(evidence: FailureEvidence) -> FailureCategory:
    """The first category in priority order whose rule holds. Deterministic, never raises.

    A valid, unresolved grade with no earlier cause has a failing fail_to_pass or
    pass_to_pass test by definition; what is left after `regression` is `tests_failing`.
    """
    for category, rule in _RULES:
        if rule(evidence):
            return category
    return FailureCategory.TESTS_FAILING
