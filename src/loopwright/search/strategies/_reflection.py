"""Reflection between evaluation and breeding: the reflector reads the generation's training
exhaust and writes `<run>/reflection_gen{N}.json` (docs/reflection.md); breeding reads it back
as guidance."""

from __future__ import annotations

from loopwright.models import CostLedger, label_scope
from loopwright.reflection import (
    ReflectionReport,
    Reflector,
    load_reflection,
    reflection_path,
    write_reflection,
)
from loopwright.search._engine_records import reflection_event
from loopwright.search._progress import ReflectionSkipped
from loopwright.search._reflection_inputs import reflection_candidates
from loopwright.search.strategies._state import RunState

__all__ = ["ReflectionStep"]

_REFLECTION_OFF = (
    "reflection is off for this run (reflection.enabled false, or unset with the random "
    "strategy, which does not read it)"
)


class ReflectionStep:
    """Reflects once per generation with `reflector` (None: skipped, and logged); the meta
    calls' spend is read back from `ledger`."""

    def __init__(self, reflector: Reflector | None, ledger: CostLedger | None) -> None:
        self.reflector = reflector
        self.ledger = ledger

    def reflect(self, state: RunState) -> None:
        """Reflect on the current generation, and record it in the checkpoint, so a second
        call (a resumed run, the `reflect` node after `outer-loop reflect`) does nothing.
        Without a reflector it logs `reflection_skipped`. Draws nothing from the run RNG, so a
        resumed run still ends identical."""
        cp = state.checkpoint
        gen = cp.generation
        if self.reflector is None:
            why = "no reflector configured" if state.config.reflects else _REFLECTION_OFF
            state.log.emit(ReflectionSkipped(generation=gen, reason=why))
            return
        if gen in cp.reflected and reflection_path(state.run_dir, gen).is_file():
            return
        candidates, unreadable = reflection_candidates(state.population(), state.run_dir)
        with label_scope(run=state.run_dir.name, role="meta:reflector"):
            report = self.reflector.reflect(gen, candidates)
        path = write_reflection(state.run_dir, report)
        state.update(reflected=(*(g for g in cp.reflected if g != gen), gen))
        state.count_meta(self.ledger)
        state.save()
        state.log.emit(reflection_event(report, path.name, unreadable))

    def guidance(self, state: RunState, gen: int) -> ReflectionReport | None:
        """The reflection on generation `gen` that guides its breeding (reflecting first if a
        resumed run stopped before it did); None without a reflector or with nothing found."""
        if self.reflector is None:
            return None
        self.reflect(state)
        report = load_reflection(reflection_path(state.run_dir, gen))
        return None if report.source == "empty" else report
