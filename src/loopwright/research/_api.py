"""`loopwright.research`: create (when asked) and run the research loop on a working directory
from Python. The `loopwright research` commands are options and printing over the same parts."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from loopwright.errors import UsageError
from loopwright.research._bootstrap import InitOptions, init_workdir
from loopwright.research._factory import open_loop
from loopwright.research._loop import RunOutcome
from loopwright.research._scope import Listener

__all__ = ["research"]


def research(
    dir: str | os.PathLike[str],
    *,
    init: InitOptions | None = None,
    model: str | None = None,
    iterations: int | None = None,
    on_event: Listener | None = None,
    max_usd: float | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> RunOutcome:
    """Run (or resume) the research loop in `dir` for up to `iterations` iterations (None:
    until goal.md stops it) and return the outcome.

    With `init`, the working directory is created first from those options (`init.dir` may
    be left unset; when given it must be `dir`). `model` overrides the config's meta model for this
    call; `on_event` sees each LoopEvent (phases, commits, REFLECT, stops) as it happens.
    `max_usd` sets the run's dollar budget from now on (config.yaml keeps it; the outcome is
    `budget` once it is spent, docs/research.md). `should_stop` (a `loopwright.StopHandle` or any
    callable returning a bool) is asked before each iteration: when it answers True the call
    returns with status `paused`, every committed iteration kept; call again to go on."""
    dir = Path(dir)
    if init is not None:
        if init.dir is None:
            init = init.model_copy(update={"dir": dir})
        elif init.dir != dir:
            raise UsageError(
                "research(dir, init=...) names two directories",
                got=f"{dir} and init.dir {init.dir}",
                fix="leave init.dir unset (dir is used), or pass the same directory in both",
            )
        init_workdir(init)
    loop = open_loop(dir, model=model, listener=on_event, max_usd=max_usd, should_stop=should_stop)
    return loop.run(iterations)
