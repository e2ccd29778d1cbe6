"""Evolve page sections drawn as grids and bars: the MAP-Elites archive, the task x individual
matrix of partial credit, and spend by generation, role and node."""

from __future__ import annotations

import itertools
from collections import defaultdict
from statistics import fmean

from loopwright.errors import ConfigError
from loopwright.models import LEDGER_FILE, group_totals, read_ledger, role_kind
from loopwright.report._html import Section, figure, fmt, fmt_tokens, fmt_usd, table
from loopwright.report.charts._heat import HeatCell, HeatGrid, heat_grid
from loopwright.report.charts._svg import Bar, Segment, bar_chart, hbar_chart
from loopwright.report.pages._evolve_cost import cost_curve_figure
from loopwright.report.pages._evolve_data import EvolveData, Usage, winner_of
from loopwright.search import ArchiveSnapshot, Checkpoint, Individual, descriptors_by_name

__all__ = ["archive_section", "matrix_section", "spend_section"]

WINNER_OUTLINE = "#e53e3e"
SEED_OUTLINE = "#111111"
_SPLIT_COLOURS = {
    "train": "#2563eb",
    "holdout": "#dd6b20",
    "calibration": "#94a3b8",
    "other": "#a0aec0",
}


def _outline(cp: Checkpoint, ind_id: str) -> str | None:
    winner = winner_of(cp)
    if winner is not None and ind_id == winner.id:
        return WINNER_OUTLINE
    return SEED_OUTLINE if ind_id == cp.seed_id else None


def _labels(names: list[str], cells: list[tuple[int, ...]]) -> list[tuple[str, ...]]:
    try:
        return [d.labels for d in descriptors_by_name(names)]
    except ConfigError:  # custom descriptors: their labels are not stored, so number the bins
        return [
            tuple(str(b) for b in range(max((c[i] for c in cells), default=0) + 1))
            for i in range(len(names))
        ]


def archive_section(cp: Checkpoint) -> Section:
    if cp.archive_json is None:
        return Section("archive", "MAP-Elites archive", "<p>The archive is empty.</p>")
    snapshot = ArchiveSnapshot.parse(cp.archive_json)
    names = list(snapshot.descriptors)
    elites = {row.cell: row.individual for row in snapshot.cells}
    labels = _labels(names, list(elites))
    rest = list(itertools.product(*[range(len(lab)) for lab in labels[1:]])) or [()]
    col_label = [" / ".join(labels[k + 1][b] for k, b in enumerate(c)) or names[0] for c in rest]
    groups: tuple[tuple[str, int], ...] = ()
    if len(names) == 3:
        col_label = [labels[2][c[1]] for c in rest]
        groups = tuple((f"{names[1]}: {lab}", len(labels[2])) for lab in labels[1])
    rows = tuple(f"{names[0]}: {lab}" for lab in labels[0]) if len(names) > 1 else ("",)
    cells = {}
    for cell, ind in elites.items():
        i, j = (cell[0], rest.index(cell[1:])) if len(names) > 1 else (0, cell[0])
        where = ", ".join(
            f"{nm}={labels[k][b]}" for k, (nm, b) in enumerate(zip(names, cell, strict=True))
        )
        cells[(i, j)] = HeatCell(
            ind.fitness,
            fmt(ind.fitness),
            f"{where}\nelite {ind.mode} ({ind.lineage.operator})\n"
            f"train fitness {fmt(ind.fitness, '.3f')}",
            _outline(cp, ind.id),
        )
    total = 1
    for lab in labels:
        total *= len(lab)
    grid = HeatGrid(rows, tuple(col_label), cells, col_groups=groups, cell_size=(64, 28))
    svg = heat_grid(grid, label="MAP-Elites archive", legend="fitness")
    caption = (
        f"One elite per cell of {' x '.join(names)}; colour and number are the elite's "
        f"training fitness; {len(elites)} of {total} cells filled "
        f"({len(elites) / total:.0%}). Red outline: the winner; black: the seed."
    )
    return Section("archive", "MAP-Elites archive", figure("archive", svg, caption))


