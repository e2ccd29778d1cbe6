"""`loopwright workflow list|validate|show|render`: the built-ins and the library, checking and
drawing a workflow."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from loopwright._fs import atomic_write
from loopwright.cli._app import EXIT_USER_ERROR, app
from loopwright.errors import ConfigError
from loopwright.workflow import (
    AgentNode,
    FnNode,
    GateNode,
    LibraryEntry,
    Node,
    Provenance,
    Workflow,
    WorkflowSource,
    builtin_workflow,
    builtin_workflow_names,
    check_workflow,
    library_entries,
    load_workflow,
    locate_workflow,
    render_svg,
    resolve_workflow,
    to_dot,
    to_mermaid,
    to_skill_md,
    validate_workflow,
    workflow_hash,
    workflow_to_json,
    workflow_to_yaml,
)

workflow_app = typer.Typer(
    help="Workflows (the genome): list the built-ins and the library, validate, show and render "
    "a workflow.",
    no_args_is_help=True,
)
app.add_typer(workflow_app, name="workflow")

console = Console(highlight=False, soft_wrap=False)

WORKFLOW_DOC = "docs/workflow.md"

NameOrPath = Annotated[
    str,
    typer.Argument(
        help="A built-in or library workflow name (see `workflow list`) or a .yaml/.json file."
    ),
]


class ShowFormat(StrEnum):
    """How `workflow show` prints a workflow."""

    table = "table"
    yaml = "yaml"
    json = "json"
    mermaid = "mermaid"


class RenderFormat(StrEnum):
    """What `workflow render` draws."""

    mermaid = "mermaid"
    dot = "dot"
    svg = "svg"


@workflow_app.command("list")
def list_workflows(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the built-in workflows, then the library's (promoted workflows and --workflows-dir
    directories) with where each came from."""
    builtins = builtin_workflow_names()
    rows = [_builtin_row(builtin_workflow(name)) for name in builtins]
    rows += [_library_row(entry) for entry in library_entries(builtins)]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("workflow", "source", "nodes", "description", box=None)
    for row in rows:
        table.add_row(
            escape(str(row["name"])), escape(_source_cell(row)), str(row["nodes"] or "-"),
            escape(str(row["description"])),
        )  # fmt: skip
    console.print(table)


def _builtin_row(wf: Workflow) -> dict[str, object]:
    return {"name": wf.name, "source": "built-in", "path": None, "nodes": len(wf.nodes),
            "description": wf.description, "shadowed": False, "provenance": None}  # fmt: skip


def _library_row(entry: LibraryEntry) -> dict[str, object]:
    """A library file's row; one that does not read is listed with its problem, not hidden."""
    wf: Workflow | None = None
    try:
        wf = load_workflow(entry.path)
        description = wf.description
    except ConfigError as exc:
        description = f"invalid: {exc.render().splitlines()[0]}"
    if entry.shadowed:
        description = f"shadowed by the built-in {entry.name!r} (use the path); {description}"
    prov = entry.provenance
    return {
        "name": entry.name,
        "source": "library",
        "path": str(entry.path),
        "nodes": len(wf.nodes) if wf is not None else None,
        "description": description,
        "shadowed": entry.shadowed,
        "provenance": None if prov is None else prov.model_dump(mode="json"),
    }


def _source_cell(row: dict[str, object]) -> str:
    if row["source"] == "built-in":
        return "built-in"
    prov = row["provenance"]
    promoted = f" (promoted {str(prov['promoted_at'])[:10]})" if isinstance(prov, dict) else ""
    return f"{row['path']}{promoted}"


@workflow_app.command("validate")
def validate(
    name_or_path: NameOrPath,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {valid, issues, hash} as JSON.")
    ] = False,
) -> None:
    """Check a workflow against every rule; print each problem, naming the node or edge.

    Exits 0 when valid and 2 when there are problems (or the file cannot be read).
    """
    wf = resolve_workflow(name_or_path, check=False)
    issues = validate_workflow(wf)
    digest = workflow_hash(wf)
    if as_json:
        report = {
            "valid": not issues,
            "name": wf.name,
            "issues": [issue.to_dict() for issue in issues],
            "hash": digest,
        }
        typer.echo(json.dumps(report, indent=2))
        if issues:
            raise typer.Exit(EXIT_USER_ERROR)
        return
    check_workflow(wf, source=_source(name_or_path))
    typer.echo(f"ok {wf.name} ({len(wf.nodes)} nodes, hash {digest[:12]})")


@workflow_app.command("show")
def show(
    name_or_path: NameOrPath,
    fmt: Annotated[
        ShowFormat, typer.Option("--format", "-f", help="table, yaml, json or mermaid.")
    ] = ShowFormat.table,
) -> None:
    """Print a valid workflow: a summary table (where it comes from and, for a promoted one, its
    provenance: run, holdout gain and interval, date; nodes, edges, gates), or YAML, JSON or
    Mermaid."""
    source = locate_workflow(name_or_path)
    wf = resolve_workflow(name_or_path)
    if fmt is ShowFormat.yaml:
        typer.echo(workflow_to_yaml(wf), nl=False)
    elif fmt is ShowFormat.json:
        typer.echo(workflow_to_json(wf), nl=False)
    elif fmt is ShowFormat.mermaid:
        typer.echo(to_mermaid(wf), nl=False)
    else:
        _print_summary(wf, source)


