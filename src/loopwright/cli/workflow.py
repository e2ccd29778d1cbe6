"""`loopwright workflow list|validate|show|render`: the built-ins, checking and drawing a workflow."""

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
    Node,
    Workflow,
    builtin_workflow,
    builtin_workflow_names,
    check_workflow,
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
    help="Workflows (the genome): list the built-ins, validate, show and render a workflow.",
    no_args_is_help=True,
)
app.add_typer(workflow_app, name="workflow")

console = Console(highlight=False, soft_wrap=False)

WORKFLOW_DOC = "docs/workflow.md"

NameOrPath = Annotated[
    str,
    typer.Argument(help="A built-in workflow name (see `workflow list`) or a .yaml/.json file."),
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
    """List the built-in workflows with their node counts and descriptions."""
    workflows = [builtin_workflow(name) for name in builtin_workflow_names()]
    if as_json:
        rows = [
            {"name": wf.name, "nodes": len(wf.nodes), "description": wf.description}
            for wf in workflows
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("workflow", "nodes", "description", box=None)
    for wf in workflows:
        table.add_row(escape(wf.name), str(len(wf.nodes)), escape(wf.description))
    console.print(table)


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
    """Print a valid workflow: a summary table (nodes, edges, gates), or YAML, JSON or Mermaid."""
    wf = resolve_workflow(name_or_path)
    if fmt is ShowFormat.yaml:
        typer.echo(workflow_to_yaml(wf), nl=False)
    elif fmt is ShowFormat.json:
        typer.echo(workflow_to_json(wf), nl=False)
    elif fmt is ShowFormat.mermaid:
        typer.echo(to_mermaid(wf), nl=False)
    else:
        _print_summary(wf)


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


def _print_summary(wf: Workflow) -> None:
    console.print(f"[bold]{escape(wf.name)}[/]  hash {workflow_hash(wf)[:12]}")
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
