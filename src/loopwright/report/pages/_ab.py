"""The A/B page: the scoreboard of a loop A/B recording (docs/ab.md) as a person reads it:
the promotion, the loop x (brief, tier) matrix with the correctness gate, buckets, ranking,
pairwise differences with their intervals, every cell's medians and spread, and money.

The recording's files are read once, through the harness's own typed models (`RecordHeader`,
`Scoreboard`, `CellResult`: the models that wrote them); a recording without a scoreboard yet
shows its finished cells."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from loopwright.harness import (
    CellResult,
    CellRow,
    Manifest,
    RecordHeader,
    Scoreboard,
    load_results,
    read_header,
    read_scoreboard,
)
from loopwright.report._html import Section, banner, esc, figure, fmt, fmt_usd, page, table
from loopwright.report._network import open_network_text
from loopwright.report._stamp import Stamp, stamp_html
from loopwright.report.charts._heat import HeatCell, HeatGrid, heat_grid
from loopwright.report.charts._svg import Bar, Interval, Segment, hbar_chart, interval_chart

__all__ = ["AbData", "ab_page", "load_ab"]

GATE_OUTLINE = "#e53e3e"
SIM_AB = (
    "SIMULATED RESULTS: stand-in models answered this recording, not real LLMs. The ranking "
    "shows how the loops fare against the stand-ins; such a scoreboard cannot be applied."
)
HEADER_FILE = "record.json"
SCOREBOARD_FILE = "scoreboard.json"


@dataclass(frozen=True, slots=True)
class AbData:
    """A recording: its header (None when only a scoreboard is there), its scoreboard (None
    until `ab score` or the end of `ab record` wrote one) and the finished cells' results."""

    run_dir: Path
    header: RecordHeader | None
    scoreboard: Scoreboard | None
    results: tuple[CellResult, ...]

    @property
    def source(self) -> RecordHeader | Scoreboard | None:
        """Where provenance, manifest and suite are read from: the scoreboard, else the header."""
        return self.scoreboard or self.header

    @property
    def simulated(self) -> bool:
        return self.source is not None and self.source.simulated

    @property
    def partial_reasons(self) -> list[str]:
        if self.scoreboard is None:
            total = self.header.run_count if self.header is not None else "?"
            return [
                f"no scoreboard.json yet ({len(self.results)} of {total} runs recorded): "
                "`loopwright ab score DIR` builds it"
            ]
        sb = self.scoreboard
        if not sb.complete:
            return [f"incomplete recording: {sb.runs_recorded} of {sb.run_count} runs"]
        return []


def load_ab(run_dir: Path) -> AbData:
    """Read an A/B record directory (record.json, scoreboard.json, cells/*/result.json), each
    file validated by its model. A missing header or scoreboard is None; ConfigError (what,
    got) when a file is there but invalid."""
    header = read_header(run_dir) if (run_dir / HEADER_FILE).is_file() else None
    scoreboard_path = run_dir / SCOREBOARD_FILE
    scoreboard = read_scoreboard(scoreboard_path) if scoreboard_path.is_file() else None
    return AbData(run_dir, header, scoreboard, tuple(load_results(run_dir)))


def _manifest(source: RecordHeader | Scoreboard) -> Manifest | None:
    """The resolved manifest a header or scoreboard carries, as the harness's model."""
    try:
        return Manifest.model_validate(source.manifest)
    except ValidationError:
        return None


def ab_stamp(data: AbData) -> Stamp:
    """Commit and dirty flag from the provenance, the tier bindings as the model, the brief
    suite as the benchmark, the manifest's seed."""
    source = data.source
    if source is None:
        return Stamp(None, None, None, False, None, None, None, (("manifest digest", ""),))
    prov, suite, manifest = source.provenance, source.brief_suite, _manifest(source)
    commit = prov.commit
    if commit and prov.dirty:
        commit += "+dirty"
    tiers = manifest.tiers if manifest is not None else {}
    extra = [("manifest digest", source.manifest_digest[:12])]
    if data.scoreboard is not None:
        extra.append(("rubric", f"v{data.scoreboard.rubric.version}"))
    return Stamp(
        loopwright_version=prov.loopwright_version,
        git_commit=commit,
        model=", ".join(f"{t}={m}" for t, m in tiers.items()) or None,
        simulated=data.simulated,
        benchmark=f"brief suite v{suite.version}",
        benchmark_digest=suite.digest,
        seed=manifest.seed if manifest is not None else None,
        extra=tuple(extra),
    )


