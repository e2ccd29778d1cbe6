"""The run page: results per task for each workflow, and for every task run the timeline of
its exhaust with its steps, gate decisions, model and tool calls and per-test outcomes."""

from __future__ import annotations

import re
from collections import Counter
from statistics import fmean

from loopwright.records import CycleRecord, GateDecision, ModelCall, ToolCallEvent
from loopwright.report._html import (
    Raw,
    Section,
    banner,
    details,
    esc,
    figure,
    fmt,
    fmt_tokens,
    fmt_usd,
    page,
    table,
)
from loopwright.report._network import open_network_text
from loopwright.report._stamp import Stamp, sim_text, stamp_html
from loopwright.report.charts._heat import HeatCell, HeatGrid, heat_grid
from loopwright.report.charts._timeline import timeline_svg
from loopwright.report.pages._run_data import RunData, TaskRun

__all__ = ["run_page", "run_stamp"]


def run_page(data: RunData) -> str:
    """The whole run report as HTML. Deterministic for a given run directory."""
    banners = (
        [banner("sim", sim_text(data.meta.model if data.meta else None))] if data.simulated else []
    )
    reasons = data.partial_reasons
    if reasons:
        banners.append(banner("partial", "PARTIAL RUN: " + "; ".join(reasons) + "."))
    open_network = open_network_text(data.run_dir)
    if open_network:
        banners.append(banner("network", open_network))
    sections = [results_section(data)]
    for task in data.tasks:
        runs = [r for r in data.runs if r.task_id == task]
        if runs:
            sections.append(task_section(task, runs, data.levels.get(task)))
    return page(
        title=f"loopwright run: {data.run_dir.resolve().name}",
        kind="run",
        stamp_html=stamp_html(run_stamp(data)),
        banners=banners,
        sections=sections,
        partial=bool(reasons),
    )


def run_stamp(data: RunData) -> Stamp:
    """The stamp from config.yaml, with the model's own name from the first run's events."""
    meta, inputs = data.meta, data.inputs
    model = meta.model if meta else None
    names = sorted({r.record.model for r in data.runs if r.record is not None})
    if names and model is not None and names != [model]:
        model = f"{model} ({', '.join(names)})"
    return Stamp(
        loopwright_version=meta.loopwright_version if meta else None,
        git_commit=meta.git_commit if meta else None,
        model=model,
        simulated=data.simulated,
        benchmark=meta.benchmark if meta else None,
        benchmark_digest=meta.benchmark_digest if meta else None,
        seed=meta.seed if meta else None,
        extra=(("repetitions", str(inputs.settings.repetitions if inputs else "?")),),
    )


def _records(runs: list[TaskRun]) -> list[CycleRecord]:
    return [r.record for r in runs if r.record is not None]


def _task_row(data: RunData, task: str, runs: list[TaskRun]) -> list[object]:
    records = _records(runs)
    valid = [r.score_end for r in records if r.scored]
    costs = [r.total_cost_usd for r in records]
    cost = None if None in costs or not costs else sum(c for c in costs if c is not None)
    category = Counter(str(r.failure_category) for r in records).most_common(1)
    return [
        Raw(f'<a href="#task-{_slug(task)}">{esc(task)}</a>'),
        data.levels.get(task, "-"),
        len(runs),
        fmt(fmean(valid) if valid else None),
        f"{sum(1 for r in records if r.resolved)}/{len(runs)}",
        category[0][0] if category else "-",
        fmt_tokens(sum(r.input_tokens + r.output_tokens for r in records)),
        fmt_usd(cost),
        fmt(fmean(r.duration_s for r in records) if records else None, ".1f"),
    ]


def _score_cell(wf: str, task: str, runs: list[TaskRun]) -> HeatCell:
    """Mean partial credit over valid grades; `inv` when every grade was invalid, `cut` when
    no run was graded (cut off before grading)."""
    records = _records(runs)
    valid = [r.score_end for r in records if r.grade and not r.grade.invalid]
    mean = fmean(valid) if valid else None
    text = fmt(mean)
    if mean is None:
        text = "inv" if any(r.grade is not None for r in records) else "cut"
    tip = f"{wf} on {task}: mean partial credit {fmt(mean, '.3f')} over {len(valid)} valid of {len(runs)} runs"
    return HeatCell(mean, text, tip)