@workflow_app.command("render")
def render(
    name_or_path: NameOrPath,
    fmt: Annotated[
        RenderFormat, typer.Option("--format", "-f", help="mermaid, dot or svg (needs graphviz).")
    ] = RenderFormat.mermaid,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Draw a valid workflow as Mermaid, Graphviz DOT or SVG."""
    wf = resolve_workflow(name_or_path)
    if fmt is RenderFormat.svg:
        text = render_svg(wf)
    elif fmt is RenderFormat.dot:
        text = to_dot(wf)
    else:
        text = to_mermaid(wf)
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    try:
        atomic_write(output, text)
    except OSError as exc:
        raise ConfigError(f"cannot write {output}", got=str(exc)) from None
    typer.echo(f"wrote {output} ({fmt.value})")


@workflow_app.command("export-skill")
def export_skill(
    name_or_path: NameOrPath,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Write a workflow as a SKILL.md playbook an agent such as Claude Code can follow."""
    text = to_skill_md(resolve_workflow(name_or_path))
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        atomic_write(output, text)
    except OSError as exc:
        raise ConfigError(f"cannot write {output}", got=str(exc)) from None
    typer.echo(f"wrote {output} (SKILL.md)")


def _source(name_or_path: str) -> str:
    return "" if name_or_path in builtin_workflow_names() else name_or_path


def _print_summary(wf: Workflow, source: WorkflowSource) -> None:
    console.print(f"[bold]{escape(wf.name)}[/]  hash {workflow_hash(wf)[:12]}")
    # Paths are never wrapped, so that they can be copied.
    console.print(f"source: {escape(source.describe())}", soft_wrap=True)
    if source.provenance is not None:
        for line in provenance_lines(source.provenance):
            console.print(escape(line), soft_wrap=True)
        if source.provenance.workflow_hash != workflow_hash(wf):
            console.print(
                "  [bold yellow]changed since it was promoted[/] (promoted hash "
                f"{source.provenance.workflow_hash[:12]}): the figures above are the original's"
            )
    elif source.kind == "library":
        console.print("provenance: none recorded (not promoted by `outer-loop promote`)")
    if wf.description:
        console.print(escape(wf.description))
    console.print(_node_table(wf))
    edges = ", ".join(str(e) for e in wf.edges) or "(none)"
    console.print(f"edges: {escape(edges)}")
    for gate in (n for n in wf.nodes if isinstance(n, GateNode)):
        test = f"check {gate.check}" if gate.check is not None else "LLM judge"
        console.print(
            escape(f"gate {gate.id}: {test}; on failure RELOOP to {gate.reloop_to}")
            + f" (at most {gate.max_loops} times)"
        )


def provenance_lines(prov: Provenance) -> list[str]:
    """What `workflow show` says about a promoted workflow's origin."""
    sim = " [SIMULATED: the offline sim model]" if prov.simulated else ""
    gain = prov.holdout_gain
    if gain is None:
        gain_text = "no holdout scores"
    else:
        pct = round(gain.level * 100)
        gain_text = (
            f"{gain.mean:+.3f} ({pct}% CI {gain.low:+.3f} .. {gain.high:+.3f}, "
            f"{gain.n_tasks} tasks)"
        )
    forced = " (promoted with --force: the interval includes zero)" if prov.forced else ""
    return [
        f"promoted: {prov.promoted_at.isoformat()} from run {prov.run_dir}",
        f"  individual {prov.individual_id} ({prov.mode}, generation {prov.generation})",
        f"  seed {prov.seed_workflow} on {prov.benchmark}, model {prov.model}{sim}",
        f"  holdout gain over the seed: {gain_text}{forced}",
    ]


def _node_table(wf: Workflow) -> Table:
    columns = ["id", "kind", "role / fn / check", "loop", "model", "tools"]
    rows = [_node_row(node) for node in wf.nodes]
    for row in rows:
        if row[0] in wf.frozen:
            row[0] += "\n(frozen)"
    table = Table(box=None)
    for column in columns:
        # The other cells keep their natural width; the tool lists wrap into what is left.
        table.add_column(column, overflow="fold", no_wrap=column != "tools")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    return table


def _node_row(node: Node) -> list[str]:
    if isinstance(node, AgentNode):
        tools = ", ".join(node.tools) or "-"
        return [node.id, node.kind, node.role, node.loop, node.model, tools]
    if isinstance(node, FnNode):
        args = ", ".join(f"{k}={v}" for k, v in node.args.items())
        return [node.id, node.kind, f"{node.fn}({args})", "-", "-", "-"]
    what = f"check: {node.check}" if node.check is not None else "judge (LLM)"
    return [node.id, node.kind, what, "-", "-", "-"]