def ab_page(data: AbData) -> str:
    """The whole A/B report as HTML. Deterministic for the same files."""
    banners = [banner("sim", SIM_AB)] if data.simulated else []
    reasons = data.partial_reasons
    if reasons:
        banners.append(banner("partial", "PARTIAL RECORDING: " + "; ".join(reasons) + "."))
    open_network = open_network_text(data.run_dir)
    if open_network:
        banners.append(banner("network", open_network))
    sb = data.scoreboard
    if sb is not None and sb.stale:
        banners.append(banner("stale", f"STALE: {sb.stale}"))
    if sb is None:
        sections = [_cells_so_far(data)]
    else:
        sections = [
            _promotion(sb),
            _matrix(sb),
            _buckets(sb),
            _ranking(sb),
            _pairwise(sb),
            _cells(sb),
            _money(sb),
        ]
    return page(
        title=f"loopwright A/B scoreboard: {data.run_dir.resolve().name}",
        kind="ab",
        stamp_html=stamp_html(ab_stamp(data)),
        banners=banners,
        sections=sections,
        partial=bool(reasons),
    )


def _promotion(sb: Scoreboard) -> Section:
    promo, rubric = sb.promotion, sb.rubric
    text = (
        "\n".join(promo.lines)
        if promo.lines
        else "(empty recommendation: no loop cleared the gate)"
    )
    weights = ", ".join(f"{k} {v}" for k, v in rubric.weights.items())
    body = (
        f"<pre>{esc(text)}</pre><p>{esc(promo.note)}</p>"
        f"<p class='muted'>{esc(sb.runs_recorded)} of {esc(sb.run_count)} runs; "
        f"rubric weights: {esc(weights)}; correctness gate "
        f"{esc(rubric.correctness_gate_floor)}.</p>"
    )
    return Section("promotion", "Promotion: the settings to apply", body)


def _columns(cells: list[CellRow]) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for c in cells:
        seen.setdefault((c.brief, c.tier))
    return list(seen)


def _loops(sb: Scoreboard) -> list[str]:
    ranked = [r.loop for r in sb.ranking]
    rest = sorted({c.loop for c in sb.cells} - set(ranked))
    return ranked + rest


def _num(value: float | None) -> str:
    """A figure for a cell: thousands with separators, small values with 3 digits."""
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _spread(c: CellRow, figure: str) -> str:
    """`low..high` of one figure over the repetitions ("-" for a side that is not there)."""
    side = (c.spread or {}).get(figure)
    return f"{_num(side.low if side else None)}..{_num(side.high if side else None)}"


def _tamper_note(c: CellRow) -> str:
    tampered = c.statuses.get("tamper", 0)
    return f"\n{tampered} of {sum(c.statuses.values())} runs tampered" if tampered else ""


def _cell_tip(c: CellRow) -> str:
    head = f"{c.loop} on {c.brief} [{c.tier}: {c.model}]"
    if c.unavailable:
        return f"{head}: unavailable: {c.unavailable}"
    parts = [f"{k} {_num(v)} [{_spread(c, k)}]" for k, v in (c.median or {}).items()]
    gate = "passed" if c.gate_passed else "FAILED"
    return (
        f"{head}\ncomposite {fmt(c.composite, '.3f')}, gate {gate}{_tamper_note(c)}\n"
        + "\n".join(parts)
    )


def _grid(sb: Scoreboard, value_of: str) -> HeatGrid:
    loops, cols = _loops(sb), _columns(sb.cells)
    out: dict[tuple[int, int], HeatCell] = {}
    for c in sb.cells:
        i, j = loops.index(c.loop), cols.index((c.brief, c.tier))
        if c.unavailable:
            out[(i, j)] = HeatCell(None, "n/a", _cell_tip(c))
            continue
        value = c.composite if value_of == "composite" else (c.median or {}).get("correctness")
        failed = not c.gate_passed
        text = ("✗ " if failed else "") + fmt(value)
        out[(i, j)] = HeatCell(value, text, _cell_tip(c), GATE_OUTLINE if failed else None)
    groups: list[tuple[str, int]] = []
    for brief, _ in cols:
        if groups and groups[-1][0] == brief:
            groups[-1] = (brief, groups[-1][1] + 1)
        else:
            groups.append((brief, 1))
    return HeatGrid(
        tuple(loops), tuple(t for _, t in cols), out, col_groups=tuple(groups), cell_size=(64, 28)
    )


def _matrix(sb: Scoreboard) -> Section:
    floor = sb.rubric.correctness_gate_floor
    composite = heat_grid(
        _grid(sb, "composite"), label="composite per loop and cell", legend="composite"
    )
    correct = heat_grid(_grid(sb, "correctness"), label="median correctness", legend="correctness")
    body = figure(
        "ab-composite",
        composite,
        "Composite score of each loop (rows, best ranked first) in each "
        "(brief, tier) cell; ✗ and a red outline: the loop failed the correctness gate there; "
        "n/a: it could not run. Hover a cell for medians and spread.",
    ) + figure(
        "ab-correctness",
        correct,
        f"Median fraction of hidden checks passed; the gate is {floor}.",
    )
    return Section("matrix", "Scoreboard matrix", body)


def _buckets(sb: Scoreboard) -> Section:
    parts = []
    for b in sb.buckets:
        rows = [(s.loop, fmt(s.standing, ".3f"), s.disqualified or "") for s in b.standings]
        head = f"<h3>{esc(b.complexity)}: winner {esc(b.winner or 'none')}</h3>"
        parts.append(head + table(["loop", "standing", "disqualified"], rows, numeric=(1,)))
    return Section("buckets", "Complexity buckets", "".join(parts) or "<p>none</p>")


