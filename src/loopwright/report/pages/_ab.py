"""The A/B page: the scoreboard of a loop A/B recording (docs/ab.md) as a person reads it:
the promotion, the loop x (brief, tier) matrix with the correctness gate, buckets, ranking,
pairwise differences with their intervals, every cell's medians and spread, and money.

`scoreboard.json` is read as plain JSON in the documented shape, so this page does not depend
on the harness's models; a recording without a scoreboard yet shows its finished cells."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopwright.report._html import Section, banner, esc, figure, fmt, fmt_usd, page, table
from loopwright.report._stamp import Stamp, stamp_html
from loopwright.report.charts._heat import HeatCell, HeatGrid, heat_grid
from loopwright.report.charts._svg import Bar, Interval, Segment, hbar_chart, interval_chart

__all__ = ["AbData", "ab_page", "load_ab"]

GATE_OUTLINE = "#e53e3e"
SIM_AB = (
    "SIMULATED RESULTS: stand-in models answered this recording, not real LLMs. The ranking "
    "shows how the loops fare against the stand-ins; such a scoreboard cannot be applied."
)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


@dataclass(frozen=True, slots=True)
class AbData:
    """A recording: its header, its scoreboard (None until `ab score` or the end of
    `ab record` wrote one) and the finished cells' results."""

    run_dir: Path
    header: dict[str, Any]
    scoreboard: dict[str, Any] | None
    results: tuple[dict[str, Any], ...]

    @property
    def simulated(self) -> bool:
        source = self.scoreboard or self.header
        return bool(source.get("simulated"))

    @property
    def partial_reasons(self) -> list[str]:
        if self.scoreboard is None:
            return [
                f"no scoreboard.json yet ({len(self.results)} of "
                f"{self.header.get('run_count', '?')} runs recorded): "
                "`loopwright ab score DIR` builds it"
            ]
        sb = self.scoreboard
        if not sb.get("complete", True):
            return [
                f"incomplete recording: {sb.get('runs_recorded')} of {sb.get('run_count')} runs"
            ]
        return []


def load_ab(run_dir: Path) -> AbData:
    """Read an A/B record directory (record.json, scoreboard.json, cells/*/result.json)."""
    header = _json(run_dir / "record.json")
    scoreboard = _json(run_dir / "scoreboard.json")
    results = [_json(p) for p in sorted(run_dir.glob("cells/*/result.json"))]
    return AbData(
        run_dir=run_dir,
        header=header if isinstance(header, dict) else {},
        scoreboard=scoreboard if isinstance(scoreboard, dict) else None,
        results=tuple(r for r in results if isinstance(r, dict)),
    )


def ab_stamp(data: AbData) -> Stamp:
    """Commit and dirty flag from the provenance, the tier bindings as the model, the brief
    suite as the benchmark, the manifest's seed."""
    source = data.scoreboard or data.header
    prov = source.get("provenance") or {}
    manifest = source.get("manifest") or {}
    suite = source.get("brief_suite") or {}
    commit = prov.get("commit")
    if commit and prov.get("dirty"):
        commit += "+dirty"
    tiers = manifest.get("tiers") or {}
    extra = [("manifest digest", str(source.get("manifest_digest", ""))[:12])]
    if data.scoreboard is not None:
        extra.append(("rubric", f"v{(data.scoreboard.get('rubric') or {}).get('version', '?')}"))
    return Stamp(
        loopwright_version=prov.get("loopwright_version"),
        git_commit=commit,
        model=", ".join(f"{t}={m}" for t, m in tiers.items()) or None,
        simulated=data.simulated,
        benchmark=f"brief suite v{suite['version']}" if "version" in suite else None,
        benchmark_digest=suite.get("digest"),
        seed=manifest.get("seed"),
        extra=tuple(extra),
    )


def ab_page(data: AbData) -> str:
    """The whole A/B report as HTML. Deterministic for the same files."""
    banners = [banner("sim", SIM_AB)] if data.simulated else []
    reasons = data.partial_reasons
    if reasons:
        banners.append(banner("partial", "PARTIAL RECORDING: " + "; ".join(reasons) + "."))
    sb = data.scoreboard
    if sb is not None and sb.get("stale"):
        banners.append(banner("stale", f"STALE: {sb['stale']}"))
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


