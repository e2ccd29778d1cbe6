"""The cost-over-time curve of an evolve run: dollars spent so far by agent role against the
number of task runs finished, in the order progress.jsonl recorded them."""

from __future__ import annotations

from dataclasses import dataclass

from loopwright.report._html import figure, fmt_usd
from loopwright.report.charts._svg import Point, Series, line_chart
from loopwright.report.pages._evolve_data import EvolveData, Usage
from loopwright.search import CalibrationRunFinished, Checkpoint, EvaluationFinished

__all__ = ["CostCurve", "cost_curve", "cost_curve_figure"]

NO_RECORD = "(no record)"
"""Spend of an evaluation whose record.json was not found: its progress event's cost."""

META = "meta roles"
"""The reflector's, mutator's and crossover's calls: the run's meta spend so far, as each
evaluation's progress event recorded it (`Spent.meta_usd`; absent from older logs)."""

_PALETTE = ("#2563eb", "#dd6b20", "#2f855a", "#805ad5", "#c53030", "#0f766e", "#b7791f")


@dataclass(frozen=True, slots=True)
class CostCurve:
    """Cumulative dollars by role after each finished task run (`totals[i]` after run i+1).

    `cached` runs reused an earlier result and spent nothing; `unpriced` runs (or steps, or meta
    calls) had no known price, so their dollars are missing from the curve (never counted as
    zero). The meta roles' spend so far is the role `META`."""

    roles: tuple[str, ...]
    totals: tuple[dict[str, float], ...]
    cached: int
    unpriced: int


def _record_paths(cp: Checkpoint | None) -> dict[tuple[str, str, int, str], str]:
    if cp is None:
        return {}
    return {
        (ind.id, r.task_id, r.repetition, r.split): r.record_path
        for ind in cp.individuals.values()
        for r in ind.results
        if r.record_path
    }


def _spent_by(
    data: EvolveData,
    ev: CalibrationRunFinished | EvaluationFinished,
    paths: dict[tuple[str, str, int, str], str],
) -> tuple[dict[str, Usage] | None, float | None]:
    """The record's spend by role, or None and the progress event's own cost."""
    if isinstance(ev, CalibrationRunFinished):
        rep = ev.repetition if ev.repetition is not None else 0
        return data.spend.per_record_role.get(f"calibration/{ev.task_id}/rep_{rep}"), None
    key = (ev.individual_id, ev.task_id, ev.repetition, ev.split)
    path = paths.get(
        key, f"gen_{ev.generation}/{ev.individual_id}/{ev.task_id}/rep_{ev.repetition}"
    )
    return data.spend.per_record_role.get(path), ev.cost_usd


def cost_curve(data: EvolveData) -> CostCurve:
    """Walk progress.jsonl's finished runs (calibration first, then every evaluation) and add
    each one's record spend by role. Deterministic for the same files."""
    paths = _record_paths(data.checkpoint)
    running: dict[str, float] = {}
    totals: list[dict[str, float]] = []
    cached = unpriced = meta_unpriced = 0
    for ev in data.progress:
        if not isinstance(ev, CalibrationRunFinished | EvaluationFinished):
            continue
        if isinstance(ev, EvaluationFinished) and ev.spent is not None:
            if ev.spent.meta_usd:
                running[META] = ev.spent.meta_usd  # already cumulative: set, never added
            meta_unpriced = ev.spent.unpriced_meta_calls
        if isinstance(ev, EvaluationFinished) and ev.cached:
            cached += 1
        else:
            roles, fallback = _spent_by(data, ev, paths)
            if roles is not None:
                for role, usage in roles.items():
                    running[role] = running.get(role, 0.0) + usage.usd
                    unpriced += usage.unpriced
            elif fallback is not None:
                running[NO_RECORD] = running.get(NO_RECORD, 0.0) + fallback
            else:
                unpriced += 1
        totals.append(dict(running))
    order = sorted(running, key=lambda r: (-running[r], r))
    return CostCurve(tuple(order), tuple(totals), cached, unpriced + meta_unpriced)


def cost_curve_figure(data: EvolveData) -> str:
    """The chart (id `spend-curve`) with its caption; "" when no run has finished."""
    curve = cost_curve(data)
    if not curve.totals:
        return ""
    series = []
    lines = [("all roles", None), *((r, r) for r in curve.roles[: len(_PALETTE) - 1])]
    for i, (name, role) in enumerate(lines):
        points = []
        for k, total in enumerate(curve.totals, start=1):
            y = sum(total.values()) if role is None else total.get(role, 0.0)
            points.append(Point(float(k), y, title=f"{name} after {k} runs: {fmt_usd(y)}"))
        series.append(Series(name, _PALETTE[i], tuple(points), dashed=role is None))
    top = max(sum(t.values()) for t in curve.totals) or 1.0
    count = len(curve.totals)
    step = max(1, -(-count // 6))
    ticks = [(float(x), str(x)) for x in range(step if step > 1 else 1, count + 1, step)]
    chart = line_chart(
        series,
        label="cumulative spend by role against task runs",
        x_ticks=ticks,
        y_range=(0.0, top * 1.08),
        size=(680, 280),
        y_prefix="$",
    )
    notes = []
    if curve.cached:
        notes.append(f"{curve.cached} cached run(s) reused a result and spent nothing")
    if curve.unpriced:
        notes.append(
            f"{curve.unpriced} unpriced step(s), run(s) or meta call(s) are not in the dollars"
        )
    hidden = curve.roles[len(_PALETTE) - 1 :]
    if hidden:
        notes.append(f"roles not drawn (in the total): {', '.join(hidden)}")
    caption = (
        "Dollars spent so far by agent role (dashed: all roles) against task runs finished, in "
        "the order progress.jsonl recorded them (calibration, training and holdout runs). "
        f"'{META}' is what the reflector, mutator and crossover had spent by each run (their "
        "calls are in the ledger table below); a run without meta calls has no such line."
        + "".join(f" {n[0].upper()}{n[1:]}." for n in notes)
    )
    return figure("spend-curve", chart, caption)
