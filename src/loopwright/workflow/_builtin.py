"""Built-in workflows (YAML files shipped in the package) and resolving a name or a path."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from loopwright.errors import ConfigError, UsageError
from loopwright.workflow._catalog import OUTER_LOOP_FUNCTIONS, Catalog
from loopwright.workflow._io import load_workflow, workflow_from_text
from loopwright.workflow._model import Workflow
from loopwright.workflow._validate import check_workflow

__all__ = [
    "builtin_workflow",
    "builtin_workflow_names",
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


def resolve_workflow(
    name_or_path: str | Path, *, check: bool = True, catalog: Catalog | None = None
) -> Workflow:
    """A built-in workflow by name, or a workflow file (.yaml, .yml, .json) by path.

    A built-in name wins over a file of the same name in the current directory. With `check`
    (the default) the result must pass `check_workflow` against `catalog`. Raises ConfigError
    when the argument is neither, naming both possibilities and the built-ins.
    """
    key = str(name_or_path)
    if key in builtin_workflow_names():
        wf = builtin_workflow(key)
        if check and catalog is not None:
            check_workflow(wf, catalog, source=f"built-in workflow {key}")
        return wf
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return load_workflow(path, check=check, catalog=catalog)
    raise ConfigError(
        f"{key!r} is neither a built-in workflow nor a workflow file",
        got=f"no built-in of that name, and no file at {path}",
        fix=f"use a built-in ({', '.join(builtin_workflow_names())}) "
        "or the path to a .yaml, .yml or .json workflow file",
    )


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