def _ranking(sb: Scoreboard) -> Section:
    bars = [
        Bar(
            r.loop,
            (
                Segment(
                    r.mean_composite or 0.0,
                    "#2563eb",
                    f"{r.loop}: mean composite {fmt(r.mean_composite, '.3f')}",
                ),
            ),
            fmt(r.mean_composite, ".3f"),
        )
        for r in sb.ranking
    ]
    rows = [
        (
            r.rank,
            r.loop,
            fmt(r.mean_composite, ".3f"),
            r.cells,
            r.gate_failures,
            r.unavailable_cells,
        )
        for r in sb.ranking
    ]
    body = figure(
        "ab-ranking",
        hbar_chart(bars, label="ranking"),
        "Mean composite over each loop's measured cells.",
    ) + table(
        ["rank", "loop", "mean composite", "cells", "gate failures", "unavailable"],
        rows,
        numeric=(0, 2, 3, 4, 5),
    )
    return Section("ranking", "Ranking", body)


def _pairwise(sb: Scoreboard) -> Section:
    pairs = sb.pairwise
    if not pairs:
        return Section("pairwise", "Pairwise differences", "<p>Fewer than two ranked loops.</p>")
    intervals = [
        Interval(
            f"{p.a} − {p.b}",
            p.mean_difference,
            p.low,
            p.high,
            p.clear,
            f"{p.a} minus {p.b}: {fmt(p.mean_difference, '+.3f')} "
            f"({fmt(p.low, '+.3f')} .. {fmt(p.high, '+.3f')}), {p.cells} cells",
        )
        for p in pairs
    ]
    rows = [
        (
            p.a,
            p.b,
            fmt(p.mean_difference, "+.3f"),
            f"{fmt(p.low, '+.3f')} .. {fmt(p.high, '+.3f')}",
            p.cells,
            "clear" if p.clear else "within noise",
        )
        for p in pairs
    ]
    body = figure(
        "ab-pairwise",
        interval_chart(intervals, label="pairwise differences"),
        "Composite of a minus b, paired over shared cells, with the 95% bootstrap "
        "interval; solid: the interval excludes zero (a real order), hollow: noise.",
    ) + table(
        ["a", "b", "mean difference", "95% interval", "cells", "verdict"], rows, numeric=(2, 4)
    )
    return Section("pairwise", "Pairwise differences", body)


def _cells(sb: Scoreboard) -> Section:
    figures = ("correctness", "tokens", "wall_clock_s", "turns", "replans_used")
    rows = []
    for c in sb.cells:
        med = c.median or {}
        shown = [f"{_num(med[k])} [{_spread(c, k)}]" if k in med else "-" for k in figures]
        gate = "n/a" if c.unavailable else ("pass" if c.gate_passed else "FAIL")
        tampered = c.statuses.get("tamper", 0)
        rows.append(
            [
                c.loop,
                c.brief,
                c.tier,
                f"{c.runs} ({tampered} tamper)" if tampered else c.runs,
                *shown,
                fmt(c.composite, ".3f"),
                gate,
                c.unavailable or "",
            ]
        )
    heads = ["loop", "brief", "tier", "runs", *figures, "composite", "gate", "unavailable"]
    return Section("cells", "Every cell: medians [low..high]", table(heads, rows, numeric=(3, 9)))


def _money(sb: Scoreboard) -> Section:
    rows = [
        (
            m.provider,
            m.model,
            m.calls,
            m.failed_calls,
            f"{m.input_tokens:,}",
            f"{m.output_tokens:,}",
            fmt_usd(m.cost_usd),
            m.unpriced_calls,
        )
        for m in sb.money
    ]
    body = table(
        [
            "provider",
            "model",
            "calls",
            "failed",
            "input tokens",
            "output tokens",
            "dollars",
            "unpriced",
        ],
        rows,
        numeric=(2, 3, 4, 5, 6, 7),
    )
    if sb.money_by_loop:
        body += "<h3>By loop</h3>" + table(
            ["loop", "totals"],
            [
                (loop, ", ".join(f"{k} {v}" for k, v in t.model_dump().items()))
                for loop, t in sb.money_by_loop.items()
            ],
        )
    return Section("money", "Money (from the ledger; tokens rank, dollars inform)", body)


def _cells_so_far(data: AbData) -> Section:
    rows = [
        (
            r.cell.loop,
            r.cell.brief,
            r.cell.tier,
            r.cell.repetition,
            r.status,
            fmt(r.correctness),
            fmt_usd(r.cost_usd),
            r.reason or "",
        )
        for r in data.results
    ]
    body = "<p>No scoreboard yet; the finished cells:</p>" + table(
        ["loop", "brief", "tier", "rep", "status", "correctness", "cost", "reason"],
        rows,
        numeric=(3, 5, 6),
    )
    return Section("cells", "Recorded cells", body)