def _rows(sb: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = sb.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _promotion(sb: dict[str, Any]) -> Section:
    promo = sb.get("promotion") or {}
    lines = promo.get("lines") or []
    text = "\n".join(lines) if lines else "(empty recommendation: no loop cleared the gate)"
    rubric = sb.get("rubric") or {}
    weights = ", ".join(f"{k} {v}" for k, v in (rubric.get("weights") or {}).items())
    body = (
        f"<pre>{esc(text)}</pre><p>{esc(promo.get('note', ''))}</p>"
        f"<p class='muted'>{esc(sb.get('runs_recorded'))} of {esc(sb.get('run_count'))} runs; "
        f"rubric weights: {esc(weights)}; correctness gate "
        f"{esc(rubric.get('correctness_gate_floor'))}.</p>"
    )
    return Section("promotion", "Promotion: the settings to apply", body)


def _columns(cells: list[dict[str, Any]]) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for c in cells:
        seen.setdefault((str(c.get("brief")), str(c.get("tier"))))
    return list(seen)


def _loops(sb: dict[str, Any]) -> list[str]:
    ranked = [str(r.get("loop")) for r in _rows(sb, "ranking")]
    rest = sorted({str(c.get("loop")) for c in _rows(sb, "cells")} - set(ranked))
    return ranked + rest


def _num(value: Any) -> str:
    """A figure for a cell: thousands with separators, small values with 3 digits."""
    if not isinstance(value, int | float):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _cell_tip(c: dict[str, Any]) -> str:
    head = f"{c.get('loop')} on {c.get('brief')} [{c.get('tier')}: {c.get('model')}]"
    if c.get("unavailable"):
        return f"{head}: unavailable: {c['unavailable']}"
    med, spread = c.get("median") or {}, c.get("spread") or {}
    parts = [
        f"{k} {_num(v)} [{_num(spread.get(k, {}).get('low'))}.."
        f"{_num(spread.get(k, {}).get('high'))}]"
        for k, v in med.items()
    ]
    gate = "passed" if c.get("gate_passed") else "FAILED"
    return f"{head}\ncomposite {fmt(c.get('composite'), '.3f')}, gate {gate}\n" + "\n".join(parts)


def _grid(sb: dict[str, Any], value_of: str) -> HeatGrid:
    cells = _rows(sb, "cells")
    loops, cols = _loops(sb), _columns(cells)
    out: dict[tuple[int, int], HeatCell] = {}
    for c in cells:
        i, j = (
            loops.index(str(c.get("loop"))),
            cols.index((str(c.get("brief")), str(c.get("tier")))),
        )
        if c.get("unavailable"):
            out[(i, j)] = HeatCell(None, "n/a", _cell_tip(c))
            continue
        value = (
            c.get("composite")
            if value_of == "composite"
            else (c.get("median") or {}).get("correctness")
        )
        failed = not c.get("gate_passed")
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


def _matrix(sb: dict[str, Any]) -> Section:
    floor = (sb.get("rubric") or {}).get("correctness_gate_floor")
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


def _buckets(sb: dict[str, Any]) -> Section:
    parts = []
    for b in _rows(sb, "buckets"):
        rows = [
            (s.get("loop"), fmt(s.get("standing"), ".3f"), s.get("disqualified") or "")
            for s in b.get("standings") or []
        ]
        head = f"<h3>{esc(b.get('complexity'))}: winner {esc(b.get('winner') or 'none')}</h3>"
        parts.append(head + table(["loop", "standing", "disqualified"], rows, numeric=(1,)))
    return Section("buckets", "Complexity buckets", "".join(parts) or "<p>none</p>")


def _ranking(sb: dict[str, Any]) -> Section:
    ranking = _rows(sb, "ranking")
    bars = [
        Bar(
            str(r.get("loop")),
            (
                Segment(
                    float(r.get("mean_composite") or 0.0),
                    "#2563eb",
                    f"{r.get('loop')}: mean composite {fmt(r.get('mean_composite'), '.3f')}",
                ),
            ),
            fmt(r.get("mean_composite"), ".3f"),
        )
        for r in ranking
    ]
    rows = [
        (
            r.get("rank"),
            r.get("loop"),
            fmt(r.get("mean_composite"), ".3f"),
            r.get("cells"),
            r.get("gate_failures"),
            r.get("unavailable_cells"),
        )
        for r in ranking
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


def _pairwise(sb: dict[str, Any]) -> Section:
    pairs = _rows(sb, "pairwise")
    if not pairs:
        return Section("pairwise", "Pairwise differences", "<p>Fewer than two ranked loops.</p>")
    intervals = [
        Interval(
            f"{p.get('a')} − {p.get('b')}",
            float(p.get("mean_difference", 0.0)),
            float(p.get("low", 0.0)),
            float(p.get("high", 0.0)),
            bool(p.get("clear")),
            f"{p.get('a')} minus {p.get('b')}: {fmt(p.get('mean_difference'), '+.3f')} "
            f"({fmt(p.get('low'), '+.3f')} .. {fmt(p.get('high'), '+.3f')}), "
            f"{p.get('cells')} cells",
        )
        for p in pairs
    ]
    rows = [
        (
            p.get("a"),
            p.get("b"),
            fmt(p.get("mean_difference"), "+.3f"),
            f"{fmt(p.get('low'), '+.3f')} .. {fmt(p.get('high'), '+.3f')}",
            p.get("cells"),
            "clear" if p.get("clear") else "within noise",
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


def _cells(sb: dict[str, Any]) -> Section:
    figures = ("correctness", "tokens", "wall_clock_s", "turns", "replans_used")
    rows = []
    for c in _rows(sb, "cells"):
        med, spread = c.get("median") or {}, c.get("spread") or {}
        shown = [
            f"{_num(med[k])} [{_num((spread.get(k) or {}).get('low'))}.."
            f"{_num((spread.get(k) or {}).get('high'))}]"
            if k in med
            else "-"
            for k in figures
        ]
        gate = "n/a" if c.get("unavailable") else ("pass" if c.get("gate_passed") else "FAIL")
        rows.append(
            [
                c.get("loop"),
                c.get("brief"),
                c.get("tier"),
                c.get("runs"),
                *shown,
                fmt(c.get("composite"), ".3f"),
                gate,
                c.get("unavailable") or "",
            ]
        )
    heads = ["loop", "brief", "tier", "runs", *figures, "composite", "gate", "unavailable"]
    return Section("cells", "Every cell: medians [low..high]", table(heads, rows, numeric=(3, 9)))


def _money(sb: dict[str, Any]) -> Section:
    rows = [
        (
            m.get("provider"),
            m.get("model"),
            m.get("calls"),
            m.get("failed_calls"),
            f"{m.get('input_tokens', 0):,}",
            f"{m.get('output_tokens', 0):,}",
            fmt_usd(m.get("cost_usd")),
            m.get("unpriced_calls"),
        )
        for m in _rows(sb, "money")
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
    by_loop = sb.get("money_by_loop") or {}
    if isinstance(by_loop, dict) and by_loop:
        body += "<h3>By loop</h3>" + table(
            ["loop", "totals"],
            [
                (loop, ", ".join(f"{k} {v}" for k, v in (t or {}).items()))
                for loop, t in by_loop.items()
            ],
        )
    return Section("money", "Money (from the ledger; tokens rank, dollars inform)", body)


def _cells_so_far(data: AbData) -> Section:
    rows = []
    for r in data.results:
        cell = r.get("cell") or {}
        rows.append(
            (
                cell.get("loop"),
                cell.get("brief"),
                cell.get("tier"),
                cell.get("repetition"),
                r.get("status"),
                fmt(r.get("correctness")),
                fmt_usd(r.get("cost_usd")),
                r.get("reason") or "",
            )
        )
    body = "<p>No scoreboard yet; the finished cells:</p>" + table(
        ["loop", "brief", "tier", "rep", "status", "correctness", "cost", "reason"],
        rows,
        numeric=(3, 5, 6),
    )
    return Section("cells", "Recorded cells", body)
