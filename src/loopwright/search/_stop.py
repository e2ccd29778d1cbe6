"""Stopping a run from Python between evaluations (docs/api.md, "Stopping a run").

`evolve`/`resume` take `should_stop`, any callable returning a bool (a `StopHandle`, a deadline,
a file's existence). It is asked after each finished evaluation (calibration runs included),
once that evaluation is in the checkpoint. When it answers True the run stops there: the
running jobs are cancelled, the lock is released and the directory is left as a kill would
leave it, so `resume` continues it and ends where an uninterrupted run would have.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from loopwright.errors import LoopwrightError
from loopwright.search._progress import (
    CalibrationRunFinished,
    EvaluationFinished,
    GenerationFinished,
    Listener,
    ProgressEvent,
)

__all__ = ["RunStopped", "ShouldStop", "StopHandle", "StopRequested", "stoppable"]

ShouldStop = Callable[[], bool]

# The events after which the run's state is on disk and a stop loses nothing.
_BETWEEN_EVALUATIONS = (CalibrationRunFinished, EvaluationFinished, GenerationFinished)


class StopHandle:
    """A stop switch to pass as `should_stop`: `stop()` from any thread (or a signal handler,
    a callback, `on_event`) asks the run to stop after the evaluation in progress. Calling the
    handle answers whether a stop was asked. Thread-safe; a handle stays stopped once stopped
    (`reset()` makes it reusable)."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def stop(self) -> None:
        """Ask the run to stop at its next point between evaluations."""
        self._event.set()

    def reset(self) -> None:
        """Clear a stop, to pass the handle to `resume`."""
        self._event.clear()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def __call__(self) -> bool:
        return self._event.is_set()


class StopRequested(Exception):
    """Raised inside the run when `should_stop` answered True; `evolve`/`resume` catch it.
    Not a user error: it only unwinds the run's steps (each leaves the state on disk)."""


class RunStopped(LoopwrightError):
    """`should_stop` stopped an evolve run before it had a checkpoint (during calibration):
    there is no result yet. The calibration runs finished so far are kept; `resume(run_dir)`
    continues the calibration."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(
            f"the run in {run_dir} was stopped during calibration (should_stop answered True); "
            f"continue it with loopwright.resume({str(run_dir)!r})"
        )
        self.run_dir = run_dir


def stoppable(listener: Listener | None, should_stop: ShouldStop | None) -> Listener | None:
    """`listener`, followed after each finished evaluation by a check of `should_stop` that
    raises StopRequested when it answers True. `listener` unchanged without `should_stop`."""
    if should_stop is None:
        return listener

    def listen(event: ProgressEvent) -> None:
        if listener is not None:
            listener(event)
        if isinstance(event, _BETWEEN_EVALUATIONS) and should_stop():
            raise StopRequested(f"should_stop answered True after {event.event}")

    return listen
