"""A ReflectionReport as plain text for a person (`loopwright outer-loop status --reflection`)."""

from __future__ import annotations

from loopwright.reflection._report import Evidence, Pattern, ReflectionReport

__all__ = ["describe_report"]


def _evidence(ev: Evidence) -> str:
    parts = [f"n={ev.count}"]
    if ev.candidates:
        parts.append(
            "candidates "
            + ", ".join(ev.candidates[:6])
            + (" ..." if len(ev.candidates) > 6 else "")
        )
    if ev.tasks:
        parts.append("tasks " + ", ".join(ev.tasks[:6]) + (" ..." if len(ev.tasks) > 6 else ""))
    return "; ".join(parts)


def _patterns(title: str, items: list[Pattern]) -> list[str]:
    lines = [f"{title} ({len(items)}):"]
    lines += [f"  - {p.description}  [{_evidence(p.evidence)}]" for p in items]
    return lines


def describe_report(report: ReflectionReport) -> str:
    """The report as indented text: header (generation, source, model, simulated), the five
    lists with their evidence, then what was dropped and every model attempt."""
    sim = " [SIMULATED records]" if report.simulated else ""
    model = f", model {report.model}" if report.model else ""
    lines = [f"reflection on generation {report.generation}: {report.source}{model}{sim}"]
    if report.note:
        lines.append(f"note: {report.note}")
    lines += _patterns("failure patterns", report.failure_patterns)
    lines += _patterns("success patterns", report.success_patterns)
    lines.append(f"mutation suggestions ({len(report.mutation_suggestions)}):")
    for s in report.mutation_suggestions:
        role = f" role={s.role}" if s.role else ""
        lines.append(
            f"  {s.id} {s.operator} on {s.target}{role} kind={s.kind} confidence={s.confidence:.2f}"
            f": {s.rationale}  [{_evidence(s.evidence)}]"
        )
    lines.append(f"prompt improvements ({len(report.prompt_improvements)}):")
    lines += [
        f"  - {p.target} ({p.kind}): {p.text}  [{_evidence(p.evidence)}]"
        for p in report.prompt_improvements
    ]
    lines.append(f"structural recommendations ({len(report.structural_recommendations)}):")
    for r in report.structural_recommendations:
        role = f" {r.role}" if r.role else ""
        lines.append(
            f"  - {r.action}{role} at {r.target}: {r.rationale}  [{_evidence(r.evidence)}]"
        )
    if report.dropped:
        lines.append(f"dropped ({len(report.dropped)}):")
        lines += [f"  - {d.item}: {d.reason}" for d in report.dropped]
    for a in report.attempts:
        lines.append(f"attempt {a.attempt}: " + ("ok" if a.ok else f"rejected: {a.error}"))
    if report.digest_omitted:
        lines.append("digest left out: " + "; ".join(report.digest_omitted))
    return "\n".join(lines)
