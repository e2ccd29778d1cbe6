"""The evolve page: what an evolution did, generation by generation, and why the winner won."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from loopwright._caller import Caller
from loopwright.report._html import (
    Section,
    banner,
    details,
    esc,
    figure,
    fmt,
    fmt_usd,
    page,
    table,
)
from loopwright.report._network import open_network_text
from loopwright.report._stamp import Stamp, sim_text, stamp_html
from loopwright.report.charts._svg import Flag, Point, Series, line_chart
from loopwright.report.charts._timeline import timeline_svg
from loopwright.report.pages._evolve_charts import archive_section, matrix_section, spend_section
from loopwright.report.pages._evolve_data import EvolveData, winner_of
from loopwright.report.pages._evolve_designs import designs_section
from loopwright.report.pages._evolve_lineage import (
    graphs_section,
    lineage_section,
    reflection_section,
)
from loopwright.search import (
    Calibration,
    Checkpoint,
    GenerationSummary,
    Individual,
    MutationRejected,
    Spent,
)
from loopwright.stats import paired_bootstrap

__all__ = ["evolve_page", "holdout_interval"]

_STOP_WHY = {
    "max_generations": ("it ran the number of generations it was given", "g"),
    "max_evaluations": ("the evaluation budget was spent", "e"),
    "max_train_evaluations": ("the training-run budget was spent", "x"),
    "max_usd": ("the dollar budget was spent", "u"),
    "max_wall_s": ("the wall-time budget was used up", "w"),
    "target_score": ("the best training fitness reached the target", "t"),
    "plateau": ("the best training fitness did not improve for {p} generations", "p"),
    "no_offspring": ("no novel child could be made: every mutation was rejected (see below)", ""),
}
_SETTING = {
    "g": ("budgets.max_generations", "--generations"),
    "e": ("budgets.max_evaluations", "--max-evaluations"),
    "x": ("budgets.max_train_evaluations", ""),
    "u": ("budgets.max_usd", "--max-usd"),
    "w": ("budgets.max_wall_s", "--max-wall-s"),
    "t": ("budgets.target_score", "--target-score"),
    "p": ("budgets.plateau_generations", "--plateau"),
}
"""The budget each stop reason spent, as a Python caller sets it (EvolveConfig) and as the CLI
does (its flag; none for the training-run budget, which only a config sets)."""


def stop_words(reason: str, values: dict[str, object], caller: Caller | None) -> str:
    """Why the run stopped, naming the setting as the run's caller set it: the flag for a run
    started at the command line, the config field for one started from Python, both when the
    run's header does not say (written before it recorded its caller)."""
    text, key = _STOP_WHY.get(reason, (reason, ""))
    text = text.format(**values)
    if not key:
        return text + "."
    field, flag = _SETTING[key]
    value = values[key]
    said = f"{field}={value}"
    if flag and caller == "cli":
        said = f"{flag} {value}"
    elif flag and caller is None:
        said += f"; {flag} {value} on the command line"
    return f"{text} ({said})."


def evolve_page(data: EvolveData) -> str:
    """The whole evolve report as HTML. Deterministic for a given run directory (with the
    same Graphviz, when it is used)."""
    cp = data.checkpoint
    banners = (
        [
            banner(
                "sim", sim_text(cp.config.model if cp else (data.meta.model if data.meta else None))
            )
        ]
        if data.simulated
        else []
    )
    reasons = data.partial_reasons
    if reasons:
        banners.append(banner("partial", "PARTIAL RUN: " + "; ".join(reasons) + "."))
    open_network = open_network_text(data.run_dir)
    if open_network:
        banners.append(banner("network", open_network))
    sections = [overview_section(data)]
    if cp is not None:
        compared = designs_section(cp, simulated=data.simulated)
        sections += [compared] if compared is not None else []
        sections += [
            scores_section(cp),
            stop_section(data, cp),
            outer_loop_section(data),
            graphs_section(cp),
            lineage_section(cp, data.reflections),
            reflection_section(data, cp),
            archive_section(cp),
            matrix_section(cp),
        ]
    sections.append(spend_section(data))
    if data.calibration is not None:
        sections.append(calibration_section(data.calibration))
    name = data.run_dir.resolve().name
    return page(
        title=f"loopwright evolve: {name}",
        kind="evolve",
        stamp_html=stamp_html(evolve_stamp(data)),
        banners=banners,
        sections=sections,
        partial=bool(reasons),
    )


