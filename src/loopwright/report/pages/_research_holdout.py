"""The research page's holdout section: every holdout check, its paired interval and the
overfit signal (docs/research.md, "Holdout")."""

from __future__ import annotations

from loopwright.report._html import Raw, Section, fmt, table
from loopwright.research import StatusReport

__all__ = ["holdout_section", "overfit_text"]


def overfit_text(st: StatusReport) -> str | None:
    """The banner text when the latest holdout check raised the overfit signal, else None."""
    if not st.overfit or not st.holdout_checks:
        return None
    return "OVERFIT: " + st.holdout_checks[-1].line()


def holdout_section(st: StatusReport) -> Section:
    """The holdout tasks, never shown to the meta model, and every check on them."""
    if not st.holdout:
        body = (
            "<p>No holdout: this working directory was made before holdouts (config schema 1) "
            "or no other task of the eval tasks' levels was left. Every figure on this page is "
            "on the tasks the loop optimises.</p>"
        )
        return Section("holdout", "Holdout", body)
    rows = [
        (
            c.kind if c.kind == "final" else f"iter {c.iteration} adoption",
            fmt(c.train_gain, "+.3f"),
            fmt(c.holdout_gain, "+.3f"),
            "-" if c.low is None else f"{c.low:+.3f} .. {fmt(c.high, '+.3f')}",
            f"{c.n_tasks} x {c.repetitions}",
            Raw(
                "<span class='bad'>OVERFIT</span>" if c.overfit else "<span class='good'>no</span>"
            ),
        )
        for c in st.holdout_checks
    ]
    signal = {None: "not checked yet", True: "OVERFIT", False: "no overfit signal"}[st.overfit]
    body = (
        f"<p>{len(st.holdout)} holdout task(s) ({', '.join(st.holdout)}), split off at init and "
        "never shown to THINK, CRITIC, DISTILL or REFLECT; measured at every adoption (against "
        "the workspace it replaced) and when a run ends (against the seed). Interval: 95% paired "
        "bootstrap over holdout tasks. Overfit: the train gain more than the config's "
        f"overfit_gap above the holdout gain. Now: <b>{signal}</b>.</p>"
        + table(
            ["check", "train gain", "holdout gain", "95% CI", "tasks x reps", "overfit"],
            rows, numeric=(1, 2),
        )
    )  # fmt: skip
    return Section("holdout", "Holdout", body)
