"""Built-in workflows (YAML files shipped in the package) and resolving a name or a path.

`resolve_workflow` is the one place a workflow argument becomes a workflow: a built-in name,
a library name (promoted workflows and `--workflows-dir` directories, see `_library`), or a
file (a workflow, or an ephemeral mode file `modes/evolve-gen*.json` of a run)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from loopwright.errors import ConfigError, UsageError
from loopwright.workflow._catalog import OUTER_LOOP_FUNCTIONS, Catalog
from loopwright.workflow._io import load_workflow, workflow_from_text
from loopwright.workflow._library import (
    Provenance,
    library_dirs,
    library_workflow_path,
    read_provenance,
)
from loopwright.workflow._model import Workflow
from loopwright.workflow._validate import check_workflow

__all__ = [
    "WorkflowSource",
    "builtin_workflow",
    "builtin_workflow_names",
    "locate_workflow",
    "resolve_task_workflow",
    "resolve_workflow",
]

_SUFFIX = ".yaml"


def _builtin_dir() -> Traversable:
    return resources.files("loopwright.workflow") / "builtin"


def builtin_workflow_names() -> list[str]:
    """The names of the built-in workflows, sorted."""
    return sorted(
        entry.name.removesuffix(_SUFFIX)
        for entry in _builtin_dir().iterdir()
        if entry.is_file() and entry.name.endswith(_SUFFIX)
    )


def builtin_workflow(name: str) -> Workflow:
    """The built-in workflow `name`, parsed and validated against the default catalog.

    Raises ConfigError listing the built-in names when there is no such workflow.
    """
    if name not in builtin_workflow_names():
        raise ConfigError(
            f"unknown built-in workflow {name!r}",
            fix=f"use one of: {', '.join(builtin_workflow_names())}",
        )
    text = (_builtin_dir() / f"{name}{_SUFFIX}").read_text(encoding="utf-8")
    return workflow_from_text(text, "yaml", source=f"built-in workflow {name}")


@dataclass(frozen=True, slots=True)
class WorkflowSource:
    """Where a workflow argument points: a built-in (no path), a library workflow (with its
    provenance when it was promoted) or a file given by path."""

    kind: Literal["builtin", "library", "file"]
    name: str
    path: Path | None = None
    provenance: Provenance | None = None

    def describe(self) -> str:
        """One line: `built-in`, `library: PATH` or `file: PATH`."""
        if self.kind == "builtin":
            return "built-in"
        return f"{'library' if self.kind == 'library' else 'file'}: {self.path}"


def locate_workflow(name_or_path: str | Path) -> WorkflowSource:
    """Where `name_or_path` points, in this order: a built-in name, a library name (a name
    with no `/` and no workflow suffix), an existing file. Reads no workflow.

    Raises ConfigError when it is none of them (naming the built-ins and the library
    directories searched) or when a library name is ambiguous."""
    key = str(name_or_path)
    builtins = builtin_workflow_names()
    if key in builtins:
        return WorkflowSource("builtin", key)
    if "/" not in key and not key.endswith((".yaml", ".yml", ".json")):
        found = library_workflow_path(key, builtins)
        if found is not None:
            return WorkflowSource("library", key, found, read_provenance(found))
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return WorkflowSource("file", key, path)
    searched = ", ".join(str(d) for d in library_dirs())
    raise ConfigError(
        f"{key!r} is neither a built-in workflow, a library workflow nor a workflow file",
        got=f"no built-in or library workflow of that name (library: {searched}), "
        f"and no file at {path}",
        fix=f"use a built-in ({', '.join(builtins)}), a library workflow "
        "(`loopwright workflow list`) or the path to a .yaml, .yml or .json workflow file",
    )


def resolve_workflow(
    name_or_path: str | Path, *, check: bool = True, catalog: Catalog | None = None
) -> Workflow:
    """The workflow `name_or_path` names (see `locate_workflow`): a built-in, a library
    workflow, or a workflow or mode file by path.

    A built-in name wins over a library workflow and a file of the same name. With `check`
    (the default) the result must pass `check_workflow` against `catalog`. Raises ConfigError
    when the argument is none of these, naming the possibilities."""
    source = locate_workflow(name_or_path)
    if source.path is None:  # a built-in
        wf = builtin_workflow(source.name)
        if check and catalog is not None:
            check_workflow(wf, catalog, source=f"built-in workflow {source.name}")
        return wf
    return load_workflow(source.path, check=check, catalog=catalog)


def resolve_task_workflow(name_or_path: str | Path) -> Workflow:
    """`resolve_workflow`, refusing the outer loop's own graph: a workflow whose function
    nodes are outer-loop steps runs only under `loopwright evolve`, never on a task."""
    wf = resolve_workflow(name_or_path)
    steps = sorted({n.fn for n in wf.nodes if n.kind == "fn"} & set(OUTER_LOOP_FUNCTIONS))
    if steps:
        raise UsageError(
            f"{name_or_path} is the outer loop itself (steps {', '.join(steps)}), not a workflow "
            "to run on a task",
            fix="evolve a task workflow with it: loopwright evolve --seed-workflow builder-only "
            "--bench BENCH",
        )
    return wf