def evolve_stamp(data: EvolveData) -> Stamp:
    """The stamp from the checkpoint (config, version) and config.yaml (commit, digest)."""
    meta, cp = data.meta, data.checkpoint
    seed_workflow = (
        cp.config.seed_workflow if cp else (meta.config.get("seed_workflow") if meta else None)
    )
    return Stamp(
        loopwright_version=cp.loopwright_version
        if cp
        else (meta.loopwright_version if meta else None),
        git_commit=(meta.git_commit if meta else None),
        model=cp.config.model if cp else (meta.model if meta else None),
        simulated=data.simulated,
        benchmark=cp.config.bench if cp else (meta.benchmark if meta else None),
        benchmark_digest=(meta.benchmark_digest if meta else None),
        seed=cp.config.seed if cp else (meta.seed if meta else None),
        extra=(("seed workflow", str(seed_workflow)),),
    )


def _cards(items: Iterable[tuple[str, str]]) -> str:
    cells = "".join(
        f'<div class="card"><div class="k">{esc(k)}</div><div class="v">{esc(v)}</div></div>'
        for k, v in items
    )
    return f'<div class="cards">{cells}</div>'


def overview_section(data: EvolveData) -> Section:
    cp = data.checkpoint
    if cp is None:
        body = (
            "<p>No generation was evaluated yet: the run is calibrating (it is live).</p>"
            if data.holder is not None
            else "<p>No generation was evaluated: the run stopped during calibration.</p>"
        )
        return Section("overview", "Overview", body)
    winner, seed = winner_of(cp), cp.individuals[cp.seed_id]
    gain = None
    if winner is not None:
        gain = paired_bootstrap(_holdout(seed), _holdout(winner), seed=cp.config.seed)
    items = [
        ("status", f"stopped: {cp.stop_reason}" if cp.stop_reason else "PARTIAL (no stop reason)"),
        ("generations evaluated", str(len(cp.summaries))),
        ("winner", f"{winner.mode} ({winner.lineage.operator})" if winner else "-"),
        ("winner train fitness", fmt(winner.fitness if winner else None, ".3f")),
        ("winner holdout", fmt(winner.mean_score("holdout") if winner else None, ".3f")),
        ("holdout gain vs seed", gain.describe() if gain else "no shared holdout tasks"),
        ("evaluations", str(cp.spent.evaluations)),
        ("spent", f"{spent_usd(cp.spent)} · {cp.spent.wall_s:.0f} s"),
        *([("of which meta roles", fmt_usd(cp.spent.meta_usd))] if cp.spent.meta_usd else []),
        ("train / holdout tasks", f"{len(cp.train_tasks)} / {len(cp.holdout_tasks)}"),
    ]
    note = ""
    if gain is not None:
        verdict = "includes 0: not a significant gain" if gain.includes_zero else "excludes 0"
        note = (
            f"<p>The winner is the best individual on <b>training</b> tasks; holdout tasks "
            f"only measure it. Its gain over the seed on holdout, a paired bootstrap over "
            f"{gain.n_tasks} holdout tasks ({gain.resamples} resamples), {esc(verdict)}.</p>"
        )
    tasks = table(
        ["split", "tasks"],
        [("train", ", ".join(cp.train_tasks)), ("holdout", ", ".join(cp.holdout_tasks))],
    )
    return Section("overview", "Overview", _cards(items) + note + tasks)


def _holdout(ind: Individual) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in ind.split_results("holdout"):
        out.setdefault(r.task_id, []).append(r.score)
    return out


def holdout_interval(ind: Individual | None, seed: int) -> tuple[float, float] | None:
    """95% percentile interval of `ind`'s mean holdout score, resampling holdout tasks
    (2,000 resamples, seeded): the paired bootstrap against a zero baseline. None without
    holdout scores."""
    if ind is None:
        return None
    scores = _holdout(ind)
    ci = paired_bootstrap({t: [0.0] for t in scores}, scores, seed=seed)
    return None if ci is None else (ci.low, ci.high)


def scores_section(cp: Checkpoint) -> Section:
    summaries = cp.summaries
    intervals = [holdout_interval(cp.individuals.get(s.best_id), cp.config.seed) for s in summaries]
    ticks = [(float(s.generation), str(s.generation)) for s in summaries]
    threshold = cp.config.overfit_gap
    alarms = sum(1 for s in summaries if s.overfit.alarm)
    body = (
        figure(
            "scores",
            _scores_chart(summaries, intervals, ticks),
            "Training fitness (mean "
            "partial credit) of the best and of the population, and the best's holdout score "
            "with its 95% bootstrap interval over holdout tasks. Holdout is reported only; "
            "selection never sees it.",
        )
        + figure(
            "overfit",
            _gap_chart(summaries, threshold, ticks),
            f"Best train minus holdout, every generation; alarms above {threshold}: {alarms}.",
        )
        + table(
            [
                "gen",
                "best",
                "train best",
                "train mean",
                "holdout",
                "95% interval",
                "gap",
                "alarm",
                "diversity",
                "stopped",
                "coverage",
                "evals",
                "spent",
            ],
            [_score_row(s, i) for s, i in zip(summaries, intervals, strict=True)],
            numeric=(2, 3, 4, 6, 8, 9, 10, 11, 12),
        )
    )
    return Section("scores", "Train and holdout per generation", body)


