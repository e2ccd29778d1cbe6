"""`research status`: the trajectory, the verdicts, what was learned, and the contracts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from loopwright.research._budget import run_spend
from loopwright.research._config import ResearchConfig, WorkDir
from loopwright.research._constraints import parse_directives
from loopwright.research._context import Rules
from loopwright.research._contracts import check_contracts
from loopwright.research._goal import load_goal
from loopwright.research._holdout import HoldoutCheck, overfit_of, read_checks
from loopwright.research._knowledge import Bullet, Knowledge
from loopwright.research._memory import Memory
from loopwright.research._record import IterRecord
from loopwright.research._state import read_run_state
from loopwright.research._workspace import Workspace
from loopwright.store import is_simulated

__all__ = ["ContractRow", "IterRow", "SpecRow", "StatusReport", "research_status"]

LEARNED_SHOWN = 10


class _S(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SpecRow(_S):
    spec_id: str
    axis: str
    scale: str
    title: str
    critic: str
    outcome: str
    verdict: str
    delta: float | None


class IterRow(_S):
    iter: int
    specs: tuple[SpecRow, ...]
    score_before: float | None
    score_after: float | None
    adopted: str | None
    reflect: tuple[str, ...]
    rebuttal: bool
    wall_s: float


class ContractRow(_S):
    number: int
    name: str
    ok: bool
    detail: str


class StatusReport(_S):
    """What `research status --json` prints. `max_usd` is the run's dollar budget (None:
    none); `spent_usd` the run's spend (docs/research.md, "Dollar budget"), `offline_usd` the
    part of it at simulated prices. `holdout` the holdout task ids, `holdout_checks` every
    holdout check (docs/research.md, "Holdout"), `overfit` the latest check's signal (None
    before any). Schema 2 added the holdout fields."""

    schema_version: int = 2
    dir: str
    goal: str
    status: str
    reason: str
    simulated: bool
    meta_model: str
    eval_model: str
    workflow: str
    tasks: tuple[str, ...]
    committed: int
    workspace_score: float | None
    workspace_source: str
    iterations: tuple[IterRow, ...]
    learned: tuple[str, ...]
    hypotheses: tuple[str, ...]
    axes: tuple[str, ...]
    frontier: tuple[str, ...]
    contracts: tuple[ContractRow, ...]
    max_usd: float | None = None
    spent_usd: float = 0.0
    offline_usd: float = 0.0
    holdout: tuple[str, ...] = ()
    holdout_checks: tuple[HoldoutCheck, ...] = ()
    overfit: bool | None = None


def research_status(root: Path) -> StatusReport:
    """Read a working directory into a StatusReport. ConfigError when it is not one."""
    wd = WorkDir(root)
    config = wd.load_config()
    memory = Memory.load(wd)
    state = read_run_state(wd)
    spend = run_spend(wd)
    ws = Workspace(wd.workspace).state()
    d = parse_directives(wd.constraints.read_text(encoding="utf-8"))
    rules = Rules(forbid_axes=d.forbid_axes, forbid_operators=d.forbid_operators)
    rows = tuple(
        IterRow(
            iter=r.iter,
            specs=tuple(
                SpecRow(
                    spec_id=s.spec.spec_id, axis=s.spec.intervention_axis, scale=s.spec.scale,
                    title=s.spec.title, critic="/".join(c.verdict for c in s.critic) or "-",
                    outcome=s.experiment.outcome_class, verdict=s.distill.verdict,
                    delta=s.experiment.delta,
                )
                for s in r.specs
            ),
            score_before=r.summary.score_before, score_after=r.summary.score_after,
            adopted=r.summary.adopted,
            reflect=tuple(f"{b.trigger}: {b.verdict}" for b in r.reflect),
            rebuttal=bool(r.think.rebuttal), wall_s=r.wall_s,
        )
        for r in memory.records
    )  # fmt: skip
    learned = tuple(f"{b.id} ({b.origin}) {b.text}" for b in _learned(memory))
    checks = read_checks(wd)
    return StatusReport(
        dir=str(root), goal=load_goal(wd.goal).ultimate, status=state.status, reason=state.reason,
        simulated=_simulated(config, memory.records),
        meta_model=_used(config.meta_model, [r.meta_model for r in memory.records]),
        eval_model=_used(config.eval.model, [r.eval_model for r in memory.records]),
        workflow=config.workflow,
        tasks=config.eval.tasks, committed=len(memory.records), workspace_score=ws.score(),
        workspace_source=ws.source, iterations=rows, learned=learned,
        hypotheses=tuple(f"{h.id} (iter {h.iter}) {h.text}" for h in memory.hypotheses()),
        axes=tuple(f"{a.name}: {a.status}" for a in memory.axis_views(rules)),
        frontier=memory.frontier(rules),
        contracts=tuple(
            ContractRow(number=c.number, name=c.name, ok=c.ok, detail=c.detail)
            for c in check_contracts(wd)
        ),
        max_usd=config.max_usd, spent_usd=spend.total_usd, offline_usd=spend.offline_usd,
        holdout=config.eval.holdout, holdout_checks=tuple(checks), overfit=overfit_of(checks),
    )  # fmt: skip


def _learned(memory: Memory) -> list[Bullet]:
    current = [b for b in Knowledge(memory.wd.knowledge).current() if b.origin != "seed"]
    return list(current[-LEARNED_SHOWN:])


def _simulated(config: ResearchConfig, records: Sequence[IterRecord]) -> bool:
    """What the committed iterations ran on, when there are any (`research run` may override
    the models `research init` wrote); before the first, what config.yaml names."""
    if records:
        return any(r.simulated for r in records)
    return config.meta_model == "sim" or is_simulated(config.eval.model)


def _used(configured: str, used: Sequence[str]) -> str:
    """The models the committed iterations used, in first-use order ("a, b"), else the
    configured one."""
    return ", ".join(dict.fromkeys(used)) or configured
