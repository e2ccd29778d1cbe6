"""One committed iteration of the research loop on the research page: THINK, any REFLECT that
fired, every spec with its axis, CRITIC rounds, EXPERIMENT outcome (scores, smoke attempts,
skips and blocks) and DISTILL verdict, then DISTILL's milestone and lessons."""

from __future__ import annotations

from collections.abc import Sequence

from loopwright.report._html import Raw, details, esc, fmt, fmt_tokens, fmt_usd, table
from loopwright.report.pages._research_charts import verdict_color
from loopwright.report.pages._research_data import MetaCalls
from loopwright.research import IterRecord, Spec

__all__ = ["iteration_block", "patch_text", "reflect_line", "verdict_pill"]

_LIGHT = frozenset({"#90cdf4", "#a0aec0", "#48bb78"})


def verdict_pill(verdict: str) -> str:
    """A DISTILL verdict as a coloured pill (escaped)."""
    color = verdict_color(verdict)
    text = "#111" if color in _LIGHT else "#fff"
    return (
        f'<span class="pill verdict" data-verdict="{esc(verdict)}" '
        f'style="background:{color};border-color:{color};color:{text}">{esc(verdict)}</span>'
    )


def patch_text(spec: Spec) -> str:
    """The patch's operations in one line (seeds and node ids included)."""
    if not spec.patch:
        return "no patch (measure the workspace)"
    parts = []
    for op in spec.patch:
        if op.op == "mutation":
            parts.append(f"{op.operator}(seed {op.seed})")
        elif op.op == "set_node":
            parts.append(f"set {op.node}.{'/'.join(sorted(op.fields))}")
        elif op.op == "append_prompt":
            parts.append(f"append to {op.node}.prompt")
        else:
            parts.append("replace workflow")
    return "; ".join(parts)


def reflect_line(iteration: int, r: IterRecord) -> str:
    """The REFLECTs of an iteration in one line of markup ('' when none fired)."""
    if not r.reflect:
        return ""
    items = [
        f"<b>{esc(b.trigger)}</b> → {esc(b.verdict)}"
        + (f", frontier {esc(' > '.join(b.frontier))}" if b.frontier else "")
        + (" <span class='bad'>(reply unusable: fallback)</span>" if b.malformed else "")
        for b in r.reflect
    ]
    return f"<p>REFLECT fired before THINK of iteration {iteration}: {'; '.join(items)}.</p>"


def _think(r: IterRecord) -> str:
    t = r.think
    status = esc(t.status) if t.status == "OK" else f"<span class='bad'>{esc(t.status)}</span>"
    bits = [
        f"THINK {status}: {t.calls} call(s), {t.malformed} malformed, "
        f"{t.escalations} escalation(s) to REFLECT",
        f"frontier {esc(' > '.join(t.frontier) or '(none)')}",
        f"shared axes {esc(', '.join(t.shared_axes) or 'none')}",
    ]
    if t.rebuttal:
        bits.append(f"rebuttal: {esc(t.rebuttal)}")
    reasoning = f"<p class='muted'>{esc(t.reasoning)}</p>" if t.reasoning else ""
    return f"<p>{'; '.join(bits)}.</p>{reasoning}"


def _critic(r: IterRecord, i: int) -> Raw:
    s = r.specs[i]
    if not s.critic:
        return Raw("<span class='muted'>not asked (no patch)</span>")
    rounds = [
        f"R{c.round} <b>{esc(c.verdict)}</b>: {esc(c.reason)}"
        + (f" <span class='muted'>[{esc('; '.join(c.matches))}]</span>" if c.matches else "")
        + (" <span class='bad'>(reply unusable)</span>" if c.malformed else "")
        for c in s.critic
    ]
    revised = " <span class='pill'>revised</span>" if s.revised else ""
    return Raw("<br>".join(rounds) + revised)


def _experiment(r: IterRecord, i: int) -> Raw:
    e = r.specs[i].experiment
    if e.outcome_class != "measured":
        return Raw(f"<span class='bad'>{esc(e.outcome_class)}</span><br>{esc(e.note)}")
    head = (
        f"<b>{fmt(e.score, '.3f')}</b> vs {fmt(e.baseline, '.3f')} (<b>{fmt(e.delta, '+.3f')}</b>)"
    )
    return Raw(
        f"{head}<br><span class='muted'>{e.pairs} pair(s), {e.runs} run(s), "
        f"{e.passes} pass(es)</span>"
    )


def _smoke(r: IterRecord, i: int) -> Raw:
    smoke = r.specs[i].experiment.smoke
    if not smoke:
        return Raw("<span class='muted'>none</span>")
    passed = sum(1 for a in smoke if a.passed)
    last = smoke[-1]
    note = ""
    if last.reused:
        note = f"reused {esc(last.reused)}"
    elif last.error:
        note = f"<span class='bad'>{esc(last.error[:160])}</span>"
    elif not last.passed:
        note = f"<span class='bad'>{esc(last.run_status)}, {esc(last.failure_category)}</span>"
    return Raw(f"{passed}/{len(smoke)} passed" + (f"<br>{note}" if note else ""))


