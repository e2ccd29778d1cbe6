"""What every phase of one iteration shares (`Scope`), and the loop's progress events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loopwright.research._config import ResearchConfig, WorkDir
from loopwright.research._context import Rules
from loopwright.research._goal import Goal
from loopwright.research._journal import HypothesisEvent, append_line, next_hypothesis_id
from loopwright.research._memory import Memory
from loopwright.research._meta import MetaClient
from loopwright.research._schemas import HypothesisAdd
from loopwright.research._workspace import WorkspaceState
from loopwright.store import is_simulated
from loopwright.workflow import Workflow

__all__ = ["EventKind", "Listener", "LoopEvent", "Scope"]

EventKind = Literal[
    "iteration_started",
    "phase",
    "run_done",
    "reflect",
    "commit_ready",
    "committed",
    "stopped",
    "resumed",
    "holdout",
]


@dataclass(frozen=True, slots=True)
class LoopEvent:
    """A progress event. `done`/`total` count the runs of the current phase (run_done)."""

    kind: EventKind
    iteration: int
    message: str
    done: int = 0
    total: int = 0


Listener = Callable[[LoopEvent], None]


@dataclass
class Scope:
    """One iteration's shared state: the working directory, its settings and goal, the
    enforced constraints, the memory views, the meta-model client, the staging directory and
    the (frozen) workspace workflow and state this iteration patches."""

    n: int
    attempt: int
    wd: WorkDir
    config: ResearchConfig
    goal: Goal
    constraints: str
    rules: Rules
    memory: Memory
    meta: MetaClient
    staging: Path
    base: Workflow
    base_hash: str
    state: WorkspaceState
    emit: Listener

    @property
    def meta_model(self) -> str:
        return self.meta.model.name

    @property
    def simulated(self) -> bool:
        """Whether this iteration's results come from an offline model (meta or agents)."""
        return self.meta.model.simulated or is_simulated(self.config.eval.model)

    def provenance(self) -> str:
        """How a knowledge bullet names its maker: `model NAME` (`, SIMULATED` if so)."""
        return f"model {self.meta_model}" + (", SIMULATED" if self.simulated else "")

    def add_hypothesis(self, h: HypothesisAdd, by: Literal["think", "distill"]) -> str:
        """Append an `add` line to hypotheses.jsonl (the next id, this iteration, this
        phase, the model that made it); return the new id."""
        hid = next_hypothesis_id(self.wd.hypotheses)
        spec = f"iter_{self.n}/{h.spec_id}" if h.spec_id else None
        event = HypothesisEvent(
            op="add", id=hid, iter=self.n, by=by, text=h.text, axis=h.axis, spec=spec,
            meta_model=self.meta_model, simulated=self.simulated,
        )  # fmt: skip
        append_line(self.wd.hypotheses, event)
        return hid

    def phase(self, message: str) -> None:
        self.emit(LoopEvent("phase", self.n, message))
