"""Reading a research working directory (`loopwright research`, docs/research.md) for its
report: the config, the status the CLI shows, every committed IterRecord, knowledge.md, the
hypothesis events, the meta-model calls, and any `.staging/iter_N/` an unfinished iteration
left behind. Reads only; the journals' documented JSON lines are read as plain JSON, so the
page does not depend on the loop's private models."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from loopwright.errors import ConfigError
from loopwright.research import (
    Goal,
    HypothesisEvent,
    IterRecord,
    Knowledge,
    MetaCall,
    ResearchConfig,
    RunState,
    StatusReport,
    WorkDir,
    load_goal,
    load_iter_record,
    read_run_state,
    research_status,
)

__all__ = [
    "FINISHED",
    "Hypothesis",
    "KnowledgeLine",
    "MetaCalls",
    "ResearchData",
    "Staging",
    "load_research",
    "read_knowledge",
]

M = TypeVar("M", bound=BaseModel)

FINISHED = ("terminated", "saturated")
"""run_state statuses after which `research run` has nothing left to do by itself."""

_ITER_DIR = re.compile(r"iter_(\d+)$")
# What each phase leaves in `.staging/iter_N/` (docs/research.md), in the order they run.
_PHASE_FILES = (
    ("REFLECT", "reflect_"),
    ("THINK", "spec.json"),
    ("CRITIC", "critique_"),
    ("EXPERIMENT", "active_workspace_"),
    ("DISTILL", "distill_"),
)


@dataclass(frozen=True, slots=True)
class KnowledgeLine:
    """One bullet of knowledge.md and the later bullet that supersedes it, if any."""

    id: str
    origin: str
    supersedes: tuple[str, ...]
    text: str
    superseded_by: str | None


@dataclass(frozen=True, slots=True)
class Hypothesis:
    """A hypothesis from its add event, with its remove event when one came."""

    id: str
    iter: int
    by: str
    text: str
    axis: str | None
    spec: str | None
    removed_iter: int | None
    removed_by: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class MetaCalls:
    """The meta-model attempts of one phase in one iteration (meta_calls.jsonl)."""

    phase: str
    calls: int
    failed: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class Staging:
    """An iteration that started and has not committed: its `.staging/iter_N/` files and the
    phases that left a file there."""

    iteration: int
    files: tuple[str, ...]
    phases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ResearchData:
    """Everything the research page shows."""

    run_dir: Path
    config: ResearchConfig
    status: StatusReport
    goal: Goal
    run_state: RunState
    records: tuple[IterRecord, ...]
    knowledge: tuple[KnowledgeLine, ...]
    knowledge_header: str
    hypotheses: tuple[Hypothesis, ...]
    meta_calls: dict[int, tuple[MetaCalls, ...]]
    staging: tuple[Staging, ...]

    @property
    def simulated(self) -> bool:
        return self.status.simulated

    @property
    def partial_reasons(self) -> list[str]:
        """Why the run is not finished (not terminated or saturated, or an iteration's
        staging is left); [] for a finished one."""
        state, status = self.run_state, self.status.status
        reasons = []
        if status == "initialized":
            reasons.append("not started: no iteration has run (`loopwright research run`)")
        elif status == "paused":
            reasons.append(
                f"paused after {len(self.records)} committed iteration(s) "
                f"({self.status.reason or 'no reason recorded'}); `loopwright research run` "
                "continues it"
            )
        elif status == "running":
            reasons.append(
                f"iteration {state.iteration} (attempt {state.attempt}) "
                "was running when this page was made: it still is, or it was interrupted "
                "(the next `loopwright research run` resumes it)"
            )
        elif status == "budget":
            reasons.append(
                f"stopped by its dollar budget ({self.status.reason or 'no reason recorded'}); "
                "`loopwright research run --max-usd X` with a larger X continues it"
            )
        elif status == "stalled":
            reasons.append(
                f"stalled: {self.status.reason or 'THINK found nothing'}; resumable, not a "
                "termination"
            )
        elif status not in FINISHED:
            reasons.append(f"run_state says {status!r}")
        reasons += [
            f".staging/iter_{s.iteration}/ is left: iteration {s.iteration} started and did "
            f"not commit ({len(s.files)} file(s) so far)"
            for s in self.staging
        ]
        return reasons


def _lines(path: Path, model: type[M]) -> list[M]:
    """The lines of a JSONL file as `model`; a line that is not one (a torn last line of a run
    killed mid-write) is skipped: the page shows what was committed."""
    if not path.is_file():
        return []
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(model.model_validate_json(raw))
        except ValidationError:
            continue
    return out


def read_knowledge(path: Path) -> tuple[tuple[KnowledgeLine, ...], str]:
    """knowledge.md's bullets, each with the bullet that supersedes it, and its header prose
    (the lines that are neither a heading nor a bullet). Empty when there is no file."""
    if not path.is_file():
        return (), ""
    bullets = Knowledge(path).bullets()
    by: dict[str, str] = {}
    for b in bullets:
        for old in b.supersedes:
            by.setdefault(old, b.id)
    lines = tuple(
        KnowledgeLine(b.id, b.origin, b.supersedes, b.text, by.get(b.id)) for b in bullets
    )
    header = [
        ln
        for ln in path.read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("- ") and not ln.startswith("#")
    ]
    return lines, " ".join(header)


def _hypotheses(path: Path) -> tuple[Hypothesis, ...]:
    added: dict[str, HypothesisEvent] = {}
    removed: dict[str, HypothesisEvent] = {}
    for e in _lines(path, HypothesisEvent):
        (added if e.op == "add" else removed).setdefault(e.id, e)
    out = []
    for key, e in added.items():
        gone = removed.get(key)
        out.append(
            Hypothesis(
                id=key,
                iter=e.iter,
                by=e.by,
                text=e.text,
                axis=e.axis,
                spec=e.spec,
                removed_iter=gone.iter if gone else None,
                removed_by=gone.by if gone else None,
                reason=gone.reason if gone else "",
            )
        )
    return tuple(out)


def _meta_calls(path: Path) -> tuple[MetaCalls, ...]:
    by_phase: dict[str, list[MetaCall]] = {}
    for line in _lines(path, MetaCall):
        by_phase.setdefault(line.phase, []).append(line)
    return tuple(
        MetaCalls(
            phase=phase,
            calls=len(lines),
            failed=sum(1 for x in lines if not x.ok),
            input_tokens=sum(x.input_tokens for x in lines),
            output_tokens=sum(x.output_tokens for x in lines),
        )
        for phase, lines in by_phase.items()
    )


def _staging(wd: WorkDir) -> tuple[Staging, ...]:
    if not wd.staging_root.is_dir():
        return ()
    out = []
    for entry in sorted(wd.staging_root.iterdir()):
        match = _ITER_DIR.fullmatch(entry.name)
        if not entry.is_dir() or match is None:
            continue
        files = tuple(sorted(p.name for p in entry.iterdir()))
        phases = tuple(
            phase for phase, prefix in _PHASE_FILES if any(f.startswith(prefix) for f in files)
        )
        out.append(Staging(int(match.group(1)), files, phases))
    return tuple(sorted(out, key=lambda s: s.iteration))


def _run_state(wd: WorkDir) -> RunState:
    try:
        return read_run_state(wd)
    except ValidationError as exc:
        raise ConfigError(f"{wd.run_state} is malformed", got=str(exc.errors()[0])[:300]) from None


def load_research(run_dir: Path) -> ResearchData:
    """Read a research working directory. ConfigError when its config, goal, workspace state
    or a committed record cannot be read (another schema version, a hand-broken file)."""
    wd = WorkDir(run_dir)
    config = wd.load_config()
    status = research_status(run_dir)
    records = tuple(load_iter_record(wd.iter_dir(n) / "record.json") for n in wd.committed())
    knowledge, header = read_knowledge(wd.knowledge)
    return ResearchData(
        run_dir=run_dir,
        config=config,
        status=status,
        goal=load_goal(wd.goal),
        run_state=_run_state(wd),
        records=records,
        knowledge=knowledge,
        knowledge_header=header,
        hypotheses=_hypotheses(wd.hypotheses),
        meta_calls={r.iter: _meta_calls(wd.iter_dir(r.iter) / "meta_calls.jsonl") for r in records},
        staging=_staging(wd),
    )
