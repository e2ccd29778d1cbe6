"""The stamp every report carries: which loopwright (version and commit), model, benchmark
(name and content digest) and seed produced the run, so a page can be traced to its inputs."""

from __future__ import annotations

from dataclasses import dataclass

from loopwright.report._html import esc
from loopwright.store import source_commit

__all__ = ["Stamp", "sim_text", "source_commit", "stamp_html"]


def sim_text(model: str | None) -> str:
    """The banner of a page whose results come from a simulated model (`sim`, or scripted)."""
    return (
        f"SIMULATED RESULTS: this run's model ({model or 'unknown'}) is an offline simulator, "
        "not an LLM (docs/sim-model.md). Scores show how workflows fare against the simulator, "
        "not against a real model."
    )


_NOT_RECORDED = "not recorded"


@dataclass(frozen=True, slots=True)
class Stamp:
    """What a run was made with. None means the run directory does not record it (runs made
    before the field existed); the page says so rather than guessing."""

    loopwright_version: str | None
    git_commit: str | None
    model: str | None
    simulated: bool
    benchmark: str | None
    benchmark_digest: str | None
    seed: int | None
    extra: tuple[tuple[str, str], ...] = ()


def stamp_html(stamp: Stamp) -> str:
    """The stamp as one line of labelled values (escaped)."""
    commit = stamp.git_commit
    if commit is not None:
        sha, _, flag = commit.partition("+")
        commit = sha[:12] + (" (uncommitted changes)" if flag else "")
    digest = stamp.benchmark_digest[:12] if stamp.benchmark_digest else None
    model = stamp.model
    if model is not None and stamp.simulated:
        model += " (simulated)"
    items = [
        ("loopwright", stamp.loopwright_version),
        ("commit", commit),
        ("model", model),
        ("benchmark", stamp.benchmark),
        ("benchmark digest", digest),
        ("seed", None if stamp.seed is None else str(stamp.seed)),
        *stamp.extra,
    ]
    spans = "".join(
        f'<span data-stamp="{esc(key)}">{esc(key)} <b>{esc(value or _NOT_RECORDED)}</b></span>'
        for key, value in items
    )
    return f'<div class="stamp" id="stamp">{spans}</div>'