def _idea(s: Spec, pattern: Sequence[str]) -> Raw:
    confirms = f" confirms iter_{s.confirms.iter}/{s.confirms.spec_id};" if s.confirms else ""
    return Raw(
        f"<span title='{esc(s.hypothesis)}'>{esc(s.title)}</span><br>"
        f"<span class='muted'>{esc(patch_text(s))};{esc(confirms)} "
        f"{esc(' '.join(pattern) or 'no change signature')}</span>"
    )


def _spec_table(r: IterRecord) -> str:
    rows = [
        (
            Raw(f"<b>{esc(s.spec.spec_id)}</b>"),
            s.spec.intervention_axis,
            s.spec.scale,
            _idea(s.spec, s.experiment.pattern),
            _critic(r, i),
            _experiment(r, i),
            _smoke(r, i),
            Raw(verdict_pill(s.distill.verdict)),
        )
        for i, s in enumerate(r.specs)
    ]
    heads = ["spec", "axis", "scale", "idea, patch, pattern", "CRITIC", "EXPERIMENT", "smoke",
             "DISTILL"]  # fmt: skip
    return table(heads, rows, css_class="specs")


def _smoke_table(r: IterRecord) -> str:
    rows = [
        (
            s.spec.spec_id,
            a.attempt,
            a.patch,
            "passed" if a.passed else "failed",
            fmt(a.score, ".3f"),
            a.run_status or "-",
            a.failure_category or "-",
            a.reused or a.error or "",
        )
        for s in r.specs
        for a in s.experiment.smoke
    ]
    heads = ["spec", "attempt", "patch", "smoke", "score", "run", "failure", "error / reused"]
    return table(heads, rows, numeric=(1, 4))


def _meta_table(calls: Sequence[MetaCalls]) -> str:
    rows = [
        (c.phase, c.calls, c.failed, fmt_tokens(c.input_tokens), fmt_tokens(c.output_tokens))
        for c in calls
    ]
    return table(
        ["phase", "attempts", "failed", "input tokens", "output tokens"],
        rows,
        numeric=(1, 2, 3, 4),
    )


def _wave(r: IterRecord) -> str:
    w = r.wave
    if w is None:
        return "<p class='muted'>No wave: nothing was measured.</p>"
    rows = [(key, w.episodes.get(key, 0), workers) for key, workers in w.workers.items()]
    head = (
        f"<p>{esc(w.executor)}, cap {w.cap} workers{', queued' if w.queued else ''}, "
        f"makespan {w.makespan_rounds} round(s), {w.wall_s:.1f} s.</p>"
    )
    return head + table(["submission", "episodes", "workers"], rows, numeric=(1, 2))


def _distill(r: IterRecord) -> str:
    d = r.distill
    status = "" if d.status == "OK" else f"<p class='bad'>{esc(d.status)}</p>"
    adopted = (
        f"<p class='good'>Adopted {esc(d.adopted)}.</p>" if d.adopted else "<p>Nothing adopted.</p>"
    )
    refused = (
        f"<p class='bad'>Adoption refused: {esc(d.adopt_refused)}</p>" if d.adopt_refused else ""
    )
    return (
        f"{status}<p><b>DISTILL</b>: {esc(d.milestone)}</p>"
        f"<p>{esc(d.cross_spec_lesson)}</p>{adopted}{refused}"
    )


def _lessons(r: IterRecord) -> str:
    rows = [
        (s.spec.spec_id, Raw(verdict_pill(s.distill.verdict)), s.distill.lesson) for s in r.specs
    ]
    ids = [
        ("hypotheses added (THINK)", r.think.hypotheses_added),
        ("knowledge added (THINK)", r.think.knowledge_added),
        ("knowledge added (DISTILL)", r.distill.knowledge_added),
        ("hypotheses added (DISTILL)", r.distill.hypotheses_added),
        ("hypotheses removed (DISTILL)", r.distill.hypotheses_removed),
        ("tools written", r.think.tools_written),
    ]
    notes = "".join(
        f"<li>{esc(name)}: {esc(', '.join(values))}</li>" for name, values in ids if values
    )
    return table(["spec", "verdict", "lesson"], rows) + (f"<ul>{notes}</ul>" if notes else "")


def iteration_block(r: IterRecord, calls: Sequence[MetaCalls]) -> str:
    """The card of one committed iteration."""
    pills = [f"attempt {r.attempt}"] if r.attempt > 1 else []
    pills.append(f"{r.wall_s:.0f} s")
    pills.append(f"eval {fmt_usd(r.cost_usd)}")
    adopted = r.summary.adopted
    head = (
        f"<h3>Iteration {r.iter} "
        + "".join(f"<span class='pill'>{esc(p)}</span>" for p in pills)
        + (f"<span class='pill good'>adopted {esc(adopted)}</span>" if adopted else "")
        + "</h3>"
    )
    parts = [
        head,
        reflect_line(r.iter, r),
        _think(r),
        _spec_table(r),
        _distill(r),
        details("lessons, and the ids written", _lessons(r)),
        details("smoke attempts", _smoke_table(r), open_=any(
            not a.passed for s in r.specs for a in s.experiment.smoke
        )),
        details("the wave", _wave(r)),
        details("meta-model calls", _meta_table(calls)),
    ]  # fmt: skip
    return f'<div class="runcard" id="iter-{r.iter}">{"".join(parts)}</div>'