def results_section(data: RunData) -> Section:
    parts = []
    cells = {}
    for j, wf in enumerate(data.workflows):
        rows = []
        for i, task in enumerate(data.tasks):
            runs = [r for r in data.runs if r.workflow == wf and r.task_id == task]
            rows.append(_task_row(data, task, runs))
            if runs:
                cells[(i, j)] = _score_cell(wf, task, runs)
        parts.append(
            f"<h3>{esc(wf)}</h3>"
            + table(
                [
                    "task",
                    "level",
                    "runs",
                    "score",
                    "resolved",
                    "failure",
                    "tokens",
                    "cost",
                    "time s",
                ],
                rows,
                numeric=(1, 2, 3, 6, 7, 8),
            )
        )
    grid = HeatGrid(tuple(data.tasks), tuple(data.workflows), cells, cell_size=(70, 26))
    chart = figure(
        "scores",
        heat_grid(grid, label="partial credit per task and workflow", legend="partial credit"),
        "Mean partial credit over the valid runs of each workflow (column) on each "
        "task (row); blank: not run.",
    )
    expected = data.expected_runs
    found = f"{len(data.runs)} task runs" + (f" of {expected}" if expected is not None else "")
    head = (
        f"<p>{esc(found)} over {len(data.tasks)} tasks and {len(data.workflows)} workflow(s).</p>"
    )
    return Section("results", "Results per task", head + chart + "".join(parts))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def task_section(task: str, runs: list[TaskRun], level: int | None) -> Section:
    title = f"Task {task}" + (f" (level {level})" if level is not None else "")
    return Section(f"task-{_slug(task)}", title, "".join(run_card(r) for r in runs))


def run_card(run: TaskRun) -> str:
    """One task run: a header of pills, the timeline, steps, tests, gates and call tables."""
    rec = run.record
    head = f"<h3>{esc(run.workflow)} · repetition {run.repetition}</h3>"
    pills = (
        ""
        if rec is None
        else "".join(
            f'<span class="pill">{esc(p)}</span>'
            for p in (
                f"score {rec.score_end:.2f}",
                "resolved" if rec.resolved else "not resolved",
                f"failure: {rec.failure_category}",
                f"run: {rec.run_status}",
                f"{fmt_tokens(rec.input_tokens)} in / {fmt_tokens(rec.output_tokens)} out tokens",
                fmt_usd(rec.total_cost_usd),
                f"{rec.duration_s:.2f} s",
            )
        )
    )
    parts = [head, f"<p>{pills}</p>", f"<p class='muted'>{esc(run.rel)}</p>"]
    if run.problem:
        parts.append(f"<p class='bad'>{esc(run.problem)}</p>")
    if run.events:
        chart_id = f"timeline-{_slug(run.workflow)}-{_slug(run.task_id)}-{run.repetition}"
        svg = timeline_svg(run.events, f"timeline of {run.workflow} on {run.task_id}")
        parts.append(
            figure(
                chart_id,
                svg,
                "Lanes are nodes; bars are visits (colour: status; "
                "#n: attempt after a RELOOP); ticks are model calls, dots tool calls "
                "(red: failed), diamonds gate decisions; hover for tokens and details.",
            )
        )
    if rec is not None:
        parts += [_steps(rec), _tests(rec), _errors(rec)]
    parts.append(_gates(run))
    parts.append(_calls(run))
    if run.diff:
        parts.append(
            details(f"diff.patch ({len(run.diff):,} characters)", f"<pre>{esc(run.diff)}</pre>")
        )
    return f'<div class="runcard">{"".join(parts)}</div>'