def _evaluated(cp: Checkpoint) -> list[Individual]:
    inds = [i for i in cp.individuals.values() if i.results]
    return sorted(inds, key=lambda i: (i.generation, -(i.fitness or -1.0), i.id))


def matrix_section(cp: Checkpoint) -> Section:
    inds = _evaluated(cp)
    tasks = [(t, "train") for t in cp.train_tasks] + [(t, "holdout") for t in cp.holdout_tasks]
    cells = {}
    for j, ind in enumerate(inds):
        for i, (task, split) in enumerate(tasks):
            runs = [r for r in ind.results if r.task_id == task and r.split == split]
            if not runs:
                continue
            valid = [r.score for r in runs if not r.invalid]
            mean = fmean(valid) if valid else None
            reps = ", ".join(
                "invalid" if r.invalid else f"{r.score:.2f} ({r.failure_category})" for r in runs
            )
            cells[(i, j)] = HeatCell(
                mean,
                "inv" if mean is None else f"{mean:.2f}",
                f"{ind.mode} ({ind.lineage.operator}) on {task} [{split}]: {reps}",
                _outline(cp, ind.id),
            )
    groups = tuple(
        (f"gen {g}", len(list(members)))
        for g, members in itertools.groupby(inds, key=lambda i: i.generation)
    )
    grid = HeatGrid(
        tuple(f"{t} ({s})" for t, s in tasks),
        tuple(i.id[:8] for i in inds),
        cells,
        col_groups=groups,
        cell_size=(40, 24),
    )
    svg = heat_grid(grid, label="task x individual partial credit", legend="partial credit")
    caption = (
        "Mean partial credit of every evaluated individual (columns, by the generation "
        "that made it) on every task (rows); blank: not evaluated there (holdout is run "
        "for the best and the seed only). Red outline: the winner; black: the seed."
    )
    return Section("matrix", "Tasks x individuals", figure("matrix", svg, caption))


def _record_splits(cp: Checkpoint | None) -> dict[str, str]:
    if cp is None:
        return {}
    return {r.record_path: r.split for ind in cp.individuals.values() for r in ind.results}


def _by_generation(data: EvolveData) -> dict[str, dict[str, Usage]]:
    splits = _record_splits(data.checkpoint)
    out: dict[str, dict[str, Usage]] = defaultdict(dict)
    for path, usage in data.spend.per_record.items():
        head = path.split("/", 1)[0]
        gen = f"gen {head[4:]}" if head.startswith("gen_") else head
        split = "calibration" if head == "calibration" else splits.get(path, "other")
        target = out[gen].setdefault(split, Usage())
        target.runs += usage.runs
        target.input_tokens += usage.input_tokens
        target.output_tokens += usage.output_tokens
        target.usd += usage.usd
        target.unpriced += usage.unpriced

    def order(g: str) -> tuple[int, int]:
        return (0, 0) if g == "calibration" else (1, int(g[4:]) if g[4:].isdigit() else 0)

    return {g: out[g] for g in sorted(out, key=order)}


def _usage_bars(table_: dict[str, Usage]) -> list[Bar]:
    ranked = sorted(table_.items(), key=lambda kv: (-kv[1].usd, -kv[1].tokens, kv[0]))
    return [
        Bar(
            name,
            (
                Segment(
                    u.usd,
                    "#2563eb",
                    f"{name}: {fmt_usd(u.usd)}, {u.input_tokens:,} in / "
                    f"{u.output_tokens:,} out tokens, {u.runs} steps",
                ),
            ),
            f"{fmt_usd(u.usd)} · {fmt_tokens(u.tokens)} tok",
        )
        for name, u in ranked
    ]


def _usage_rows(table_: dict[str, Usage]) -> list[list[object]]:
    ranked = sorted(table_.items(), key=lambda kv: (-kv[1].usd, -kv[1].tokens, kv[0]))
    return [
        [k, u.runs, f"{u.input_tokens:,}", f"{u.output_tokens:,}", fmt_usd(u.usd), u.unpriced or ""]
        for k, u in ranked
    ]


