"""The research loop: improve a workflow by sharpening understanding against a goal.

Each iteration is THINK -> CRITIC -> EXPERIMENT -> DISTILL over a working directory of eleven
files, committed atomically; REFLECT maps the intervention space and redirects THINK. With the
`sim` meta model every phase runs by documented offline rules. See docs/research.md.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from loopwright.research._allocate import Allocation, WaveSubmission, allocate_workers, makespan
from loopwright.research._api import research
from loopwright.research._axes import AXES, Axis
from loopwright.research._bootstrap import InitOptions, init_workdir
from loopwright.research._budget import Spend, budget_fix, run_spend
from loopwright.research._config import (
    MANIFEST,
    RESEARCH_RUN,
    Caps,
    EvalConfig,
    ManifestEntry,
    ReflectSettings,
    ResearchConfig,
    WorkDir,
)
from loopwright.research._contracts import CONTRACTS, ContractResult, check_contracts
from loopwright.research._factory import (
    RunModels,
    build_bench,
    meta_model,
    open_loop,
    run_models,
)
from loopwright.research._goal import Escalation, Goal, bootstrap_goal, load_goal, parse_goal
from loopwright.research._journal import Experience, HypothesisEvent
from loopwright.research._knowledge import Knowledge
from loopwright.research._loop import ResearchLoop, RunOutcome
from loopwright.research._meta import MetaCall
from loopwright.research._record import IterRecord, load_iter_record
from loopwright.research._schemas import Critique, Distillation, Envelope, Reflection, Repair, Spec
from loopwright.research._scope import LoopEvent
from loopwright.research._state import RunState, read_run_state
from loopwright.research._status import StatusReport, research_status
from loopwright.research._wave import (
    ExecutorWave,
    ThreadWave,
    WaveExecutor,
    WaveJob,
    WaveResult,
)
from loopwright.research.offline._researcher import SIM_RESEARCHER_NAME, SimResearcher

__all__ = [
    "AXES",
    "CONTRACTS",
    "MANIFEST",
    "RESEARCH_RUN",
    "SIM_RESEARCHER_NAME",
    "Allocation",
    "Axis",
    "Caps",
    "ContractResult",
    "Critique",
    "Distillation",
    "Envelope",
    "Escalation",
    "EvalConfig",
    "ExecutorWave",
    "Experience",
    "Goal",
    "HypothesisEvent",
    "InitOptions",
    "IterRecord",
    "Knowledge",
    "LoopEvent",
    "ManifestEntry",
    "MetaCall",
    "ReflectSettings",
    "Reflection",
    "Repair",
    "ResearchConfig",
    "ResearchLoop",
    "RunModels",
    "RunOutcome",
    "RunState",
    "SimResearcher",
    "Spec",
    "Spend",
    "StatusReport",
    "ThreadWave",
    "WaveExecutor",
    "WaveJob",
    "WaveResult",
    "WaveSubmission",
    "WorkDir",
    "allocate_workers",
    "bootstrap_goal",
    "budget_fix",
    "build_bench",
    "check_contracts",
    "init_workdir",
    "load_goal",
    "load_iter_record",
    "makespan",
    "meta_model",
    "open_loop",
    "parse_goal",
    "read_run_state",
    "research",
    "research_status",
    "run_models",
    "run_spend",
]


class _CallableModule(types.ModuleType):
    """`loopwright.research` is both this package and the API function: once the package is
    imported, Python binds the name `research` on `loopwright` to the package, so the package
    itself calls the function (`loopwright.research(dir, ...)` works either way)."""

    def __call__(self, *args: Any, **kwargs: Any) -> RunOutcome:
        return research(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
# `inspect.signature(loopwright.research)` and help() describe the call, not `(*args, **kwargs)`.
sys.modules[__name__].__signature__ = inspect.signature(research)  # type: ignore[attr-defined]
__doc__ = f"research{inspect.signature(research)}\n\n{research.__doc__}\n\n{__doc__}"
