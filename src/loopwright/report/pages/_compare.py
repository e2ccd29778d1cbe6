"""The comparison page of several evolve runs: their curves on one chart, their spend against
task runs, the winners' graphs side by side and each winner's holdout score per task."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

from loopwright.errors import UsageError
from loopwright.report._html import Raw, Section, banner, esc, figure, fmt, fmt_usd, page, table
from loopwright.report._kind import detect_kind
from loopwright.report._stamp import sim_text
from loopwright.report.charts._graph import draw_workflow
from loopwright.report.charts._svg import Point, Series, line_chart
from loopwright.report.pages._evolve_cost import cost_curve
from loopwright.report.pages._evolve_data import EvolveData, load_evolve, winner_of
from loopwright.search import Checkpoint, Individual

__all__ = ["RunColumn", "compare_page", "load_comparison"]

_COLOURS = ("#2563eb", "#dd6b20", "#2f855a", "#805ad5", "#c53030", "#0f766e", "#b7791f", "#4a5568")


@dataclass(frozen=True, slots=True)
class RunColumn:
    """One run of a comparison: its label on the page, its colour and what was read."""

    label: str
    colour: str
    data: EvolveData
    checkpoint: Checkpoint


def _refuse_kinds(run_dirs: Sequence[Path]) -> None:
    kinds = {path: detect_kind(path) for path in run_dirs}  # UsageError for a non-run
    others = {p: k for p, k in kinds.items() if k != "evolve"}
    if not others:
        return
    listing = "; ".join(f"{p} is {k}" for p, k in kinds.items())
    what = (
        "a comparison cannot mix kinds of run: it lines up evolve runs generation by generation"
        if len(set(kinds.values())) > 1
        else "a comparison lines up evolve runs generation by generation; these are not evolve runs"
    )
    raise UsageError(
        what,
        got=listing,
        fix="pass only directories written by `loopwright evolve`; a run of another kind has "
        "its own page: " + "; ".join(f"`loopwright report {p}`" for p in others),
    )


def load_comparison(run_dirs: Sequence[Path]) -> list[RunColumn]:
    """Read 2 or more evolve run directories for the comparison page. Reads only.

    UsageError (one paragraph) when fewer than two directories are given, one is given twice,
    one is not a run, they are not all evolve runs, or one has no progress yet (no generation
    summarised)."""
    if len(run_dirs) < 2:
        raise UsageError(
            "a comparison needs two or more run directories",
            got=", ".join(str(p) for p in run_dirs) or "none",
            fix="pass RUN1 RUN2 ...; for one run, `loopwright report RUN` writes its own page",
        )
    resolved = [p.resolve() for p in run_dirs]
    twice = sorted({str(p) for p in run_dirs if resolved.count(p.resolve()) > 1})
    if twice:
        raise UsageError(
            "the same run directory is given twice in a comparison",
            got=", ".join(twice),
            fix="pass each run directory once",
        )
    _refuse_kinds(run_dirs)
    names = [p.resolve().name for p in run_dirs]
    columns = []
    for i, path in enumerate(run_dirs):
        data = load_evolve(path)
        cp = data.checkpoint
        if cp is None or not cp.summaries:
            raise UsageError(
                f"{path} has no progress to compare yet: no generation of it was summarised",
                got="no checkpoint.json"
                if cp is None
                else f"phase {cp.phase!r} of generation "
                f"{cp.generation}, {len(cp.summaries)} generations summarised",
                fix="compare it once its generation 0 has finished (watch it with "
                f"`loopwright report {path} --watch`), or leave it out",
            )
        label = names[i] if names.count(names[i]) == 1 else str(path)
        columns.append(RunColumn(label, _COLOURS[i % len(_COLOURS)], data, cp))
    return columns


def _status(col: RunColumn) -> str:
    if col.checkpoint.stop_reason is not None:
        return f"finished: {col.checkpoint.stop_reason}"
    return "LIVE" if col.data.holder is not None else "interrupted"


def overview_section(cols: list[RunColumn]) -> Section:
    rows = []
    for col in cols:
        cp, winner = col.checkpoint, winner_of(col.checkpoint)
        swatch = Raw(f'<span style="color:{col.colour}">&#9632;</span> {esc(col.label)}')
        rows.append(
            [
                swatch,
                _status(col),
                f"{cp.config.model}{' (simulated)' if col.data.simulated else ''}",
                cp.config.bench,
                cp.config.seed,
                cp.config.seed_workflow,
                len(cp.summaries),
                cp.spent.evaluations,
                fmt_usd(cp.spent.usd),
                winner.mode if winner else "-",
                fmt(winner.fitness if winner else None, ".3f"),
                fmt(winner.mean_score("holdout") if winner else None, ".3f"),
            ]
        )
    heads = ["run", "status", "model", "benchmark", "seed", "seed workflow", "generations",
             "evaluations", "spent", "winner", "winner train", "winner holdout"]  # fmt: skip
    body = table(heads, rows, numeric=(4, 6, 7, 8, 10, 11))
    body += _mismatch_notes(cols)
    return Section("runs", "Runs compared", body)


def _mismatch_notes(cols: list[RunColumn]) -> str:
    notes = []
    benches = {c.checkpoint.config.bench for c in cols}
    if len(benches) > 1:
        notes.append(f"the runs use different benchmarks ({', '.join(sorted(benches))})")
    holdouts = {tuple(sorted(c.checkpoint.holdout_tasks)) for c in cols}
    if len(holdouts) > 1:
        notes.append("their holdout tasks differ, so holdout means are not on the same tasks")
    return "".join(f"<p class='bad'>Careful: {esc(n)}.</p>" for n in notes)


def curves_section(cols: list[RunColumn]) -> Section:
    series = [_score_series(col, split) for col in cols for split in ("train", "holdout")]
    last = max(s.generation for c in cols for s in c.checkpoint.summaries)
    ticks = [(float(g), str(g)) for g in range(last + 1)]
    chart = line_chart(series, label="train and holdout per generation, every run",
                       x_ticks=ticks, size=(760, 320))  # fmt: skip
    caption = (
        "Best training fitness (solid) and the best's holdout score (dashed) per generation, one "
        "colour per run. Selection never sees holdout."
    )
    body = figure("compare-scores", chart, caption) + _cost_figure(cols)
    return Section("curves", "Scores and spend", body)


def _score_series(col: RunColumn, split: str) -> Series:
    """One run's train best (solid) or the best's holdout (dashed) per generation."""
    holdout = split == "holdout"
    what = "holdout" if holdout else "train best"
    points = []
    for s in col.checkpoint.summaries:
        y = s.holdout_best if holdout else s.train_best
        title = f"{col.label} gen {s.generation} {what} {fmt(y, '.3f')}"
        points.append(Point(float(s.generation), y, title=title))
    return Series(f"{col.label[:14]} {split}", col.colour, tuple(points), dashed=holdout)


def _cost_figure(cols: list[RunColumn]) -> str:
    series, longest, top = [], 1, 0.0
    for col in cols:
        totals = [sum(t.values()) for t in cost_curve(col.data).totals]
        longest, top = max(longest, len(totals)), max([top, *totals])
        points = tuple(
            Point(float(k), y, title=f"{col.label} after {k} runs: {fmt_usd(y)}")
            for k, y in enumerate(totals, start=1)
        )
        series.append(Series(col.label[:22], col.colour, points))
    step = max(1, -(-longest // 6))
    ticks = [(float(x), str(x)) for x in range(step, longest + 1, step)] or [(1.0, "1")]
    chart = line_chart(series, label="spend against task runs, every run", x_ticks=ticks,
                       y_range=(0.0, (top or 1.0) * 1.08), size=(760, 280), y_prefix="$")  # fmt: skip
    caption = (
        "Dollars spent so far by each run's agents against task runs finished (calibration, "
        "training and holdout; cached runs spend nothing)."
    )
    return figure("compare-spend", chart, caption)


def graphs_section(cols: list[RunColumn], *, use_dot: bool = True) -> Section:
    figures = []
    for i, col in enumerate(cols):
        winner = winner_of(col.checkpoint)
        if winner is None:
            continue
        drawing = draw_workflow(winner.workflow, f"run{i}", use_dot=use_dot)
        caption = f"{col.label}: winner {winner.mode} ({winner.lineage.operator})."
        figures.append(figure(f"compare-graph-{i}", drawing.svg, caption))
    body = f'<div class="side graph">{"".join(figures)}</div>'
    return Section("graphs", "The winners' workflows", body)


def _per_task(ind: Individual | None) -> dict[str, float]:
    if ind is None:
        return {}
    scores: dict[str, list[float]] = {}
    for r in ind.split_results("holdout"):
        scores.setdefault(r.task_id, []).append(r.score)
    return {t: fmean(v) for t, v in scores.items()}


def holdout_section(cols: list[RunColumn]) -> Section:
    per_run = [_per_task(winner_of(c.checkpoint)) for c in cols]
    tasks = sorted({t for scores in per_run for t in scores})
    rows = []
    for task in tasks:
        values = [scores.get(task) for scores in per_run]
        best = max((v for v in values if v is not None), default=None)
        cells: list[object] = [task]
        for v in values:
            text = fmt(v, ".3f") if v is not None else "not run"
            top = v is not None and best is not None and v == best and len(cols) > 1
            cells.append(Raw(f"<b>{text}</b>") if top else text)
        rows.append(cells)
    means = [fmt(fmean(s.values()), ".3f") if s else "-" for s in per_run]
    rows.append(["mean", *means])
    numeric = tuple(range(1, len(cols) + 1))
    body = table(["holdout task", *(c.label for c in cols)], rows, numeric=numeric)
    note = "<p class='muted'>Each winner's mean holdout score per task (bold: the best).</p>"
    return Section("holdout", "Holdout per task", note + body)


def compare_page(cols: list[RunColumn]) -> str:
    """The comparison page as HTML. Deterministic for the same run directories."""
    banners = []
    simulated = [c.label for c in cols if c.data.simulated]
    if simulated:
        model = cols[[c.label for c in cols].index(simulated[0])].checkpoint.config.model
        banners.append(banner("sim", f"{sim_text(model)} Simulated runs: {', '.join(simulated)}."))
    partial = [f"{c.label} ({_status(c)})" for c in cols if c.data.partial_reasons]
    if partial:
        banners.append(banner("partial", "PARTIAL: not finished: " + "; ".join(partial) + "."))
    sections = [overview_section(cols), curves_section(cols), graphs_section(cols),
                holdout_section(cols)]  # fmt: skip
    return page(
        title="loopwright comparison: " + " vs ".join(c.label for c in cols),
        kind="compare",
        stamp_html="",
        banners=banners,
        sections=sections,
        partial=bool(partial),
    )
