"""The scoreboard: the rubric applied to a record directory, as one versioned JSON document.

Per (loop, brief, tier) the repetitions reduce by median, the spread (lowest, highest) kept;
cost, latency and turns are scored relative to the best loop of the same (brief, tier); the
composite uses the weights of `_rubric`. Buckets, the overall ranking, pairwise paired
differences with bootstrap intervals, money per (provider, model) from the ledger, and the
promotion lines complete it. Deterministic for a given record directory (the bootstrap is
seeded with the manifest's seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from statistics import fmean, median
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loopwright.harness._briefs import LEVEL_OF
from loopwright.harness._cell import CellResult
from loopwright.harness._promotion import Bucket, Promotion, Standing, promote, winner
from loopwright.harness._provenance import Provenance, staleness
from loopwright.harness._record import RecordHeader, SuiteStamp, load_results, read_header
from loopwright.harness._rubric import RUBRIC, Rubric, composite, relative, rework_score
from loopwright.models import LEDGER_FILE, TIERS, CostLedger, LedgerTotals, read_ledger
from loopwright.stats import paired_bootstrap

__all__ = [
    "SCOREBOARD_SCHEMA_VERSION",
    "CellRow",
    "Money",
    "Pairwise",
    "RankRow",
    "Scoreboard",
    "build_scoreboard",
]

SCOREBOARD_SCHEMA_VERSION: Literal[1] = 1
FIGURES = ("correctness", "tokens", "wall_clock_s", "turns", "replans_used")
_RESAMPLES = 2000


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Range(_Strict):
    """The lowest and highest value over the repetitions."""

    low: float
    high: float


class CellRow(_Strict):
    """One loop on one (brief, tier): medians over its repetitions, their spread, the five
    dimension scores and the composite. `unavailable` holds the reason when the loop could
    not run; then there are no figures."""

    loop: str
    brief: str
    complexity: str
    tier: str
    model: str
    runs: int
    statuses: dict[str, int]
    unavailable: str | None = None
    median: dict[str, float] | None = None
    spread: dict[str, Range] | None = None
    scores: dict[str, float] | None = None
    composite: float | None = None
    gate_passed: bool = False


class RankRow(_Strict):
    """A loop over every cell it was measured in: its mean composite, and in how many cells
    it failed the gate or could not run."""

    rank: int
    loop: str
    mean_composite: float | None
    cells: int
    gate_failures: int
    unavailable_cells: int


class Pairwise(_Strict):
    """`a` minus `b` in composite, paired over the cells both were measured in: the mean
    difference and its percentile bootstrap interval (cells resampled). `clear` when the
    interval excludes zero, so the order of the two is more than noise."""

    a: str
    b: str
    mean_difference: float
    low: float
    high: float
    cells: int
    level: float
    resamples: int
    clear: bool


class Money(_Strict):
    """Spend of one group from the ledger. `cost_usd` is None when any call was unpriced."""

    provider: str
    model: str
    calls: int
    failed_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    unpriced_calls: int


class Scoreboard(_Strict):
    """The scoreboard document (`scoreboard.json`, schema in docs/ab.md)."""

    schema_version: Literal[1] = SCOREBOARD_SCHEMA_VERSION
    kind: Literal["loop-ab-scoreboard"] = "loop-ab-scoreboard"
    created_at: str
    provenance: Provenance
    stale: str | None
    checked_against: str | None
    manifest_digest: str
    manifest: dict[str, object]
    brief_suite: SuiteStamp
    rubric: Rubric
    simulated: bool
    run_count: int
    runs_recorded: int
    complete: bool
    cells: list[CellRow]
    buckets: list[Bucket]
    ranking: list[RankRow]
    pairwise: list[Pairwise]
    money: list[Money]
    money_by_loop: dict[str, LedgerTotals]
    promotion: Promotion


def build_scoreboard(out: Path, current: Provenance) -> Scoreboard:
    """The scoreboard of record directory `out`, its staleness judged against `current`."""
    header = read_header(out)
    results = load_results(out)
    rows = _score_cells(_cell_rows(results))
    buckets = _buckets(header, rows)
    complete = len(results) == header.run_count
    promotion = promote(buckets)
    ranking = _ranking(rows)
    if not complete:
        promotion = promotion.model_copy(
            update={"note": f"incomplete recording ({len(results)} of {header.run_count} "
                    f"runs): {promotion.note}"}
        )  # fmt: skip
    return Scoreboard(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        provenance=header.provenance,
        stale=staleness(header.provenance, current),
        checked_against=current.commit,
        manifest_digest=header.manifest_digest,
        manifest=header.manifest,
        brief_suite=header.brief_suite,
        rubric=RUBRIC,
        simulated=header.simulated,
        run_count=header.run_count,
        runs_recorded=len(results),
        complete=complete,
        cells=rows,
        buckets=buckets,
        ranking=ranking,
        pairwise=_pairwise(rows, ranking, _seed(header)),
        money=_money(out),
        money_by_loop=_money_by_loop(out),
        promotion=promotion,
    )


def _seed(header: RecordHeader) -> int:
    seed = header.manifest.get("seed", 0)
    return seed if isinstance(seed, int) else 0


def _cell_rows(results: Sequence[CellResult]) -> list[CellRow]:
    groups: dict[tuple[str, str, str], list[CellResult]] = {}
    for r in results:
        groups.setdefault((r.cell.brief, r.cell.tier, r.cell.loop), []).append(r)
    rows = []
    for (brief, tier, loop), group in sorted(groups.items(), key=lambda kv: _order(kv[1][0])):
        measured = [r for r in group if r.available]
        statuses: dict[str, int] = {}
        for r in group:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        first = group[0].cell
        base = CellRow(
            loop=loop, brief=brief, complexity=first.complexity, tier=tier, model=first.model,
            runs=len(measured), statuses=statuses,
        )  # fmt: skip
        if not measured:
            reasons = sorted({r.reason or "unavailable" for r in group})
            rows.append(base.model_copy(update={"unavailable": "; ".join(reasons)}))
            continue
        values = {f: [_figure(r, f) for r in measured] for f in FIGURES}
        rows.append(
            base.model_copy(
                update={
                    "median": {f: float(median(v)) for f, v in values.items()},
                    "spread": {f: Range(low=min(v), high=max(v)) for f, v in values.items()},
                }
            )
        )
    return rows


def _order(result: CellResult) -> tuple[int, str, int, str]:
    """Rows by complexity, brief, tier (small to large) and loop."""
    c = result.cell
    return (LEVEL_OF[c.complexity], c.brief, TIERS.index(c.tier) if c.tier in TIERS else 9, c.loop)


def _figure(result: CellResult, name: str) -> float:
    if name == "tokens":
        return float(result.tokens)
    value = getattr(result, name)
    return float(value) if value is not None else 0.0


def _score_cells(rows: list[CellRow]) -> list[CellRow]:
    """Fill scores, composite and the gate of every measured row, per (brief, tier)."""
    floor = RUBRIC.correctness_gate_floor
    by_cell: dict[tuple[str, str], list[CellRow]] = {}
    for row in rows:
        by_cell.setdefault((row.brief, row.tier), []).append(row)
    scored: dict[tuple[str, str, str], CellRow] = {}
    for group in by_cell.values():
        measured = [r for r in group if r.median is not None]
        passing = [r for r in measured if _median(r, "correctness") >= floor]
        bar = passing or measured
        best = {f: min(_median(r, f) for r in bar) for f in ("tokens", "wall_clock_s", "turns")}
        for row in group:
            if row.median is None:
                scored[(row.brief, row.tier, row.loop)] = row
                continue
            scores = {
                "correctness": _median(row, "correctness"),
                "cost": relative(_median(row, "tokens"), best["tokens"]),
                "latency": relative(_median(row, "wall_clock_s"), best["wall_clock_s"]),
                "turns": relative(_median(row, "turns"), best["turns"]),
                "rework": rework_score(_median(row, "replans_used")),
            }
            scored[(row.brief, row.tier, row.loop)] = row.model_copy(
                update={
                    "scores": scores,
                    "composite": composite(scores, RUBRIC.weights),
                    "gate_passed": scores["correctness"] >= floor,
                }
            )
    return [scored[(r.brief, r.tier, r.loop)] for r in rows]


def _median(row: CellRow, figure: str) -> float:
    assert row.median is not None  # callers pass measured rows only
    return row.median[figure]


def _buckets(header: RecordHeader, rows: Sequence[CellRow]) -> list[Bucket]:
    loops = [str(x) for x in _list(header.manifest.get("loops"))]
    tiers = [str(t) for t in _dict(header.manifest.get("tiers"))]
    complexity_of = {r.brief: r.complexity for r in rows}
    buckets = []
    for complexity in ("simple", "medium", "complex"):
        briefs = sorted(b for b, c in complexity_of.items() if c == complexity)
        if not briefs:
            continue
        standings = [_standing(loop, briefs, tiers, rows) for loop in loops]
        standings.sort(key=lambda s: (s.standing is None, -(s.standing or 0.0), s.loop))
        buckets.append(
            Bucket(
                complexity=complexity, briefs=briefs, standings=standings, winner=winner(standings)
            )
        )
    return buckets


def _standing(loop: str, briefs: list[str], tiers: list[str], rows: Sequence[CellRow]) -> Standing:
    mine = {(r.brief, r.tier): r for r in rows if r.loop == loop}
    composites, reasons = [], []
    for brief in briefs:
        for tier in tiers:
            row = mine.get((brief, tier))
            if row is None or row.composite is None:
                why = row.unavailable if row is not None and row.unavailable else "not measured"
                reasons.append(f"{why} ({brief}, {tier})")
                continue
            composites.append(row.composite)
            if not row.gate_passed:
                reasons.append(
                    f"failed the gate on tier {tier} ({brief}: median correctness "
                    f"{_median(row, 'correctness'):.3f})"
                )
    return Standing(
        loop=loop,
        standing=fmean(composites) if composites else None,
        disqualified="; ".join(reasons) or None,
    )


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _dict(value: object) -> dict[object, object]:
    return dict(value) if isinstance(value, dict) else {}


def _ranking(rows: Sequence[CellRow]) -> list[RankRow]:
    loops = sorted({r.loop for r in rows})
    summary = []
    for loop in loops:
        mine = [r for r in rows if r.loop == loop]
        composites = [r.composite for r in mine if r.composite is not None]
        summary.append(
            (
                fmean(composites) if composites else None,
                loop,
                len(composites),
                sum(1 for r in mine if r.composite is not None and not r.gate_passed),
                sum(1 for r in mine if r.unavailable),
            )
        )
    summary.sort(key=lambda s: (s[0] is None, -(s[0] or 0.0), s[1]))
    return [
        RankRow(
            rank=i, loop=loop, mean_composite=mean, cells=n, gate_failures=g, unavailable_cells=u
        )
        for i, (mean, loop, n, g, u) in enumerate(summary, 1)
    ]


def _pairwise(rows: Sequence[CellRow], ranking: Sequence[RankRow], seed: int) -> list[Pairwise]:
    by_loop: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        if r.composite is not None:
            by_loop.setdefault(r.loop, {})[f"{r.brief}/{r.tier}"] = [r.composite]
    ordered = [r.loop for r in ranking if r.loop in by_loop]
    out = []
    for a, b in combinations(ordered, 2):
        ci = paired_bootstrap(by_loop[b], by_loop[a], resamples=_RESAMPLES, seed=seed)
        if ci is None:
            continue
        out.append(
            Pairwise(
                a=a, b=b, mean_difference=ci.gain, low=ci.low, high=ci.high, cells=ci.n_tasks,
                level=ci.level, resamples=ci.resamples, clear=not ci.includes_zero,
            )
        )  # fmt: skip
    return out


def _ledger(out: Path) -> CostLedger:
    ledger = CostLedger()
    path = out / LEDGER_FILE
    for entry in read_ledger(path) if path.is_file() else []:
        ledger.record(entry)
    return ledger


def _money(out: Path) -> list[Money]:
    ledger = _ledger(out)
    providers = {r.model: r.provider for r in ledger.records()}
    return [
        Money(provider=providers[str(model)], model=str(model), **totals.model_dump(
            include={"calls", "failed_calls", "input_tokens", "output_tokens", "cost_usd",
                     "unpriced_calls"}))
        for model, totals in sorted(ledger.totals(by="model").items(), key=lambda kv: str(kv[0]))
        if model is not None
    ]  # fmt: skip


def _money_by_loop(out: Path) -> dict[str, LedgerTotals]:
    totals = _ledger(out).totals(by="candidate")
    return {
        str(k): v for k, v in sorted(totals.items(), key=lambda kv: str(kv[0])) if k is not None
    }
