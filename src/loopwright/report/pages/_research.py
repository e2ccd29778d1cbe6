"""The research page: a research working directory (docs/research.md) as a person reads it:
the goal, the trajectory of the workspace score with every spec and adoption, each iteration's
THINK, CRITIC, EXPERIMENT and DISTILL, REFLECT and the coverage of the intervention axes, what
was learned (superseded knowledge shown as such), the hypotheses, and the hard contracts."""

from __future__ import annotations

import re
from collections.abc import Iterable

from loopwright.errors import ConfigError
from loopwright.models import LEDGER_FILE, read_ledger, role_kind
from loopwright.report._html import (
    Raw,
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
from loopwright.report._stamp import Stamp, stamp_html
from loopwright.report.charts._graph import draw_workflow
from loopwright.report.pages._research_charts import (
    coverage_chart,
    delta_chart,
    seed_score,
    trajectory_chart,
)
from loopwright.report.pages._research_data import FINISHED, KnowledgeLine, ResearchData
from loopwright.report.pages._research_holdout import holdout_section, overfit_text
from loopwright.report.pages._research_iter import iteration_block, verdict_pill
from loopwright.research import StatusReport
from loopwright.workflow import load_workflow

__all__ = ["research_page", "research_stamp", "sim_research_text"]

_CODE = re.compile(r"`([^`]+)`")
_SIM_PREFIXES = ("sim", "scripted")


def _is_sim(model: str) -> bool:
    """An offline model: its spec (`sim`, `scripted:FILE`) or its own name (`sim-coder-1`)."""
    return model.split(":", 1)[0] in _SIM_PREFIXES or model.startswith(_SIM_PREFIXES)


def sim_research_text(data: ResearchData) -> str:
    """The banner of a research run whose meta model or agents' model is a simulator."""
    meta, agents = _models(data)
    parts = []
    if any(_is_sim(m) for m in meta):
        parts.append(
            f"the meta model ({', '.join(meta)}: THINK, CRITIC, DISTILL and REFLECT follow "
            "documented offline rules, docs/research.md)"
        )
    if any(_is_sim(m) for m in agents):
        parts.append(f"the agents' model ({', '.join(agents)}, docs/sim-model.md)")
    who = " and ".join(parts) or "a simulated model (the records say so)"
    return (
        f"SIMULATED RESULTS: {who} stand in for LLMs. Scores, verdicts and knowledge describe "
        "how workflows fare against the simulator, not against a real model."
    )


def _models(data: ResearchData) -> tuple[list[str], list[str]]:
    """The (meta, agents) models the committed iterations ran on, in first-use order
    (`research run` may override what `research init` wrote); before the first commit, the
    models of the ledger's calls, else config.yaml's (the offline models make no call)."""
    cfg = data.config
    if data.records:
        meta = list(dict.fromkeys(r.meta_model for r in data.records))
        agents = list(dict.fromkeys(r.eval_model for r in data.records))
    else:
        path = data.run_dir / LEDGER_FILE  # no commit yet: the gateway calls made so far
        rows = read_ledger(path, torn_tail=True) if path.is_file() else []
        meta, agents = (
            list(dict.fromkeys(r.model for r in rows if role_kind(r.labels.role) == kind))
            for kind in ("meta", "agents")
        )
    return _named(cfg.meta_model, meta), _named(cfg.eval.model, agents)


def _named(spec: str, used: list[str]) -> list[str]:
    """`spec` as config.yaml names it (with the model's own names in brackets) when the run
    used that kind of model (offline or not); else the models it used."""
    if used and any(_is_sim(u) != _is_sim(spec) for u in used):
        return used
    own = [u for u in used if u != spec]
    return [spec + (f" ({', '.join(own)})" if own else "")]


def research_page(data: ResearchData) -> str:
    """The whole research report as HTML. Deterministic for a given working directory (with
    the same Graphviz, when it draws the workflow)."""
    banners = [banner("sim", sim_research_text(data))] if data.simulated else []
    reasons = data.partial_reasons
    if reasons:
        banners.append(banner("partial", "PARTIAL RUN: " + "; ".join(reasons) + "."))
    overfit = overfit_text(data.status)
    if overfit is not None:
        banners.append(banner("partial", overfit))
    sections = [overview_section(data), goal_section(data), holdout_section(data.status)]
    if data.staging:
        sections.append(staging_section(data))
    if data.records:
        sections += [
            trajectory_section(data),
            Section(
                "iterations",
                "Iterations: THINK, CRITIC, EXPERIMENT, DISTILL",
                "".join(iteration_block(r, data.meta_calls.get(r.iter, ())) for r in data.records),
            ),
        ]
    sections += [
        search_space_section(data),
        workflow_section(data),
        knowledge_section(data.knowledge, data.knowledge_header),
        hypotheses_section(data),
        contracts_section(data),
    ]
    return page(
        title=f"loopwright research: {data.run_dir.resolve().name}",
        kind="research",
        stamp_html=stamp_html(research_stamp(data)),
        banners=banners,
        sections=sections,
        partial=bool(reasons),
    )


def research_stamp(data: ResearchData) -> Stamp:
    """The stamp from config.yaml; the meta model's own name from the last record. A research
    directory made before the commit and digest were stamped says `not recorded`."""
    cfg = data.config
    meta, agents = _models(data)
    digest, commit = cfg.benchmark_digest, cfg.git_commit
    extra = [("workflow", cfg.workflow), ("tasks", ", ".join(cfg.eval.tasks))]
    if cfg.eval.seed != cfg.seed:
        extra.append(("eval seed", str(cfg.eval.seed)))
    return Stamp(
        loopwright_version=cfg.loopwright_version,
        git_commit=commit,
        model=f"meta {', '.join(meta)}, agents {', '.join(agents)}",
        simulated=data.simulated,
        benchmark=cfg.eval.bench,
        benchmark_digest=digest,
        seed=cfg.seed,
        extra=tuple(extra),
    )


def _cards(items: Iterable[tuple[str, str]]) -> str:
    cells = "".join(
        f'<div class="card"><div class="k">{esc(k)}</div><div class="v">{esc(v)}</div></div>'
        for k, v in items
    )
    return f'<div class="cards">{cells}</div>'


def overview_section(data: ResearchData) -> Section:
    st, records = data.status, data.records
    finished = st.status in FINISHED
    status = st.status + (f": {st.reason}" if st.reason else "")
    first = seed_score(records)
    adopted = [f"iter {r.iter} {r.summary.adopted}" for r in records if r.summary.adopted]
    specs = [s for r in records for s in r.specs]
    measured = sum(1 for s in specs if s.experiment.outcome_class == "measured")
    items = [
        ("status", status if finished else f"PARTIAL ({status})"),
        ("committed iterations", str(len(records))),
        ("workspace score", f"{fmt(first, '.3f')} → {fmt(st.workspace_score, '.3f')}"),
        ("workspace from", st.workspace_source),
        ("adopted", ", ".join(adopted) or "none"),
        ("specs", f"{len(specs)} ({measured} measured, {len(specs) - measured} not run)"),
        ("eval cost", fmt_usd(sum(r.cost_usd for r in records))),
        *_budget_card(st),
        ("wall time", f"{sum(r.wall_s for r in records):.0f} s"),
    ]
    note = (
        "<p>The workspace score is the mean partial credit of the workspace workflow over "
        "every (task, repetition) pair measured so far; a spec is compared with the workspace "
        "on the same pairs (a paired delta), so the first figure is the seed as measured in "
        "iteration 1.</p>"
    )
    return Section("overview", "Overview", _cards(items) + note)


def _budget_card(st: StatusReport) -> list[tuple[str, str]]:
    """The dollar budget card (none without a budget): spent of budget, and the simulated part."""
    if st.max_usd is None:
        return []
    sim = f" ({fmt_usd(st.offline_usd)} simulated)" if st.offline_usd else ""
    return [("dollar budget", f"{fmt_usd(st.spent_usd)} of {fmt_usd(st.max_usd)}{sim}")]


def goal_section(data: ResearchData) -> Section:
    goal, reason = data.goal, data.status.reason
    e = goal.escalation
    settings = table(
        ["setting", "value", "meaning"],
        [
            ("probe_passes", e.probe_passes, "passes a new idea is first measured with"),
            ("perf_passes", e.perf_passes, "passes of the re-measurement at perf scale"),
            ("escalate_gain", e.escalate_gain, "a probe this much better is promising"),
            ("adopt_gain", e.adopt_gain, "a perf measurement more than this better is adopted"),
        ],
        numeric=(1,),
    )
    rules = "".join(
        f"<li><code>{esc(rule.text())}</code>"
        + (
            " <span class='good'>← held: stopped the run</span>"
            if data.status.status == "terminated" and reason.endswith(rule.text())
            else ""
        )
        + "</li>"
        for rule in goal.termination
    )
    body = (
        f"<blockquote><p><b>{esc(goal.ultimate)}</b></p></blockquote>"
        f"<h3>Escalation</h3>{settings}<h3>Termination (polled before every iteration)</h3>"
        f"<ul>{rules or '<li>(no rule: the run stops only when asked)</li>'}</ul>"
    )
    return Section("goal", "Goal", body)


def staging_section(data: ResearchData) -> Section:
    parts = [
        f"<h3>iteration {s.iteration}</h3><p>Phases that wrote a file so far: "
        f"{esc(', '.join(s.phases) or 'none')}.</p><p class='muted'>"
        f"{esc(', '.join(s.files) or '(empty)')}</p>"
        for s in data.staging
    ]
    note = (
        "<p>An iteration that has not committed lives in <code>.staging/iter_N/</code>; "
        "nothing under iteration/ or workspace/ changed for it. The next "
        "<code>loopwright research run</code> removes it and runs the iteration again.</p>"
    )
    return Section("in-progress", "Uncommitted iteration", note + "".join(parts))


def trajectory_section(data: ResearchData) -> Section:
    records = data.records
    body = figure(
        "research-trajectory",
        trajectory_chart(records),
        "Workspace score after each committed iteration (black squares; 'seed' is the "
        "workspace measured in iteration 1). Every measured spec is a dot coloured by its "
        "DISTILL verdict, on a stem from the workspace's score on the same pairs; adoptions "
        "are ringed; specs that did not run are crosses above the plot. Hover for details.",
    )
    deltas = delta_chart(records)
    if deltas is not None:
        body += figure(
            "research-deltas",
            deltas,
            "Paired delta of each measured spec against the workspace on the same (task, "
            "repetition) pairs; solid: adopted or confirmed at perf scale.",
        )
    rows = [
        (
            r.iter,
            Raw("<br>".join(
                f"{esc(s.spec.spec_id)} {esc(s.spec.intervention_axis)} {esc(s.spec.scale)} "
                f"{verdict_pill(s.distill.verdict)} {esc(fmt(s.experiment.delta, '+.3f'))}"
                for s in r.specs
            )),
            f"{fmt(r.summary.score_before, '.3f')} → {fmt(r.summary.score_after, '.3f')}",
            r.summary.adopted or "",
            "; ".join(f"{b.trigger}: {b.verdict}" for b in r.reflect),
            f"{r.wall_s:.0f} s",
            fmt_usd(r.cost_usd),
        )
        for r in records
    ]  # fmt: skip
    heads = ["iter", "specs: axis scale verdict delta", "workspace (same pairs)", "adopted",
             "REFLECT", "wall", "eval cost"]  # fmt: skip
    body += table(heads, rows, numeric=(0, 5, 6))
    return Section("trajectory", "Trajectory", body)


def search_space_section(data: ResearchData) -> Section:
    axes = [a.partition(": ") for a in data.status.axes]
    names = [name for name, _, _ in axes]
    frontier = data.status.frontier
    status_rows = [
        (name, status, str(frontier.index(name) + 1) if name in frontier else "")
        for name, _, status in axes
    ]
    body = (
        "<p>Axis statuses as THINK sees them now (the latest REFLECT's, reopened by a later "
        "adoption; closed when constraints forbid the axis), and the frontier THINK walks, "
        f"best first: <b>{esc(' > '.join(frontier) or '(none)')}</b>.</p>"
        + table(["axis", "status", "frontier rank"], status_rows, numeric=(2,))
    )
    if data.records:
        body += figure(
            "research-coverage",
            coverage_chart(names, data.records),
            "Specs per intervention axis by what they came to, with the best paired delta.",
        )
    firings = [(r.iter, b) for r in data.records for b in r.reflect]
    if firings:
        rows = [
            (
                it,
                b.trigger,
                b.verdict + (" (fallback)" if b.malformed else ""),
                " > ".join(b.frontier) or "(none)",
                "; ".join(f"{a.axis}: {a.status}" for a in b.axes),
                ", ".join(a.axis for a in b.taxonomy_add),
                b.notes,
            )
            for it, b in firings
        ]
        body += "<h3>REFLECT firings</h3>" + table(
            ["iter", "trigger", "verdict", "frontier", "axes", "added axes", "notes"], rows,
            numeric=(0,),
        )  # fmt: skip
    else:
        body += "<p>REFLECT has not fired yet (it fires on axis concentration, the heartbeat, "
        body += "or when THINK comes back empty).</p>"
    return Section("search-space", "Search space and REFLECT", body)


def workflow_section(data: ResearchData) -> Section:
    path = data.run_dir / "workspace" / "workflow.yaml"
    adoptions = [
        (
            r.iter,
            s.spec.spec_id,
            s.spec.intervention_axis,
            s.spec.title,
            " ".join(s.experiment.pattern),
            fmt(s.experiment.delta, "+.3f"),
        )
        for r in data.records
        for s in r.specs
        if s.spec.spec_id == r.summary.adopted
    ]
    body = (
        "<h3>Adoptions</h3>"
        + table(["iter", "spec", "axis", "title", "pattern", "delta"], adoptions, numeric=(0, 5))
        if adoptions
        else "<p>No spec adopted yet: the workspace is the seed workflow.</p>"
    )
    try:
        drawing = draw_workflow(load_workflow(path, check=False), "workspace")
    except ConfigError as exc:
        return Section("workflow", "Workspace workflow", body + f"<p class='bad'>{esc(exc)}</p>")
    engine = "Graphviz dot" if drawing.engine == "graphviz" else "the built-in layout"
    graph = figure(
        "research-workflow",
        drawing.svg,
        f"The workspace workflow now ({data.status.workspace_source}); drawn with {engine}.",
    )
    return Section("workflow", "Workspace workflow", f'<div class="graph">{graph}</div>{body}')


def _bullet_html(b: KnowledgeLine) -> str:
    text = _CODE.sub(r"<code>\1</code>", esc(b.text))
    sup = (
        " <span class='muted'>supersedes "
        + ", ".join(f"<a href='#kb-{esc(s)}'>{esc(s)}</a>" for s in b.supersedes)
        + "</span>"
        if b.supersedes
        else ""
    )
    head = f"<b>{esc(b.id)}</b> <span class='pill'>{esc(b.origin)}</span>{sup} "
    if b.superseded_by is None:
        return f"<li id='kb-{esc(b.id)}' class='current'>{head}{text}</li>"
    by = esc(b.superseded_by)
    return (
        f"<li id='kb-{esc(b.id)}' class='superseded muted'>{head}<s>{text}</s> "
        f"<span class='bad'>superseded by <a href='#kb-{by}'>{by}</a></span></li>"
    )


def knowledge_section(lines: tuple[KnowledgeLine, ...], header: str) -> Section:
    dead = sum(1 for b in lines if b.superseded_by is not None)
    seed = [b for b in lines if b.origin == "seed"]
    learned = [b for b in lines if b.origin != "seed"]
    header_html = _CODE.sub(r"<code>\1</code>", esc(header))
    intro = (
        f"<p>knowledge.md: {len(lines)} bullet(s), {len(lines) - dead} current, {dead} "
        f"superseded (struck through; the file is append-only, so a correction is a later "
        f"bullet).</p><p class='muted'>{header_html}</p>"
    )
    learned_html = (
        f"<ul class='knowledge'>{''.join(_bullet_html(b) for b in learned)}</ul>"
        if learned
        else "<p>Nothing learned yet beyond the seed knowledge.</p>"
    )
    seed_html = details(
        f"seed knowledge ({len(seed)} bullets from the package)",
        f"<ul class='knowledge'>{''.join(_bullet_html(b) for b in seed)}</ul>",
    )
    return Section("knowledge", "What was learned", intro + learned_html + seed_html)


def hypotheses_section(data: ResearchData) -> Section:
    open_ = [h for h in data.hypotheses if h.removed_iter is None]
    closed = [h for h in data.hypotheses if h.removed_iter is not None]
    body = "<h3>Open</h3>" + (
        table(
            ["id", "iter", "by", "axis", "spec", "hypothesis"],
            [(h.id, h.iter, h.by, h.axis or "", h.spec or "", h.text) for h in open_],
            numeric=(1,),
        )
        if open_
        else "<p>None open.</p>"
    )
    if closed:
        rows = [
            (
                h.id,
                h.iter,
                h.removed_iter,
                h.axis or "",
                h.spec or "",
                Raw(verdict_pill(h.reason)) if h.reason else "",
                h.text,
            )
            for h in closed
        ]
        body += "<h3>Closed</h3>" + table(
            ["id", "added", "removed", "axis", "spec", "why", "hypothesis"],
            rows,
            numeric=(1, 2),
        )
    return Section("hypotheses", "Hypotheses", body)


def contracts_section(data: ResearchData) -> Section:
    contracts = data.status.contracts
    held = sum(1 for c in contracts if c.ok)
    rows = [
        (
            c.number,
            c.name,
            Raw("<span class='good'>holds</span>" if c.ok else "<span class='bad'>BROKEN</span>"),
            "" if c.ok else c.detail,
        )
        for c in contracts
    ]
    body = (
        f"<p><b>{held} of {len(contracts)}</b> hard contracts hold over the committed "
        "iterations (docs/research.md).</p>"
        + table(["#", "contract", "result", "detail"], rows, numeric=(0,))
    )
    return Section("contracts", "Hard contracts", body)
