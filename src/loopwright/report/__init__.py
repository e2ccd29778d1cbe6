"""HTML reports of run directories: one self-contained, offline file per run.

`write_report(run_dir)` reads an evolve, run, A/B record or research directory (it runs
nothing) and writes `report.html`: inline SVG charts drawn in Python, no script, no external
resource. Every page carries the run's stamp and, for the simulated model, a banner saying so.
See docs/report.md.
"""

from __future__ import annotations

from loopwright.report._html import REPORT_SCHEMA_VERSION
from loopwright.report._kind import KNOWN_KINDS, RunKind, detect_kind
from loopwright.report._stamp import Stamp, source_commit
from loopwright.report._write import REPORT_FILE, Report, ReportResult, render_report, write_report

__all__ = [
    "KNOWN_KINDS",
    "REPORT_FILE",
    "REPORT_SCHEMA_VERSION",
    "Report",
    "ReportResult",
    "RunKind",
    "Stamp",
    "detect_kind",
    "render_report",
    "source_commit",
    "write_report",
]