def _alarm_flag(s: GenerationSummary, y: float | None) -> Flag:
    tip = f"gen {s.generation}: gap {fmt(s.overfit.gap, '+.3f')} > {s.overfit.threshold}"
    return Flag(float(s.generation), y or 0.0, "overfit", tip)


def _scores_chart(
    summaries: tuple[GenerationSummary, ...],
    intervals: list[tuple[float, float] | None],
    ticks: list[tuple[float, str]],
) -> str:
    def points(name: str, values: list[float | None]) -> tuple[Point, ...]:
        return tuple(
            Point(float(s.generation), v, title=f"gen {s.generation} {name} {fmt(v, '.3f')}")
            for s, v in zip(summaries, values, strict=True)
        )

    hold = tuple(
        Point(
            float(s.generation),
            s.holdout_best,
            i[0] if i else None,
            i[1] if i else None,
            _hold_tip(s, i),
        )
        for s, i in zip(summaries, intervals, strict=True)
    )
    series = [
        Series("train best", "#2563eb", points("train best", [s.train_best for s in summaries])),
        Series(
            "train mean",
            "#7aa2f7",
            points("train mean", [s.train_mean for s in summaries]),
            dashed=True,
        ),
        Series("holdout (best)", "#dd6b20", hold),
    ]
    flags = [_alarm_flag(s, s.holdout_best) for s in summaries if s.overfit.alarm]
    shown = [p.low if p.low is not None else p.y for sr in series for p in sr.points]
    lowest = min((v for v in shown if v is not None), default=0.0)
    y_lo = max(0.0, math.floor((lowest - 0.05) * 10) / 10)  # zoom in, on a round tick
    return line_chart(
        series,
        label="train and holdout score per generation",
        x_ticks=ticks,
        y_range=(y_lo, 1.0),
        flags=flags,
    )


def _gap_chart(
    summaries: tuple[GenerationSummary, ...], threshold: float, ticks: list[tuple[float, str]]
) -> str:
    gaps = tuple(
        Point(
            float(s.generation),
            s.overfit.gap,
            title=f"gen {s.generation} gap {fmt(s.overfit.gap, '+.3f')}",
        )
        for s in summaries
    )
    values = [p.y for p in gaps if p.y is not None]
    return line_chart(
        [Series("train - holdout", "#805ad5", gaps)],
        label="overfit gap per generation",
        x_ticks=ticks,
        y_range=(min([*values, 0.0]) - 0.05, max([*values, threshold]) + 0.1),
        threshold=(threshold, f"alarm > {threshold}"),
        flags=[_alarm_flag(s, s.overfit.gap) for s in summaries if s.overfit.alarm],
        size=(680, 220),
    )


def _hold_tip(s: GenerationSummary, interval: tuple[float, float] | None) -> str:
    tip = f"gen {s.generation} holdout {fmt(s.holdout_best, '.3f')}"
    if interval is not None:
        tip += f" (95% {interval[0]:.3f} .. {interval[1]:.3f})"
    return tip


def _score_row(s: GenerationSummary, interval: tuple[float, float] | None) -> list[object]:
    span = "-" if interval is None else f"{interval[0]:.2f} .. {interval[1]:.2f}"
    return [
        s.generation,
        s.best_id[:8],
        fmt(s.train_best),
        fmt(s.train_mean),
        fmt(s.holdout_best),
        span,
        fmt(s.overfit.gap, "+.2f"),
        "ALARM" if s.overfit.alarm else "",
        s.diversity,
        s.stopped,
        f"{s.archive_coverage:.2f}",
        s.spent.evaluations,
        spent_usd(s.spent),
    ]


def _caller(data: EvolveData) -> Caller | None:
    return data.meta.caller if data.meta is not None else None


def _resume(data: EvolveData) -> str:
    cli, python = "loopwright evolve --resume --run-dir DIR", "loopwright.resume(DIR)"
    who = _caller(data)
    return cli if who == "cli" else python if who == "python" else f"{python} or {cli}"


