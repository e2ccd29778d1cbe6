"""experience.jsonl (one line per spec experiment) and hypotheses.jsonl (add/remove events).

Both are appended to during an iteration (eagerly, as the phases run). Each line carries the
iteration that wrote it; when `run` resumes an iteration that never committed, the lines of
that iteration are dropped with `drop_iterations_from` (they describe a discarded attempt).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError
from loopwright.research._schemas import DistillVerdict

__all__ = [
    "REFUTING",
    "Experience",
    "HypothesisEvent",
    "OpenHypothesis",
    "append_line",
    "drop_iterations_from",
    "next_hypothesis_id",
    "open_hypotheses",
    "read_lines",
]

JOURNAL_SCHEMA_VERSION = 1

OutcomeClass = Literal["measured", "implementer_skip", "critic_block"]
# DISTILL's verdicts, or `undistilled`: a measured spec DISTILL gave none (SKIP_DISTILL_EMPTY).
Verdict = Literal[DistillVerdict, "undistilled"]

REFUTING: frozenset[str] = frozenset(
    {"refuted", "no_effect", "not_confirmed", "implementer_skip", "critic_block"}
)
"""Verdicts that count as a refuted-patch data point (CRITIC and REFLECT read them)."""


class _Line(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Experience(_Line):
    """What one spec's experiment showed. `pattern` is the patch's change signature
    (`loopwright.research._patch.pattern_of`); `delta` = score - baseline on the same pairs;
    `confirms` is "iter_N/SPEC" for a perf re-measurement of that probe. `meta_model` wrote the
    lesson, the agents ran on `eval_model`; `simulated` is true when either is an offline model
    (None: a line from before these fields)."""

    schema_version: int = JOURNAL_SCHEMA_VERSION
    iter: int
    spec_id: str
    axis: str
    scale: Literal["probe", "perf"]
    title: str
    pattern: tuple[str, ...]
    patch_summary: str
    base_hash: str
    workflow_hash: str | None
    outcome_class: OutcomeClass
    verdict: Verdict
    score: float | None
    baseline: float | None
    delta: float | None
    runs: int
    lesson: str
    confirms: str | None = None
    meta_model: str | None = None
    eval_model: str | None = None
    simulated: bool | None = None


class HypothesisEvent(_Line):
    """`add` a hypothesis (THINK or DISTILL) or `remove` one (DISTILL) with the reason;
    `meta_model` made it, `simulated` when that is an offline model (None: older lines)."""

    schema_version: int = JOURNAL_SCHEMA_VERSION
    op: Literal["add", "remove"]
    id: str
    iter: int
    by: Literal["think", "distill"]
    text: str = ""
    axis: str | None = None
    spec: str | None = None
    reason: str = ""
    meta_model: str | None = None
    simulated: bool | None = None


class OpenHypothesis(_Line):
    """A hypothesis added and not removed."""

    id: str
    iter: int
    text: str
    axis: str | None
    spec: str | None


M = TypeVar("M", bound=_Line)


def append_line(path: Path, line: _Line) -> None:
    """Append one JSON line and flush it to disk."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line.model_dump_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_lines(path: Path, model: type[M]) -> list[M]:
    """Every line of a journal as `model`. ConfigError naming the line when one is malformed."""
    if not path.is_file():
        return []
    out = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            out.append(model.model_validate_json(raw))
        except ValidationError as exc:
            raise ConfigError(
                f"{path}:{number} is not a valid {model.__name__} line",
                got=str(exc.errors()[0]["msg"]),
                fix="restore the line (journals are written by the loop), or remove it",
            ) from None
    return out


def open_hypotheses(path: Path) -> list[OpenHypothesis]:
    """Hypotheses added and not removed, in the order they were added."""
    current: dict[str, OpenHypothesis] = {}
    for event in read_lines(path, HypothesisEvent):
        if event.op == "add":
            current[event.id] = OpenHypothesis(
                id=event.id, iter=event.iter, text=event.text, axis=event.axis, spec=event.spec
            )
        else:
            current.pop(event.id, None)
    return list(current.values())


def next_hypothesis_id(path: Path) -> str:
    """H<n> one above the highest id ever added."""
    ids = [int(e.id[1:]) for e in read_lines(path, HypothesisEvent) if e.id[1:].isdigit()]
    return f"H{max(ids, default=0) + 1}"


def drop_iterations_from(paths: Sequence[Path], iteration: int) -> int:
    """Remove every line whose `iter` is `iteration` or later; return how many were dropped.

    Rewrites each file atomically (`atomic_write`)."""
    dropped = 0
    for path in paths:
        if not path.is_file():
            continue
        keep = []
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip() and int(json.loads(raw).get("iter", 0)) >= iteration:
                dropped += 1
            elif raw.strip():
                keep.append(raw)
        atomic_write(path, "".join(f"{k}\n" for k in keep))
    return dropped