def spend_section(data: EvolveData) -> Section:
    spend = data.spend
    if not spend.per_record:
        return Section("spend", "Spend", "<p>No finished evaluation was found.</p>")
    gens = _by_generation(data)
    bars = []
    for gen, splits in gens.items():
        segs = tuple(
            Segment(
                u.usd,
                _SPLIT_COLOURS.get(s, "#a0aec0"),
                f"{gen} {s}: {fmt_usd(u.usd)}, {u.runs} runs, {u.tokens:,} tokens",
            )
            for s, u in sorted(splits.items())
        )
        bars.append(
            Bar(
                gen.replace("calibration", "calib."),
                segs,
                f"${sum(u.usd for u in splits.values()):.2f}",
            )
        )
    legend = [(s, c) for s, c in _SPLIT_COLOURS.items() if any(s in v for v in gens.values())]
    gen_chart = bar_chart(bars, label="spend by generation", y_prefix="$", legend=legend)
    gen_rows = [
        [
            g,
            s,
            u.runs,
            f"{u.input_tokens:,}",
            f"{u.output_tokens:,}",
            fmt_usd(u.usd),
            u.unpriced or "",
        ]
        for g, splits in gens.items()
        for s, u in sorted(splits.items())
    ]
    heads = ["runs", "input tokens", "output tokens", "dollars", "unpriced"]
    notes = ""
    if spend.unreadable:
        notes += f"<p class='bad'>{len(spend.unreadable)} unreadable record(s) not counted.</p>"
    if spend.unfinished:
        notes += f"<p class='bad'>{len(spend.unfinished)} cut-off evaluation(s) not counted.</p>"
    body = (
        figure(
            "spend-generation",
            gen_chart,
            "Dollars per generation, split by what the "
            "evaluations were for (training, holdout of the best, calibration).",
        )
        + table(["generation", "split", *heads], gen_rows, numeric=(2, 3, 4, 5, 6))
        + "<h3>By agent role</h3>"
        + cost_curve_figure(data)
        + figure(
            "spend-role",
            hbar_chart(_usage_bars(spend.by_role), label="spend by role"),
            "Dollars and tokens by agent role, over every evaluation of the run.",
        )
        + table(["role", "steps", *heads[1:]], _usage_rows(spend.by_role), numeric=(1, 2, 3, 4, 5))
        + "<h3>By node</h3>"
        + figure(
            "spend-node",
            hbar_chart(_usage_bars(spend.by_node), label="spend by node"),
            "Dollars and tokens by node id, over every workflow that has it.",
        )
        + table(["node", "steps", *heads[1:]], _usage_rows(spend.by_node), numeric=(1, 2, 3, 4, 5))
        + _ledger_by_role(data)
        + notes
    )
    return Section("spend", "Spend by generation, role and node", body)


def _ledger_by_role(data: EvolveData) -> str:
    """Every gateway call of the run (RUN_DIR/ledger.jsonl) by role, the agents apart from the
    meta roles (reflector, mutator, crossover, judge gates); "" when no gateway call was made."""
    path = data.run_dir / LEDGER_FILE
    try:
        records = read_ledger(path, torn_tail=True) if path.is_file() else []
    except ValueError:  # a malformed line: the section is left out, the page still renders
        return ""
    if not records:
        return ""
    roles = group_totals(records, "role")
    kinds = group_totals(records, "kind")
    rows = [
        [role or "(none)", role_kind(role), t.calls, t.failed_calls, f"{t.input_tokens:,}",
         f"{t.output_tokens:,}", fmt_usd(t.cost_usd), t.unpriced_calls or ""]
        for role, t in sorted(roles.items(), key=lambda kv: (role_kind(kv[0]), kv[0] or ""))
    ] + [
        [f"all {kind}", "", t.calls, t.failed_calls, f"{t.input_tokens:,}",
         f"{t.output_tokens:,}", fmt_usd(t.cost_usd), t.unpriced_calls or ""]
        for kind, t in sorted(kinds.items(), key=lambda kv: kv[0] or "")
    ]  # fmt: skip
    heads = ["role", "kind", "calls", "failed", "input tokens", "output tokens", "dollars",
             "unpriced"]  # fmt: skip
    return "<h3>Every model call by role: agents and meta (ledger.jsonl)</h3>" + table(
        heads, rows, numeric=(2, 3, 4, 5, 6, 7)
    )
