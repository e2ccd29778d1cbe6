"""The research loop: termination poll, REFLECT, THINK, CRITIC, EXPERIMENT, DISTILL, commit.

`ResearchLoop.run` drives iterations until the goal's Termination holds, REFLECT declares the
space exhausted (SATURATED), THINK stays empty (stalled), the dollar budget is spent (budget),
or the invocation's iteration budget is spent (paused). Each iteration reads as its steps in
`_iteration`. Nothing under iteration/ or workspace/ changes before the commit's single rename;
workspace/ is then reconciled. The dollar budget is checked before each iteration; an
iteration during which the gateway began refusing calls (the ledger reached the budget) is
discarded, not committed, and runs again as its next attempt when the budget is raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from loopwright.errors import ConfigError
from loopwright.models import ChatModel, label_scope
from loopwright.research._budget import check_budget, run_spend
from loopwright.research._config import WorkDir
from loopwright.research._constraints import parse_directives
from loopwright.research._context import Rules
from loopwright.research._goal import load_goal, termination_hit
from loopwright.research._holdout import Holdout, HoldoutCheck
from loopwright.research._knowledge import Knowledge, check_append_only
from loopwright.research._memory import Memory
from loopwright.research._meta import MetaClient
from loopwright.research._record import (
    IterRecord,
    IterSummary,
    ReflectBlock,
    SpecBlock,
    ThinkBlock,
    commit,
)
from loopwright.research._scope import Listener, LoopEvent, Scope
from loopwright.research._state import (
    RunState,
    discard_attempt,
    read_run_state,
    reconcile,
    recover,
    write_run_state,
)
from loopwright.research._workspace import Workspace, WorkspaceState, failures_from
from loopwright.research.phases._critic import Vetted, run_critic
from loopwright.research.phases._distill import DistillResult, run_distill
from loopwright.research.phases._experiment import EvalBench, ExperimentOutcome, run_experiment
from loopwright.research.phases._reflect import reflect_trigger, run_reflect
from loopwright.research.phases._think import ThinkOutcome, run_think
from loopwright.workflow import Workflow, workflow_hash

__all__ = ["ResearchLoop", "RunOutcome"]

StopStatus = Literal["paused", "terminated", "saturated", "stalled", "budget"]


@dataclass(frozen=True)
class RunOutcome:
    """How an invocation of `run` ended, and the iterations it committed; with a dollar
    budget, the budget (`max_usd`) and the run's whole spend when it ended (`spent_usd`)."""

    status: StopStatus
    reason: str
    committed: tuple[int, ...]
    max_usd: float | None = None
    spent_usd: float | None = None


class _Stop(Exception):
    def __init__(
        self,
        status: StopStatus,
        reason: str,
        reflect: ReflectBlock | None = None,
        next_attempt: int | None = None,
    ) -> None:
        super().__init__(reason)
        self.status: StopStatus = status
        self.reason = reason
        self.reflect = reflect
        self.next_attempt = next_attempt


