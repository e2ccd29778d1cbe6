"""HTML reports of run directories: one self-contained, offline file per run.

`write_report(run_dir)` reads an evolve, run, A/B record or research directory (it runs
nothing) and writes `report.html`: inline SVG charts drawn in Python, no script, no external
resource. Every page carries the run's stamp and, for the simulated model, a banner saying so.
`write_comparison(run_dirs)` writes one page comparing evolve runs, and `Watcher(run_dir)`
serves a live page of an evolve run in progress (a loopback server; the one page with a
script, inline). See docs/report.md.
"""

from __future__ import annotations

from loopwright.report._html import REPORT_SCHEMA_VERSION
from loopwright.report._kind import KNOWN_KINDS, RunKind, detect_kind
from loopwright.report._stamp import Stamp, source_commit
from loopwright.report._watch import RunState, Watcher, run_state
from loopwright.report._write import (
    COMPARE_FILE,
    REPORT_FILE,
    CompareResult,
    Report,
    ReportResult,
    render_comparison,
    render_report,
    write_comparison,
    write_report,
)

__all__ = [
    "COMPARE_FILE",
    "KNOWN_KINDS",
    "REPORT_FILE",
    "REPORT_SCHEMA_VERSION",
    "CompareResult",
    "Report",
    "ReportResult",
    "RunKind",
    "RunState",
    "Stamp",
    "Watcher",
    "detect_kind",
    "render_comparison",
    "render_report",
    "run_state",
    "source_commit",
    "write_comparison",
    "write_report",
]
