"""loopwright: find better LLM agent workflows by measurement instead of judgement.

The Python API (docs/api.md):

- `loopwright.run(workflows, bench, ...) -> RunResult`: run workflows on a benchmark's tasks and
  grade every run.
- `loopwright.evolve(EvolveConfig, run_dir, *, executor=None, on_event=None) -> EvolveResult`
  and `loopwright.resume(run_dir)`: the evolutionary outer loop.
- `loopwright.research(dir, ...) -> RunOutcome`: the research loop.
- `loopwright.register_evaluator(name, fn)`: grade tasks whose task.toml says
  `[grading] runner = "function"`, `evaluator = name` with your own Python function.

They are imported on first use, so `import loopwright` stays light (a sandboxed grader imports
parts of the package and needs none of this).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from loopwright._version import __version__
from loopwright.errors import (
    ConfigError,
    LoopwrightError,
    MissingDependencyError,
    SandboxError,
    UsageError,
    UserError,
)

if TYPE_CHECKING:
    from loopwright.evaluation import RunResult, run
    from loopwright.research import research
    from loopwright.scoring import register_evaluator
    from loopwright.search import (
        EvolveConfig,
        EvolveResult,
        Execution,
        RunStopped,
        StopHandle,
        evolve,
        resume,
    )

# name -> the subpackage that defines it
_LAZY = {
    "run": "loopwright.evaluation",
    "RunResult": "loopwright.evaluation",
    "evolve": "loopwright.search",
    "resume": "loopwright.search",
    "EvolveConfig": "loopwright.search",
    "EvolveResult": "loopwright.search",
    "Execution": "loopwright.search",
    "StopHandle": "loopwright.search",
    "RunStopped": "loopwright.search",
    "research": "loopwright.research",
    "register_evaluator": "loopwright.scoring",
}

__all__ = [
    "ConfigError",
    "EvolveConfig",
    "EvolveResult",
    "Execution",
    "LoopwrightError",
    "MissingDependencyError",
    "RunResult",
    "RunStopped",
    "SandboxError",
    "StopHandle",
    "UsageError",
    "UserError",
    "__version__",
    "evolve",
    "register_evaluator",
    "research",
    "resume",
    "run",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'loopwright' has no attribute {name!r}")
    if name == "research":  # the subpackage, which is callable as the function (see there)
        return importlib.import_module(module)
    return getattr(importlib.import_module(module), name)
