"""`loopwright outer-loop reflect --generation N`: reflection on any evaluated generation.

The current generation goes through `EvolutionEngine.reflect()` (recorded in the checkpoint, so
breeding uses it). An earlier generation's population is read from `progress.jsonl` (its
`generation_started` event) and reflected on with the run's reflector; an existing
`reflection_gen{N}.json` is kept, never redone.
"""

from __future__ import annotations

from pathlib import Path

from loopwright.errors import UsageError
from loopwright.models import label_scope
from loopwright.reflection import reflection_path, write_reflection
from loopwright.search._engine import EvolutionEngine
from loopwright.search._progress import GenerationStarted, read_progress
from loopwright.search._reflection_inputs import reflection_candidates

__all__ = ["reflect_generation"]


def reflect_generation(engine: EvolutionEngine, generation: int | None = None) -> Path:
    """Make (or find) `reflection_gen{N}.json` for `generation` (default: the current one) and
    return its path. UsageError for a generation not evaluated yet, one the log does not know,
    or a run that does not reflect (`EvolveConfig.reflects`)."""
    current = engine.state.generation
    gen = current if generation is None else generation
    if engine.parts.reflector is None:
        raise UsageError(
            "reflection is off for this run",
            got=f"strategy {engine.config.strategy}, reflection.enabled "
            f"{engine.config.reflection.enabled}",
            fix="set reflection.enabled: true in the run config to reflect (unset, only the "
            "guided strategy reflects)",
        )
    evaluated = len(engine.state.summaries) > current or engine.state.phase == "breed"
    if gen > current or (gen == current and not evaluated):
        raise UsageError(
            f"generation {gen} is not evaluated yet",
            got=f"the run is at generation {current}, phase {engine.state.phase}",
            fix="run `loopwright outer-loop evaluate` first",
        )
    path = reflection_path(engine.run_dir, gen)
    if gen == current:
        engine.reflect()
        return path
    if path.is_file():
        return path
    started = [e for e in read_progress(engine.run_dir)
               if isinstance(e, GenerationStarted) and e.generation == gen]  # fmt: skip
    if not started:
        raise UsageError(
            f"progress.jsonl has no start of generation {gen}",
            fix=f"choose a generation from 0 to {current}",
        )
    ids = [i for i in started[-1].population if i in engine.individuals]
    candidates, _ = reflection_candidates([engine.individuals[i] for i in ids], engine.run_dir)
    with label_scope(run=engine.run_dir.name, role="meta:reflector"):
        report = engine.parts.reflector.reflect(gen, candidates)
    return write_reflection(engine.run_dir, report)
