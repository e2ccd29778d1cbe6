"""The evolve page's comparison with the hand designs (`compare_designs`): the winner's paired
gain over the seed and over the best built-in design on the same holdout runs."""

from __future__ import annotations

from loopwright.report._html import Section, esc, fmt, fmt_usd, table
from loopwright.search import BootstrapCI, Checkpoint, evolve_result

__all__ = ["designs_section"]


def designs_section(cp: Checkpoint, *, simulated: bool) -> Section | None:
    """The section, or None when the run did not compare (no design was evaluated)."""
    if not cp.hand_designs:
        return None
    result = evolve_result(cp)
    best = result.best_design
    sim = " SIMULATED: figures against the simulator, not a real model." if simulated else ""
    lines = [
        ("the seed", _gain(result.gain)),
        (f"the best hand design ({best.name})" if best else "the best hand design",
         _gain(result.design_gain)),
    ]  # fmt: skip
    gains = table(["winner's gain over", "mean (95% paired bootstrap interval)"], lines)
    runs = sum(d.runs for d in result.designs)
    cached = sum(d.cached for d in result.designs)
    rows = [
        (d.name, fmt(d.holdout, ".3f"), fmt_usd(d.usd_per_task), d.runs, d.cached,
         _gain(d.winner_gain), "best" if best is not None and d.name == best.name else "")
        for d in result.designs
    ]  # fmt: skip
    designs = table(
        ["design", "holdout", "$/task", "runs", "cached", "winner's gain", ""],
        rows,
        numeric=(1, 2, 3, 4),
    )
    body = (
        f"<p>The winner is {esc(result.winner_origin)}. Every built-in hand design ran on the same holdout "
        f"tasks and repetitions as the winner and the seed ({runs} task runs, {cached} of them "
        "from the fitness cache; counted apart from the search's spend, never used for "
        "selection). Each gain is paired over the holdout tasks. The best design is chosen on "
        f"this very holdout, which favours the design, never the winner.{esc(sim)}</p>"
        + gains
        + designs
    )
    return Section("designs", "Winner against the hand designs", body)


def _gain(ci: BootstrapCI | None) -> str:
    if ci is None:
        return "no holdout task in common"
    verdict = (
        "better (excludes 0)" if ci.low > 0 else "worse (excludes 0)" if ci.high < 0
        else "includes 0"
    )  # fmt: skip
    return f"{ci.describe()}: {verdict}"
