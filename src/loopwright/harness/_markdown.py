"""The scoreboard as Markdown: stamps first, then buckets, cells, ranking, pairs, money, and
the promotion lines last (the part a reader acts on)."""

from __future__ import annotations

from loopwright.harness._scoreboard import CellRow, Scoreboard

__all__ = ["scoreboard_markdown"]


def _f(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def scoreboard_markdown(sb: Scoreboard) -> str:
    """The Markdown view of `sb` (deterministic)."""
    parts = [
        _stamps(sb),
        _buckets(sb),
        _cells(sb),
        _ranking(sb),
        _pairs(sb),
        _money(sb),
        _promotion(sb),
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def _stamps(sb: Scoreboard) -> str:
    p = sb.provenance
    commit = p.commit or "unknown"
    dirty = {True: "yes (uncommitted changes)", False: "no", None: "unknown"}[p.dirty]
    weights = ", ".join(f"{k} {v:g}" for k, v in sb.rubric.weights.items())
    lines = [
        "# Loop A/B scoreboard" + (" [SIMULATED]" if sb.simulated else ""),
        "",
    ]
    if sb.stale:
        lines += [f"> **STALE**: {sb.stale}. Re-record before acting on it.", ""]
    if p.dirty:
        lines += ["> **DIRTY TREE**: measured with uncommitted changes to loopwright.", ""]
    if sb.simulated:
        lines += [
            "> SIMULATED: stand-in models answered; these are not a real model's figures.",
            "",
        ]
    if not sb.complete:
        lines += [f"> INCOMPLETE: {sb.runs_recorded} of {sb.run_count} runs recorded.", ""]
    lines += [
        f"- commit: `{commit}` (dirty: {dirty}); loopwright {p.loopwright_version}",
        f"- manifest digest: `{sb.manifest_digest[:16]}`",
        f"- brief suite: version {sb.brief_suite.version}, digest `{sb.brief_suite.digest[:16]}`",
        f"- rubric v{sb.rubric.version}: {weights}; correctness gate "
        f"{sb.rubric.correctness_gate_floor:g}",
        f"- runs: {sb.runs_recorded} of {sb.run_count}",
    ]
    return "\n".join(lines)


def _buckets(sb: Scoreboard) -> str:
    lines = [
        "## Buckets",
        "",
        "| bucket | loop | standing | eligible |",
        "| --- | --- | ---: | --- |",
    ]
    for b in sb.buckets:
        for s in b.standings:
            mark = " **winner**" if s.loop == b.winner else ""
            eligible = "yes" if s.disqualified is None else f"no: {s.disqualified}"
            lines.append(f"| {b.complexity} | {s.loop}{mark} | {_f(s.standing)} | {eligible} |")
    return "\n".join(lines)


def _cells(sb: Scoreboard) -> str:
    head = (
        "| brief | tier | loop | runs | correctness | tokens | wall s | turns | replans "
        "| composite | gate |"
    )
    lines = ["## Cells (medians; spread low..high)", "", head, "|" + " --- |" * 11]
    for row in sb.cells:
        lines.append(_cell_line(row))
    return "\n".join(lines)


def _cell_line(row: CellRow) -> str:
    if row.median is None or row.spread is None:
        reason = row.unavailable or "unavailable: no runs"
        return f"| {row.brief} | {row.tier} | {row.loop} | 0 | {reason} |||||||"
    m, s = row.median, row.spread

    def cell(name: str, spec: str) -> str:
        low, high = s[name].low, s[name].high
        spread = "" if low == high else f" ({low:{spec}}..{high:{spec}})"
        return f"{m[name]:{spec}}{spread}"

    gate = "pass" if row.gate_passed else "**FAIL**"
    tampered = row.statuses.get("tamper", 0)
    runs = f"{row.runs} (**{tampered} tamper**)" if tampered else str(row.runs)
    return (
        f"| {row.brief} | {row.tier} | {row.loop} | {runs} | {cell('correctness', '.3f')} "
        f"| {cell('tokens', '.0f')} | {cell('wall_clock_s', '.2f')} | {cell('turns', '.0f')} "
        f"| {cell('replans_used', '.0f')} | {_f(row.composite)} | {gate} |"
    )


def _ranking(sb: Scoreboard) -> str:
    lines = [
        "## Ranking (mean composite over cells)",
        "",
        "| rank | loop | mean composite | cells | gate failures | unavailable |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in sb.ranking:
        lines.append(
            f"| {r.rank} | {r.loop} | {_f(r.mean_composite)} | {r.cells} | {r.gate_failures} "
            f"| {r.unavailable_cells} |"
        )
    return "\n".join(lines)


def _pairs(sb: Scoreboard) -> str:
    if not sb.pairwise:
        return ""
    lines = [
        "## Pairwise (composite of a minus b, paired over cells)",
        "",
        "| a | b | mean difference | interval | cells | clear |",
        "| --- | --- | ---: | --- | ---: | --- |",
    ]
    for p in sb.pairwise:
        pct = round(p.level * 100)
        lines.append(
            f"| {p.a} | {p.b} | {p.mean_difference:+.3f} | {pct}% {p.low:+.3f}..{p.high:+.3f} "
            f"| {p.cells} | {'yes' if p.clear else 'no (within noise)'} |"
        )
    return "\n".join(lines)


def _money(sb: Scoreboard) -> str:
    lines = [
        "## Money (from the ledger)",
        "",
        "| provider | model | calls | failed | input tokens | output tokens | cost USD |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m in sb.money:
        cost = (
            _f(m.cost_usd, ".4f")
            if m.cost_usd is not None
            else f"unknown ({m.unpriced_calls} unpriced)"
        )
        lines.append(
            f"| {m.provider} | {m.model} | {m.calls} | {m.failed_calls} | {m.input_tokens} "
            f"| {m.output_tokens} | {cost} |"
        )
    return "\n".join(lines)


def _promotion(sb: Scoreboard) -> str:
    p = sb.promotion
    body = "\n".join(p.lines) if p.lines else "(no recommendation)"
    return f"## Promotion\n\n{p.note}.\n\n```\n{body}\n```"