def stop_section(data: EvolveData, cp: Checkpoint) -> Section:
    b = cp.config.budgets
    if cp.stop_reason is None:
        then = (
            "Write this report again when it ends."
            if data.holder is not None
            else f"Resume it with <code>{esc(_resume(data))}</code>."
        )
        text = (
            f"The run has no stop reason: it {data.state_words} in generation "
            f"{cp.generation}, phase {cp.phase!r}. {then}"
        )
    else:
        values: dict[str, object] = {
            "g": b.max_generations, "e": b.max_evaluations, "x": b.max_train_evaluations,
            "u": b.max_usd, "w": b.max_wall_s, "t": b.target_score, "p": b.plateau_generations,
        }  # fmt: skip
        why = stop_words(cp.stop_reason, values, _caller(data))
        text = f"Stopped with <b>{esc(cp.stop_reason)}</b>: {esc(why)}"
    used = [
        ("generations", len(cp.summaries), b.max_generations),
        ("evaluations", cp.spent.evaluations, b.max_evaluations),
        ("dollars", spent_usd(cp.spent), b.max_usd),
        ("wall seconds", f"{cp.spent.wall_s:.0f}", b.max_wall_s),
        (
            "best train fitness",
            fmt(max((s.train_best or 0.0 for s in cp.summaries), default=None), ".3f"),
            b.target_score,
        ),
        ("plateau generations", "", b.plateau_generations),
    ]
    budget = table(
        ["budget", "used", "limit"],
        [(k, u, "-" if lim is None else lim) for k, u, lim in used],
        numeric=(1, 2),
    )
    return Section("stop", "Why the run stopped", f"<p>{text}</p>" + budget + _rejections(data))


def _rejections(data: EvolveData) -> str:
    rejected = [e for e in data.progress if isinstance(e, MutationRejected)]
    if not rejected:
        return "<p class='muted'>No mutation was rejected.</p>"
    by_gen: Counter[tuple[int, str]] = Counter((e.generation, e.stage) for e in rejected)
    stages = sorted({stage for _, stage in by_gen})
    rows = [
        [g, *(by_gen[(g, stage)] for stage in stages), sum(by_gen[(g, st)] for st in stages)]
        for g in sorted({g for g, _ in by_gen})
    ]
    ops = Counter((e.stage, e.operator) for e in rejected)
    by_op = table(
        ["stage", "operator", "rejected"],
        [(st, op, k) for (st, op), k in ops.most_common()],
        numeric=(2,),
    )
    reasons = Counter((e.reason or "").split(" (")[0] for e in rejected)
    listing = table(["reason", "times"], reasons.most_common(20), numeric=(1,))
    numeric = tuple(range(1, len(stages) + 2))
    return (
        f"<h3>Rejected mutations ({len(rejected)})</h3>"
        + table(["generation", *stages, "total"], rows, numeric=numeric)
        + details("by operator", by_op)
        + details("most common reasons", listing)
    )


def outer_loop_section(data: EvolveData) -> Section:
    if not data.outer_events:
        body = "<p class='muted'>No outer_loop/events.jsonl in this run directory.</p>"
        return Section("outer-loop", "Outer loop timeline", body)
    svg = timeline_svg(data.outer_events, "outer loop timeline", width=1100)
    caption = (
        "The outer loop runs as a workflow: each bar is one visit of its seed, evaluate, "
        "reflect and evolve steps (from outer_loop/events.jsonl); the bar's length is "
        "wall time, so this shows where the run's time went."
    )
    return Section("outer-loop", "Outer loop timeline", figure("outer-loop", svg, caption))


def calibration_section(calibration: Calibration | str) -> Section:
    if isinstance(calibration, str):
        return Section("calibration", "Calibration", f"<p>Unreadable: {esc(calibration)}</p>")
    rows = [
        (r.task_id, r.level, fmt(r.pass_rate), fmt(r.mean_score), r.verdict)
        for r in calibration.rows
    ]
    head = (
        f"<p>Pass-rate band {esc(list(calibration.band))}: tasks the seed resolves too often or "
        "too rarely are dropped.</p>"
    )
    head += "".join(f"<p><strong>Warning:</strong> {esc(w)}</p>" for w in calibration.warnings)
    body = head + table(["task", "level", "pass rate", "mean score", "split"], rows, numeric=(2, 3))
    return Section("calibration", "Calibration", body)


def spent_usd(spent: Spent) -> str:
    """The dollars of `spent`, never $0 for a cost that is not known: "$X + N unpriced", or
    "unknown (N unpriced)" when nothing known was priced."""
    if not spent.unpriced:
        return fmt_usd(spent.usd)
    if spent.usd == 0:
        return f"unknown ({spent.unpriced} unpriced)"
    return f"{fmt_usd(spent.usd)} + {spent.unpriced} unpriced"