class ResearchLoop:
    """One working directory's loop. `meta` answers the meta phases; `bench` measures.
    `max_usd` replaces the config's dollar budget from this run on (written to config.yaml
    when `run` starts; None keeps the config's). ConfigError when it is not positive.
    `should_stop` is asked before each iteration: when it answers True, `run` ends there with
    status `paused` (the iterations committed so far are kept; run again to go on)."""

    def __init__(
        self,
        root: Path,
        meta: ChatModel,
        bench: EvalBench,
        listener: Listener | None = None,
        *,
        max_usd: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        check_budget(max_usd)
        self.wd = WorkDir(root)
        self.config = self.wd.load_config()
        self.meta = meta
        self.bench = bench
        self.emit: Listener = listener or (lambda event: None)
        self.max_usd = max_usd
        self.should_stop = should_stop or (lambda: False)
        self.holdout = Holdout(self.wd, self.config, bench)

    def run(self, max_iterations: int | None = None) -> RunOutcome:
        """Run up to `max_iterations` iterations (None: until the goal stops the run)."""
        with self.wd.lifecycle.reopen(), label_scope(run=self.wd.root.name):  # ledger rows' run
            self._set_budget()
            state = read_run_state(self.wd)
            if state.status == "saturated":
                return self._outcome("saturated", state.reason, [])
            done: list[int] = []
            while max_iterations is None or len(done) < max_iterations:
                if self.should_stop():
                    return self._stopped(done)
                n, attempt, note = recover(self.wd)
                if note:
                    self.emit(LoopEvent("resumed", n, note))
                try:
                    self._iteration(n, attempt)
                except _Stop as stop:
                    if stop.status in ("saturated", "stalled"):  # refused calls, if any, say why
                        stop = self._refused(n, attempt) or stop
                    write_run_state(
                        self.wd,
                        RunState(status=stop.status, reason=stop.reason, iteration=n,
                                 attempt=stop.next_attempt or attempt, saturated_by=stop.reflect),
                    )  # fmt: skip
                    self.emit(LoopEvent("stopped", n, f"{stop.status}: {stop.reason}"))
                    if stop.status != "budget":  # a spent budget refuses the holdout's calls
                        self._final_holdout(n)
                    return self._outcome(stop.status, stop.reason, done)
                done.append(n)
            n = len(self.wd.committed()) + 1
            write_run_state(
                self.wd, RunState(status="paused", reason="iteration budget spent", iteration=n)
            )
            self._final_holdout(n - 1)
            return self._outcome("paused", f"ran {len(done)} iteration(s) as asked", done)

    def _stopped(self, done: list[int]) -> RunOutcome:
        """`should_stop` answered True between iterations: paused, resumable by a new run."""
        n = len(self.wd.committed()) + 1
        reason = "stopped by should_stop"
        write_run_state(self.wd, RunState(status="paused", reason=reason, iteration=n))
        self.emit(LoopEvent("stopped", n, f"paused: {reason}"))
        return self._outcome("paused", f"{reason} after {len(done)} iteration(s)", done)

    def _set_budget(self) -> None:
        """Write a new dollar budget to config.yaml (under the run lock)."""
        if self.max_usd is not None and self.max_usd != self.config.max_usd:
            self.config = self.config.model_copy(update={"max_usd": self.max_usd})
            self.wd.write_config(self.config)

    def _outcome(self, status: StopStatus, reason: str, done: list[int]) -> RunOutcome:
        budget = self.config.max_usd
        spent = run_spend(self.wd).total_usd if budget is not None else None
        return RunOutcome(status, reason, tuple(done), max_usd=budget, spent_usd=spent)

    # -- the dollar budget ----------------------------------------------------------------------

    def _check_budget(self) -> None:
        """Stop before an iteration starts when the run's whole spend has reached the budget."""
        if self.config.max_usd is None:
            return
        spend = run_spend(self.wd)
        if spend.reached(self.config.max_usd):
            raise _Stop("budget", f"dollar budget reached: {spend.line(self.config.max_usd)}")

    def _refused(self, n: int, attempt: int) -> _Stop | None:
        """When the ledger reached the budget during iteration `n` (so the gateway may have
        refused some of its calls), discard the attempt and return the budget stop; else None."""
        if self.config.max_usd is None:
            return None
        spend = run_spend(self.wd)
        if not spend.refusing(self.config.max_usd):
            return None
        discard_attempt(self.wd, n, attempt)
        reason = (
            f"dollar budget reached during iteration {n}: {spend.line(self.config.max_usd)}; "
            f"attempt {attempt} was discarded, not committed"
        )
        return _Stop("budget", reason, next_attempt=attempt + 1)

    # -- one iteration, step by step ----------------------------------------------------------

    def _iteration(self, n: int, attempt: int) -> None:
        started, clock = datetime.now(UTC), time.monotonic()
        scope = self._scope(n, attempt)
        self._poll_termination(scope)
        self._check_budget()
        write_run_state(self.wd, RunState(status="running", iteration=n, attempt=attempt))
        self.emit(LoopEvent("iteration_started", n, f"iteration {n} (attempt {attempt})"))
        scope.staging.mkdir(parents=True, exist_ok=True)
        digest_start = Workspace(self.wd.workspace).digest()
        self._reflect_if_triggered(scope)
        think = run_think(scope)
        if think.envelope is None:
            self._flush_log(scope)
            if think.stop == "saturated":
                raise _Stop(
                    "saturated",
                    "REFLECT: SPACE_EXHAUSTED after THINK escalated",
                    think.stop_reflect,
                )
            raise _Stop("stalled", f"THINK stayed empty after {think.escalations} escalation(s)")
        vetted = run_critic(scope, think.envelope, think)
        experiment = run_experiment(scope, self.bench, vetted)
        distill = run_distill(scope, vetted, experiment)
        record = self._record(
            scope, think, vetted, experiment, distill, started, clock, digest_start
        )
        self._flush_log(scope)
        refused = self._refused(n, attempt)
        if refused is not None:
            raise refused
        self.emit(LoopEvent("commit_ready", n, "committing"))
        commit(scope.staging, self.wd.iter_dir(n), record)
        self.emit(LoopEvent("committed", n, _summary_line(record)))
        reconcile(self.wd)
        if distill.adopted is not None:
            spec = record.specs[[s.spec.spec_id for s in record.specs].index(distill.adopted)]
            self._holdout_check(
                "adoption", n, experiment.workflows[distill.adopted], scope.base,
                spec.experiment.delta,
            )  # fmt: skip

    # -- the holdout (never shown to a meta phase) ------------------------------------------------

    def _holdout_check(
        self,
        kind: Literal["adoption", "final"],
        n: int,
        workflow: Workflow,
        reference: Workflow,
        train_gain: float | None,
    ) -> HoldoutCheck | None:
        if not self.holdout.enabled:
            return None
        self.emit(LoopEvent("holdout", n, f"holdout: measuring ({kind})"))
        check = self.holdout.check(kind, n, workflow, reference, train_gain)
        self.emit(LoopEvent("holdout", n, f"holdout: {check.line()}"))
        return check

    def _final_holdout(self, n: int) -> None:
        """When a run ends with a workspace other than the seed: the workspace against the
        seed on the holdout; the train gain is the workspace's score minus the seed's on the
        pairs of the first adoption."""
        seed = self.holdout.seed_workflow()
        current = Workspace(self.wd.workspace)
        if seed is None or workflow_hash(seed) == current.state().workflow_hash:
            return
        if self.holdout.checked(current.workflow(), seed):
            return
        memory = Memory.load(self.wd)
        first = next((r for r in memory.records if r.summary.adopted), None)
        seed_score = None
        if first is not None:
            spec = next(s for s in first.specs if s.spec.spec_id == first.summary.adopted)
            seed_score = spec.experiment.baseline
        now = current.state().score()
        train = now - seed_score if now is not None and seed_score is not None else None
        self._holdout_check("final", n, current.workflow(), seed, train)

    def _scope(self, n: int, attempt: int) -> Scope:
        memory = Memory.load(self.wd)
        if memory.records:
            problem = check_append_only(self.wd.knowledge, memory.records[-1].knowledge)
            if problem:
                raise ConfigError(
                    f"knowledge.md is append-only, but {problem}",
                    fix="restore knowledge.md's earlier lines (git, a backup); to correct a "
                    "bullet, append one that supersedes it",
                )
        constraints = self.wd.constraints.read_text(encoding="utf-8")
        d = parse_directives(constraints)
        workspace = Workspace(self.wd.workspace)
        base = workspace.workflow()
        return Scope(
            n=n, attempt=attempt, wd=self.wd, config=self.config, goal=load_goal(self.wd.goal),
            constraints=constraints,
            rules=Rules(forbid_axes=d.forbid_axes, forbid_operators=d.forbid_operators,
                        max_nodes=d.max_nodes, protect_nodes=d.protect_nodes),
            memory=memory, meta=MetaClient(self.meta), staging=self.wd.staging(n), base=base,
            base_hash=workflow_hash(base), state=workspace.state(), emit=self.emit,
        )  # fmt: skip

    def _poll_termination(self, scope: Scope) -> None:
        hit = termination_hit(scope.goal, scope.memory.standing(scope.state))
        if hit is not None:
            raise _Stop("terminated", f"goal.md Termination: {hit}")

    def _reflect_if_triggered(self, scope: Scope) -> None:
        r = self.config.reflect
        trigger = reflect_trigger(scope.memory, r.heartbeat_every, r.axis_window)
        if trigger is None:
            return
        block = run_reflect(scope, trigger)
        if block.verdict == "SPACE_EXHAUSTED":
            self._flush_log(scope)
            raise _Stop("saturated", f"REFLECT ({trigger}): SPACE_EXHAUSTED", block)

    def _flush_log(self, scope: Scope) -> None:
        scope.meta.write_log(scope.staging / "meta_calls.jsonl")

    def _record(
        self,
        scope: Scope,
        think: ThinkOutcome,
        vetted: list[Vetted],
        exp: ExperimentOutcome,
        distill: DistillResult,
        started: datetime,
        clock: float,
        digest_start: str,
    ) -> IterRecord:
        assert think.envelope is not None and distill.summary is not None
        calls = scope.meta.calls
        specs = tuple(
            SpecBlock(
                spec=v.spec, revised=v.revised, critic=v.rounds,
                experiment=exp.blocks[v.spec.spec_id], distill=distill.blocks[v.spec.spec_id],
            )
            for v in vetted
        )  # fmt: skip
        measured = [s for s in specs if s.experiment.delta is not None]
        best = max(measured, key=lambda s: s.experiment.delta or 0.0, default=None)
        nxt = _next_state(scope, exp, distill.adopted)
        return IterRecord(
            iter=scope.n, attempt=scope.attempt, started_at=started.isoformat(timespec="seconds"),
            committed_at=datetime.now(UTC).isoformat(timespec="seconds"),
            wall_s=time.monotonic() - clock, cost_usd=exp.cost_usd,
            offline_cost_usd=exp.offline_cost_usd,
            simulated=self.meta.simulated or any(
                r.simulated for rs in exp.records.values() for r in rs
            ),
            meta_model=self.meta.name, eval_model=self.bench.evaluator.settings.model,
            workspace_digest_start=digest_start,
            workspace_digest_precommit=Workspace(self.wd.workspace).digest(),
            knowledge=Knowledge(self.wd.knowledge).digest(),
            think=ThinkBlock(
                status="OK",
                calls=sum(c.phase == "think" for c in calls),
                malformed=sum(c.phase == "think" and not c.ok for c in calls),
                escalations=think.escalations, rebuttal=think.envelope.rebuttal,
                shared_axes=think.shared_axes, frontier=think.frontier,
                reasoning=think.envelope.reasoning,
                hypotheses_added=tuple(think.hypotheses_added),
                knowledge_added=tuple(think.knowledge_added),
                tools_written=tuple(think.tools_written),
            ),
            specs=specs, wave=exp.wave, distill=distill.summary,
            summary=IterSummary(
                specs=len(specs), measured=len(measured),
                implementer_skip=sum(s.experiment.outcome_class == "implementer_skip" for s in specs),
                critic_block=sum(s.experiment.outcome_class == "critic_block" for s in specs),
                axes=tuple(dict.fromkeys(s.spec.intervention_axis for s in specs)),
                best_spec=best.spec.spec_id if best else None,
                best_delta=best.experiment.delta if best else None,
                adopted=distill.adopted, score_before=scope.state.score(), score_after=nxt.score(),
            ),
            reflect=tuple(scope.memory.reflects),
            workspace_next=nxt,
            adopted_workflow=(
                f"active_workspace_{distill.adopted}/workflow.yaml" if distill.adopted else None
            ),
        )  # fmt: skip


def _next_state(scope: Scope, exp: ExperimentOutcome, adopted: str | None) -> WorkspaceState:
    """The workspace state after this iteration (written by reconcile after the commit)."""
    if adopted is not None:
        workflow = exp.workflows[adopted]
        return WorkspaceState(
            iteration=scope.n, workflow_hash=workflow_hash(workflow),
            source=f"iter_{scope.n}/{adopted}", pairs=exp.pairs[adopted],
            failures=failures_from(exp.records[adopted]),
        )  # fmt: skip
    failures = failures_from(exp.baseline_records) if exp.baseline_records else scope.state.failures
    return scope.state.model_copy(
        update={
            "iteration": scope.n,
            "pairs": scope.state.with_pairs(exp.baseline_pairs),
            "failures": failures,
        }
    )


def _summary_line(record: IterRecord) -> str:
    specs = " | ".join(
        f"{s.spec.spec_id} {s.spec.intervention_axis} {s.distill.verdict}"
        + (f" {s.experiment.delta:+.3f}" if s.experiment.delta is not None else "")
        for s in record.specs
    )
    after = record.summary.score_after
    score = "-" if after is None else f"{after:.3f}"
    adopted = f" adopted {record.summary.adopted}" if record.summary.adopted else ""
    reflect = "".join(f" | REFLECT {b.trigger}" for b in record.reflect)
    return f"iter {record.iter}: {specs} | workspace {score}{adopted}{reflect}"
