"""constraints.md: merged at bootstrap from up to four layers, then the user's to edit.

Layers, in order: the package's common layer (`research/data/constraints/common.md`), a
per-workflow layer (`research/data/constraints/<workflow name>.md`, when the package has one),
`--cons-file PATH` and `--constraints TEXT`. Each layer is copied under a heading naming it; a
missing optional layer is named as absent.

Most of the file is prose for the meta model. Bullets of these forms are also enforced by the
loop (read again every iteration):

    - forbid-axis: NAME        no spec may name this intervention axis; REFLECT closes it
    - forbid-operator: NAME    no patch may use this mutation operator
    - max-nodes: N             a patched workflow may have at most N nodes
    - protect-node: ID         a patch may not change, remove or rewire around node ID
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.store import read_text_input

__all__ = ["Directives", "merge_constraints", "parse_directives"]

_DIRECTIVE = re.compile(
    r"^\s*-\s*(forbid-axis|forbid-operator|max-nodes|protect-node)\s*:\s*(\S+)\s*$"
)


@dataclass(frozen=True, slots=True)
class Directives:
    """The machine-enforced part of constraints.md."""

    forbid_axes: tuple[str, ...] = ()
    forbid_operators: tuple[str, ...] = ()
    max_nodes: int | None = None
    protect_nodes: tuple[str, ...] = ()


def _layer_text(name: str) -> str | None:
    entry = resources.files("loopwright.research") / "data" / "constraints" / f"{name}.md"
    return entry.read_text(encoding="utf-8") if entry.is_file() else None


def merge_constraints(workflow_name: str, cons_file: Path | None, text: str | None) -> str:
    """The bootstrap constraints.md: the four layers in order, each under its own heading.

    ConfigError when `cons_file` is given but unreadable, or the result's directives are bad.
    """
    parts = [
        "# Constraints\n",
        "Merged at bootstrap from the layers below, in order; edit freely afterwards. Bullets\n"
        "`- forbid-axis: NAME`, `- forbid-operator: NAME`, `- max-nodes: N` and\n"
        "`- protect-node: ID` are enforced by the loop; the rest guides the meta model.\n",
    ]
    common = _layer_text("common")
    parts.append(_section("common (loopwright built-in)", common))
    parts.append(
        _section(f"workflow {workflow_name} (loopwright built-in)", _layer_text(workflow_name))
    )
    file_text: str | None = None
    if cons_file is not None:
        file_text = read_text_input(cons_file, "--cons-file")
    parts.append(_section(f"--cons-file {cons_file}" if cons_file else "--cons-file", file_text))
    parts.append(_section("--constraints", text))
    merged = "\n".join(parts)
    parse_directives(merged, source="the merged constraints")
    return merged


def _section(title: str, body: str | None) -> str:
    if body is None or not body.strip():
        return f"## Layer: {title}\n(absent)\n"
    return f"## Layer: {title}\n{body.strip()}\n"


def parse_directives(text: str, *, source: str = "constraints.md") -> Directives:
    """The enforced bullets of constraints text. ConfigError for a max-nodes that is not a
    positive integer."""
    axes: list[str] = []
    operators: list[str] = []
    protect: list[str] = []
    max_nodes: int | None = None
    for line in text.splitlines():
        match = _DIRECTIVE.match(line)
        if match is None:
            continue
        key, value = match.groups()
        if key == "forbid-axis":
            axes.append(value)
        elif key == "forbid-operator":
            operators.append(value)
        elif key == "protect-node":
            protect.append(value)
        else:
            if not value.isdigit() or int(value) < 1:
                raise ConfigError(f"{source}: max-nodes takes a positive integer", got=line.strip())
            max_nodes = int(value) if max_nodes is None else min(max_nodes, int(value))
    return Directives(
        tuple(dict.fromkeys(axes)), tuple(dict.fromkeys(operators)), max_nodes, tuple(protect)
    )
