"""`loopwright ab plan|record|score|apply`: the A/B harness of the agent loops (docs/ab.md)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from loopwright.cli._app import EXIT_FAILED, app, progress_bar
from loopwright.harness import (
    BriefSuite,
    Cell,
    CellResult,
    GatewaySource,
    NothingToApply,
    Plan,
    RecordOptions,
    Scoreboard,
    apply_promotion,
    build_scoreboard,
    current_provenance,
    live_loops,
    load_brief_suite,
    load_manifest,
    make_plan,
    read_scoreboard,
    record,
    scoreboard_markdown,
)
from loopwright.sandbox import default_sandbox
from loopwright.store import check_new_dir, check_output_file

__all__ = ["ab_app"]

ab_app = typer.Typer(
    help="Rank the agent loops head to head on the brief suite and emit the engine settings "
    "to apply (docs/ab.md)."
)
app.add_typer(ab_app, name="ab")

console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False)

SCOREBOARD_JSON = "scoreboard.json"
SCOREBOARD_MD = "scoreboard.md"

ManifestOption = Annotated[
    Path | None,
    typer.Option("--manifest", help="A manifest YAML file (default: the bundled one)."),
]
TierOption = Annotated[
    list[str] | None,
    typer.Option("--tier", help="Bind a tier to a model: small=provider/model (repeatable)."),
]


def _plan(manifest: Path | None, tiers: list[str] | None) -> tuple[Plan, BriefSuite]:
    loaded, source = load_manifest(manifest)
    suite = load_brief_suite()
    plan = make_plan(
        loaded, registered=live_loops(), suite=suite, tier_overrides=tiers or (), source=source
    )
    return plan, suite


@ab_app.command("plan")
def plan_command(
    manifest: ManifestOption = None,
    tier: TierOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Print the matrix (loops x tiers x briefs x repetitions) and the run count. Spends nothing."""
    plan, suite = _plan(manifest, tier)
    if as_json:
        data = plan.describe() | {"digest": plan.digest, "runs": plan.run_count}
        typer.echo(json.dumps(data, indent=2))
        return
    console.print(f"manifest: {plan.source} (digest {plan.digest[:16]})")
    console.print(f"loops ({len(plan.loops)}): {', '.join(plan.loops)}")
    tiers = Table("tier", "provider/model (every loop)", box=None, title_justify="left")
    for name, model in plan.tiers:
        tiers.add_row(name, model)
    console.print(tiers)
    briefs = Table("brief", "complexity", "max_turns", "checks", box=None)
    for brief in plan.briefs:
        briefs.add_row(
            brief.id, brief.complexity, str(brief.spec.max_turns), str(len(brief.checks))
        )
    console.print(briefs)
    console.print(f"brief suite: version {suite.version} (digest {suite.digest[:16]})")
    console.print(f"repetitions: {plan.repetitions}; seed: {plan.seed}")
    console.print(
        f"{len(plan.loops)} loops x {len(plan.tiers)} tiers x {len(plan.briefs)} briefs x "
        f"{plan.repetitions} repetitions = [bold]{plan.run_count} runs[/]"
    )


@ab_app.command("record")
def record_command(
    gateway_base_url: Annotated[
        str,
        typer.Option(
            "--gateway-base-url",
            help="The LLM gateway every loop reaches models through (an OpenAI-compatible base "
            "URL, e.g. http://localhost:4000/v1); external agents go through a metering relay "
            "in front of it.",
        ),
    ],
    manifest: ManifestOption = None,
    tier: TierOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Record directory (default runs/ab-<time>); an existing one resumes."
        ),
    ] = None,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox", help="auto (bubblewrap when it works), bubblewrap, local, docker."
        ),
    ] = "auto",
) -> None:
    """Run every cell of the matrix through the gateway, then write the scoreboard."""
    plan, suite = _plan(manifest, tier)
    root = out or Path("runs") / f"ab-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"
    check_new_dir(root, "--out")  # before anything is written (an existing one resumes)
    options = RecordOptions(
        out=root,
        sandbox=default_sandbox(sandbox),
        models=GatewaySource(gateway_base_url),
        gateway=gateway_base_url,
    )
    progress = progress_bar(err_console, enabled=True)
    with progress:
        bar = progress.add_task("recording", total=plan.run_count)

        def advance(cell: Cell, result: CellResult | None) -> None:
            what = "done before" if result is None else result.status
            progress.update(bar, advance=1, description=f"{cell.id}: {what}")

        record(plan, suite, options, on_cell=advance)
    scoreboard = _write_scoreboard(root)
    console.print(f"recorded {root}")
    _print_promotion(scoreboard)


def _write_scoreboard(root: Path) -> Scoreboard:
    scoreboard = build_scoreboard(root, current_provenance())
    (root / SCOREBOARD_JSON).write_text(
        scoreboard.model_dump_json(indent=2) + "\n", encoding="utf-8"
    )
    (root / SCOREBOARD_MD).write_text(scoreboard_markdown(scoreboard), encoding="utf-8")
    return scoreboard


def _print_promotion(sb: Scoreboard) -> None:
    if sb.stale:
        err_console.print(f"[bold yellow]{escape(sb.stale)}[/]")
    console.print(escape(sb.promotion.note))
    for line in sb.promotion.lines:
        console.print(escape(line))


@ab_app.command("score")
def score_command(
    record_dir: Annotated[Path, typer.Argument(help="A directory written by `ab record`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the scoreboard JSON.")] = False,
) -> None:
    """Build the scoreboard of a record directory (scoreboard.json and .md in it) and print it."""
    scoreboard = _write_scoreboard(record_dir)
    if as_json:
        typer.echo(scoreboard.model_dump_json(indent=2))
        return
    typer.echo(scoreboard_markdown(scoreboard), nl=False)


@ab_app.command("apply")
def apply_command(
    scoreboard: Annotated[
        Path, typer.Argument(help="A scoreboard.json, or the record directory holding one.")
    ],
    settings: Annotated[
        Path | None,
        typer.Option(
            "--settings",
            help="The settings file to write (default: $LOOPWRIGHT_SETTINGS, else "
            "~/.loopwright/settings.yaml).",
        ),
    ] = None,
    allow_stale: Annotated[
        bool, typer.Option("--allow-stale", help="Apply a scoreboard recorded at another commit.")
    ] = False,
) -> None:
    """Write the scoreboard's promotion lines into the user's engine settings."""
    path = scoreboard / SCOREBOARD_JSON if scoreboard.is_dir() else scoreboard
    sb = read_scoreboard(path)
    if settings is not None:
        check_output_file(settings, "--settings")
    try:
        written, engine = apply_promotion(
            sb, current_provenance(), settings=settings, allow_stale=allow_stale
        )
    except NothingToApply as exc:
        err_console.print(escape(exc.render()))
        raise typer.Exit(EXIT_FAILED) from None
    for line in sb.promotion.lines:
        console.print(escape(line))
    overrides = ", ".join(f"{k}={v}" for k, v in engine.loop_complexity_overrides.items())
    console.print(
        f"written to {written} (default {engine.default_loop_type}; overrides: {overrides or 'none'})"
    )