def _steps(rec: CycleRecord) -> str:
    rows = [
        [
            s.node_id,
            s.role,
            s.attempt,
            s.status,
            f"{s.duration_s:.2f}",
            s.turns,
            f"{s.tool_calls} ({s.tool_errors} failed)",
            f"{s.input_tokens:,}",
            f"{s.output_tokens:,}",
            fmt_usd(s.cost_usd),
            ", ".join(s.produced) or "-",
        ]
        for s in rec.steps
    ]
    if not rows:
        return "<p class='muted'>No agent step.</p>"
    return table(
        [
            "node",
            "role",
            "attempt",
            "status",
            "s",
            "turns",
            "tool calls",
            "in tokens",
            "out tokens",
            "cost",
            "produced",
        ],
        rows,
        numeric=(2, 4, 5, 7, 8, 9),
    )


def _tests(rec: CycleRecord) -> str:
    g = rec.grade
    if g is None:
        return "<p class='bad'>No grade: the run was not graded.</p>"
    head = (
        f"tests: fail_to_pass {g.f2p_passed}/{g.f2p_total}, pass_to_pass "
        f"{g.p2p_passed}/{g.p2p_total}"
        + (f"; invalid: {g.invalid_reason}" if g.invalid else "")
        + ("; timed out" if g.timed_out else "")
    )
    rows = [
        [
            t.id,
            "fail_to_pass" if t.fail_to_pass else "pass_to_pass",
            Raw(f"<span class='{'good' if t.passed else 'bad'}'>{esc(t.outcome)}</span>"),
            t.message[:240],
        ]
        for t in g.tests
    ]
    extra = ""
    if g.collection_errors:
        extra += details(
            "collection errors", f"<pre>{esc(chr(10).join(g.collection_errors))}</pre>"
        )
    if g.restored:
        extra += f"<p class='muted'>Restored before grading: {esc(', '.join(g.restored))}</p>"
    failing = any(not t.passed for t in g.tests) or g.invalid
    body = table(["test", "kind", "outcome", "message"], rows, css_class="tests") + extra
    return details(head, body, open_=failing)


def _errors(rec: CycleRecord) -> str:
    if not rec.errors:
        return ""
    items = "".join(f"<li>{esc(e[:500])}</li>" for e in rec.errors)
    return f"<p><b>Errors</b></p><ul>{items}</ul>"


def _gates(run: TaskRun) -> str:
    rows = [
        [
            f"{e.t:.3f}",
            e.node_id,
            e.decision,
            f"{e.loop_count}/{e.max_loops}",
            e.target or "-",
            Raw(details(e.reason.splitlines()[0][:90], f"<pre>{esc(e.reason)}</pre>"))
            if e.reason
            else "-",
        ]
        for e in run.events
        if isinstance(e, GateDecision)
    ]
    if not rows:
        return ""
    return "<p><b>Gate decisions</b></p>" + table(
        ["t s", "gate", "decision", "loops", "target", "reason"], rows
    )


def _calls(run: TaskRun) -> str:
    model = [
        [
            f"{e.t:.3f}",
            e.node_id,
            e.attempt,
            e.turn,
            e.model,
            f"{e.input_tokens:,}",
            f"{e.output_tokens:,}",
            f"{e.cached_tokens:,}",
            fmt_usd(e.cost_usd),
            f"{e.latency_s:.2f}",
            e.tool_calls,
            e.error or "",
        ]
        for e in run.events
        if isinstance(e, ModelCall)
    ]
    tools = [
        [
            f"{e.t:.3f}",
            e.node_id,
            e.turn,
            e.tool,
            e.arguments[:200],
            Raw("<span class='good'>ok</span>")
            if e.ok
            else Raw(f"<span class='bad'>{esc(e.error)}</span>"),
            e.output_chars,
        ]
        for e in run.events
        if isinstance(e, ToolCallEvent)
    ]
    out = ""
    if model:
        out += details(
            f"model calls ({len(model)})",
            table(
                [
                    "t s",
                    "node",
                    "attempt",
                    "turn",
                    "model",
                    "in",
                    "out",
                    "cached",
                    "cost",
                    "latency s",
                    "tool calls",
                    "error",
                ],
                model,
                numeric=(2, 3, 5, 6, 7, 8, 9, 10),
            ),
        )
    if tools:
        out += details(
            f"tool calls ({len(tools)})",
            table(
                ["t s", "node", "turn", "tool", "arguments", "result", "output chars"],
                tools,
                numeric=(2, 6),
            ),
        )
    return out
