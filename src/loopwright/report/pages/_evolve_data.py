"""Reading an evolve run directory for its report: checkpoint, progress log, calibration,
the spend found in every record.json, and the reflection reports when there are any.

Reads only; tolerates a run cut off anywhere (no checkpoint yet, a truncated progress line, an
evaluation without its record) and says what was missing instead of failing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.records import CycleRecord, Event, load_record, read_events
from loopwright.reflection import load_reflection
from loopwright.search import (
    Calibration,
    Checkpoint,
    Individual,
    ProgressEvent,
    evolve_run,
    load_checkpoint,
    read_progress,
)
from loopwright.store import RunDir, RunMeta, is_simulated

__all__ = ["EvolveData", "Spend", "Usage", "load_evolve", "winner_of"]

OUTER_EVENTS = "outer_loop/events.jsonl"
CALIBRATION_FILE = "calibration.json"
_REFLECTION = re.compile(r"reflection_gen(\d+)\.json$")


@dataclass(slots=True)
class Usage:
    """Tokens and dollars summed over runs (or agent steps). `unpriced` counts parts whose cost
    was unknown: their dollars are not in `usd` (an unknown is never counted as zero)."""

    runs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    unpriced: int = 0

    def add(self, input_tokens: int, output_tokens: int, usd: float | None) -> None:
        self.runs += 1
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if usd is None:
            self.unpriced += 1
        else:
            self.usd += usd

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class Spend:
    """Spend of every evaluation found on disk: per record (its directory relative to the run,
    e.g. `gen_2/<id>/<task>/rep_0` or `calibration/<task>/rep_0`), by agent role and by node
    id. Model calls outside agent steps (an LLM-judge gate) count under `(outside agents)`."""

    per_record: dict[str, Usage]
    by_role: dict[str, Usage]
    by_node: dict[str, Usage]
    records: int
    unreadable: tuple[str, ...]
    unfinished: tuple[str, ...]
    per_record_role: dict[str, dict[str, Usage]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EvolveData:
    """Everything the evolve page shows, read from one run directory."""

    run_dir: Path
    meta: RunMeta | None
    checkpoint: Checkpoint | None
    progress: tuple[ProgressEvent, ...]
    calibration: Calibration | str | None
    spend: Spend
    reflections: dict[int, dict[str, Any]] = field(default_factory=dict)
    simulated: bool = False
    outer_events: tuple[Event, ...] = ()
    holder: int | None = None  # the pid holding the run's lock: a run still going

    @property
    def state_words(self) -> str:
        """ "is still running (pid N holds its lock)" or "was interrupted (no process holds
        its lock)": a live run told from a dead one by its lock."""
        if self.holder is not None:
            return f"is still running (pid {self.holder} holds its lock)"
        return "was interrupted (no process holds its lock)"

    @property
    def partial_reasons(self) -> list[str]:
        """Why the run is incomplete; [] for a run that finished."""
        cp = self.checkpoint
        if cp is None:
            if self.holder is not None:
                return [f"no checkpoint.json yet: the run {self.state_words}, in calibration"]
            return [
                "no checkpoint.json: the run stopped before generation 0 started "
                "(during calibration)"
            ]
        reasons = []
        if cp.stop_reason is None:
            reasons.append(
                f"no stop reason: the run {self.state_words} in generation "
                f"{cp.generation}, phase {cp.phase!r}"
            )
        if self.spend.unfinished:
            reasons.append(f"{len(self.spend.unfinished)} evaluation(s) cut off before grading")
        return reasons


def winner_of(cp: Checkpoint) -> Individual | None:
    """The winner: as recorded, else (a run still going or cut off) the best of the last
    summarised generation; None before any generation was summarised."""
    if cp.winner_id is not None:
        return cp.individuals.get(cp.winner_id)
    return cp.individuals.get(cp.summaries[-1].best_id) if cp.summaries else None


def load_evolve(run_dir: Path) -> EvolveData:
    """Read an evolve run directory. ConfigError when its checkpoint exists but cannot be read
    (another schema version, malformed)."""
    meta = RunDir(run_dir).meta()
    checkpoint = load_checkpoint(run_dir) if (run_dir / "checkpoint.json").is_file() else None
    spend, simulated = _spend(run_dir)
    model = checkpoint.config.model if checkpoint is not None else meta and meta.model
    return EvolveData(
        run_dir=run_dir,
        meta=meta,
        checkpoint=checkpoint,
        progress=tuple(read_progress(run_dir)),
        calibration=_calibration(run_dir / CALIBRATION_FILE),
        spend=spend,
        reflections=_reflections(run_dir),
        simulated=simulated or is_simulated(model or None),
        outer_events=_outer_events(run_dir),
        holder=evolve_run(run_dir).holder(),
    )


