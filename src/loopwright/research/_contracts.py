"""The six hard contracts of the research loop (docs/research.md), checked over a working directory's committed records.

`research status` prints the result; the tests assert it. Each check reads only what is on
disk, so it also audits a directory written by another process or version.
"""

from __future__ import annotations

from dataclasses import dataclass

from loopwright.errors import ConfigError
from loopwright.research._config import WorkDir
from loopwright.research._goal import load_goal
from loopwright.research._journal import REFUTING, Experience, read_lines
from loopwright.research._knowledge import check_append_only
from loopwright.research._memory import Memory, shared_axes
from loopwright.research._record import IterRecord
from loopwright.research._state import read_run_state

__all__ = ["CONTRACTS", "ContractResult", "check_contracts"]

CONTRACTS = (
    "goal required",
    "every committed iteration has THINK + EXPERIMENT + DISTILL",
    "skip and block commit as experiments",
    "knowledge.md is append-only",
    "workspace untouched mid-iteration; one overlay per spec",
    "SKIP_THINK_EMPTY never terminates; every spec has an axis; axis-jump rule",
)


@dataclass(frozen=True, slots=True)
class ContractResult:
    number: int
    name: str
    ok: bool
    detail: str


def check_contracts(wd: WorkDir) -> list[ContractResult]:
    """One result per hard contract, in order."""
    memory = Memory.load(wd)
    records = memory.records
    experience = read_lines(wd.experience, Experience)
    checks = (
        _goal(wd),
        _triple(wd, records),
        _skips(records, experience, wd.load_config().caps.smoke_attempts),
        _append_only(wd, records),
        _workspace(wd, records),
        _think_empty(wd, records, wd.load_config().reflect.axis_window),
    )
    return [
        ContractResult(i, name, problem is None, problem or "holds")
        for i, (name, problem) in enumerate(zip(CONTRACTS, checks, strict=True), 1)
    ]


def _goal(wd: WorkDir) -> str | None:
    try:
        load_goal(wd.goal)
    except ConfigError as exc:
        return exc.what
    return None


def _triple(wd: WorkDir, records: list[IterRecord]) -> str | None:
    for r in records:
        where = wd.iter_dir(r.iter)
        if r.think.calls < 1 or not r.specs:
            return f"iter {r.iter}: no THINK call or no spec"
        if not (where / "spec.json").is_file() or not (where / "distill_summary.json").is_file():
            return f"iter {r.iter}: spec.json or distill_summary.json missing"
        for s in r.specs:
            sid = s.spec.spec_id
            if not (where / f"distill_{sid}.json").is_file():
                return f"iter {r.iter}: spec {sid} has no distill_{sid}.json"
            e = s.experiment
            if e.outcome_class == "measured" and (
                e.runs < 1 or not e.eval_metadata or not (where / e.eval_metadata).is_file()
            ):
                return f"iter {r.iter}: measured spec {sid} has no runs or eval_metadata"
    return None


def _skips(records: list[IterRecord], experience: list[Experience], attempts: int) -> str | None:
    logged = {(e.iter, e.spec_id): e for e in experience}
    for r in records:
        for s in r.specs:
            kind = s.experiment.outcome_class
            line = logged.get((r.iter, s.spec.spec_id))
            if line is None:
                return f"iter {r.iter} {s.spec.spec_id}: no experience line"
            if kind == "measured":
                continue
            if line.outcome_class != kind or line.verdict not in REFUTING:
                return f"iter {r.iter} {s.spec.spec_id}: {kind} not logged as a refuted data point"
            smoke = s.experiment.smoke
            if kind == "implementer_skip" and (
                len(smoke) > attempts or any(a.passed for a in smoke)
            ):
                return f"iter {r.iter} {s.spec.spec_id}: implementer_skip with a passed or extra attempt"
            if kind == "critic_block" and (
                len(s.critic) != 2 or s.critic[-1].verdict != "BLOCK" or s.spec.rebuttal
            ):
                return f"iter {r.iter} {s.spec.spec_id}: critic_block without a round-2 BLOCK"
    return None


def _append_only(wd: WorkDir, records: list[IterRecord]) -> str | None:
    for r in records:
        problem = check_append_only(wd.knowledge, r.knowledge)
        if problem:
            return f"knowledge.md is append-only, but since iter {r.iter} {problem}"
    return None


def _workspace(wd: WorkDir, records: list[IterRecord]) -> str | None:
    for r in records:
        if r.workspace_digest_start != r.workspace_digest_precommit:
            return f"iter {r.iter}: workspace/ changed during the iteration"
        overlays = [s.experiment.overlay for s in r.specs if s.experiment.overlay]
        if len(set(overlays)) != len(overlays):
            return f"iter {r.iter}: specs share an overlay"
        for s in r.specs:
            o = s.experiment.overlay
            if o and (
                o != f"active_workspace_{s.spec.spec_id}" or not (wd.iter_dir(r.iter) / o).is_dir()
            ):
                return f"iter {r.iter}: spec {s.spec.spec_id} has no overlay of its own"
    return None


def _think_empty(wd: WorkDir, records: list[IterRecord], window: int) -> str | None:
    state = read_run_state(wd)
    if state.status == "saturated" and (
        state.saturated_by is None or state.saturated_by.verdict != "SPACE_EXHAUSTED"
    ):
        return "the run is SATURATED without a REFLECT SPACE_EXHAUSTED"
    if state.status == "terminated" and not state.reason.startswith("goal.md Termination"):
        return f"the run terminated for another reason than goal.md: {state.reason}"
    for i, r in enumerate(records):
        if any(not s.spec.intervention_axis for s in r.specs):
            return f"iter {r.iter}: a spec without intervention_axis"
        shared = shared_axes(records[:i], window)
        on = [s.spec.spec_id for s in r.specs if s.spec.intervention_axis in shared]
        if on and not r.think.rebuttal:
            return f"iter {r.iter}: specs {on} stay on shared axes {shared} without a rebuttal"
    return None
