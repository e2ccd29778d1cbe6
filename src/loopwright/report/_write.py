"""Rendering and writing a report: detect the kind of run directory, build its page, write it
atomically."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loopwright._caller import spoken
from loopwright._fs import atomic_write
from loopwright.errors import UsageError
from loopwright.report._kind import RunKind, detect_kind
from loopwright.report.pages._ab import ab_page, load_ab
from loopwright.report.pages._compare import compare_page, load_comparison
from loopwright.report.pages._evolve import evolve_page
from loopwright.report.pages._evolve_data import load_evolve
from loopwright.report.pages._research import research_page
from loopwright.report.pages._research_data import load_research
from loopwright.report.pages._run import run_page
from loopwright.report.pages._run_data import load_run
from loopwright.store import check_output_file

__all__ = [
    "COMPARE_FILE",
    "REPORT_FILE",
    "CompareResult",
    "Report",
    "ReportResult",
    "render_comparison",
    "render_report",
    "write_comparison",
    "write_report",
]

REPORT_FILE = "report.html"
COMPARE_FILE = "compare.html"


@dataclass(frozen=True, slots=True)
class Report:
    """A rendered page and what it says about its run."""

    html: str
    kind: RunKind
    partial: bool
    simulated: bool


@dataclass(frozen=True, slots=True)
class ReportResult:
    """Where a report was written, its size in bytes and the seconds it took."""

    path: Path
    kind: RunKind
    partial: bool
    simulated: bool
    size: int
    seconds: float


def render_report(run_dir: str | os.PathLike[str]) -> Report:
    """Build the report of `run_dir` (an evolve, run, A/B record or research directory) in
    memory.

    Reads only. Raises UsageError for a directory that is no run this report knows, and
    ConfigError for a run whose files cannot be read (another checkpoint schema). A run cut
    off anywhere still renders, marked partial. Deterministic for the same files (and the same
    Graphviz, when `dot` draws the graphs).
    """
    run_dir = Path(run_dir)
    kind = detect_kind(run_dir)
    if kind == "ab":
        ab = load_ab(run_dir)
        return Report(ab_page(ab), kind, bool(ab.partial_reasons), ab.simulated)
    if kind == "research":
        research = load_research(run_dir)
        return Report(
            research_page(research), kind, bool(research.partial_reasons), research.simulated
        )
    if kind == "evolve":
        evolve = load_evolve(run_dir)
        return Report(evolve_page(evolve), kind, bool(evolve.partial_reasons), evolve.simulated)
    run = load_run(run_dir)
    return Report(run_page(run), kind, bool(run.partial_reasons), run.simulated)


def write_report(
    run_dir: str | os.PathLike[str], output: str | os.PathLike[str] | None = None
) -> ReportResult:
    """Render the report of `run_dir` and write it to `output` (default
    `<run_dir>/report.html`), replacing any earlier one atomically. See `render_report`.
    UsageError (before anything is rendered) when `output` cannot be written."""
    start = time.perf_counter()
    run_dir, output = Path(run_dir), None if output is None else Path(output)
    path = output if output is not None else run_dir / REPORT_FILE
    if output is not None:  # before rendering: a path that cannot be written is named first
        check_output_file(output, spoken("output", "--output"))
    report = render_report(run_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = report.html.encode("utf-8")
    atomic_write(path, data)
    return ReportResult(
        path=path,
        kind=report.kind,
        partial=report.partial,
        simulated=report.simulated,
        size=len(data),
        seconds=time.perf_counter() - start,
    )


@dataclass(frozen=True, slots=True)
class CompareResult:
    """Where a comparison page was written, the runs it compares (their labels), whether any
    of them is unfinished or simulated, its size in bytes and the seconds it took."""

    path: Path
    runs: tuple[str, ...]
    partial: bool
    simulated: bool
    size: int
    seconds: float


def render_comparison(run_dirs: Sequence[str | os.PathLike[str]]) -> tuple[str, CompareResult]:
    """The comparison page of two or more evolve runs (curves on one chart, spend against task
    runs, the winners' graphs side by side, holdout per task) and what it holds (its `path` is
    empty: nothing was written). Reads only; UsageError as `load_comparison` says."""
    start = time.perf_counter()
    cols = load_comparison(_run_dirs(run_dirs))
    html = compare_page(cols)
    result = CompareResult(
        path=Path(),
        runs=tuple(c.label for c in cols),
        partial=any(c.data.partial_reasons for c in cols),
        simulated=any(c.data.simulated for c in cols),
        size=len(html.encode("utf-8")),
        seconds=time.perf_counter() - start,
    )
    return html, result


def _run_dirs(run_dirs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The run directories of a comparison: a list of paths, never one path read as its
    letters (a `str` is a `Sequence[str]`, so mypy lets `write_comparison("runs/a")` through)."""
    if isinstance(run_dirs, str | os.PathLike):
        raise UsageError(
            "a comparison takes a list of run directories, not one path",
            got=repr(os.fspath(run_dirs)),
            fix=f"pass a list: [{os.fspath(run_dirs)!r}, 'runs/other']",
        )
    return [Path(p) for p in run_dirs]


def write_comparison(
    run_dirs: Sequence[str | os.PathLike[str]], output: str | os.PathLike[str] = COMPARE_FILE
) -> CompareResult:
    """Write the comparison page of `run_dirs` to `output` (default `compare.html` in the
    current directory), atomically. UsageError before anything is read when `output` cannot be
    written, and as `render_comparison` says."""
    dirs = _run_dirs(run_dirs)
    path = Path(output)
    check_output_file(path, spoken("output", "--output"))
    html, result = render_comparison(dirs)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, html.encode("utf-8"))
    return CompareResult(
        path=path,
        runs=result.runs,
        partial=result.partial,
        simulated=result.simulated,
        size=result.size,
        seconds=result.seconds,
    )