def _outer_events(run_dir: Path) -> tuple[Event, ...]:
    """The outer loop's own exhaust (`outer_loop/events.jsonl`: its workflow's node visits)."""
    path = run_dir / OUTER_EVENTS
    if not path.is_file():
        return ()
    try:
        return tuple(read_events(path))
    except ConfigError:
        return ()  # a page without this timeline still tells the run; the file is kept


def _calibration(path: Path) -> Calibration | str | None:
    """calibration.json as a Calibration; its error as text when it cannot be read (the page
    says so); None when there is none."""
    if not path.is_file():
        return None
    try:
        return Calibration.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        return f"{path.name}: {exc.errors()[0]['msg']}"


def _reflections(run_dir: Path) -> dict[int, dict[str, Any]]:
    """Each reflection_gen{N}.json, validated as a ReflectionReport (an unreadable one is shown
    as its error)."""
    out: dict[int, dict[str, Any]] = {}
    for path in run_dir.glob("reflection_gen*.json"):
        match = _REFLECTION.search(path.name)
        if not match:
            continue
        try:
            out[int(match.group(1))] = load_reflection(path).model_dump(mode="json")
        except ConfigError as exc:
            out[int(match.group(1))] = {"unreadable": f"{path.name}: {exc}"}
    return dict(sorted(out.items()))


def _rep_dirs(run_dir: Path) -> list[Path]:
    dirs = [*run_dir.glob("gen_*/*/*/rep_*"), *run_dir.glob("calibration/*/rep_*")]
    return sorted(d for d in dirs if d.is_dir())


def _spend(run_dir: Path) -> tuple[Spend, bool]:
    per_record: dict[str, Usage] = {}
    by_role: dict[str, Usage] = {}
    by_node: dict[str, Usage] = {}
    per_record_role: dict[str, dict[str, Usage]] = {}
    unreadable, unfinished = [], []
    simulated, count = False, 0
    for rep in _rep_dirs(run_dir):
        rel = rep.relative_to(run_dir)
        if not (rep / "record.json").is_file():
            unfinished.append(str(rel))
            continue
        try:
            record = load_record(rep)
        except ConfigError:
            unreadable.append(str(rel))
            continue
        count += 1
        simulated = simulated or record.simulated
        per_record.setdefault(rel.as_posix(), Usage()).add(
            record.input_tokens, record.output_tokens, record.total_cost_usd
        )
        _add_steps(record, by_role, by_node, per_record_role.setdefault(rel.as_posix(), {}))
    spend = Spend(
        per_record=per_record,
        by_role=by_role,
        by_node=by_node,
        records=count,
        unreadable=tuple(unreadable),
        unfinished=tuple(unfinished),
        per_record_role=per_record_role,
    )
    return spend, simulated


def _add_steps(
    record: CycleRecord,
    by_role: dict[str, Usage],
    by_node: dict[str, Usage],
    own_roles: dict[str, Usage],
) -> None:
    """Add `record`'s steps to the run's tables by role and by node, and to `own_roles` (this
    record's spend by role, for the cost curve)."""
    seen_in, seen_out = 0, 0
    for step in record.steps:
        role = step.role or step.node_id
        for key, table in ((role, by_role), (step.node_id, by_node), (role, own_roles)):
            table.setdefault(key, Usage()).add(step.input_tokens, step.output_tokens, step.cost_usd)
        seen_in += step.input_tokens
        seen_out += step.output_tokens
    rest_in, rest_out = record.input_tokens - seen_in, record.output_tokens - seen_out
    if rest_in > 0 or rest_out > 0:
        steps_usd = [s.cost_usd for s in record.steps]
        total = record.total_cost_usd
        rest_usd = None
        if total is not None and None not in steps_usd:
            rest_usd = max(total - sum(c for c in steps_usd if c is not None), 0.0)
        for table in (by_role, by_node, own_roles):
            table.setdefault("(outside agents)", Usage()).add(rest_in, rest_out, rest_usd)
