"""Reading and writing workflows as YAML or JSON, with errors that name the file and the field."""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError
from loopwright.workflow._catalog import Catalog
from loopwright.workflow._model import Workflow
from loopwright.workflow._validate import WORKFLOW_DOC, check_workflow

__all__ = [
    "WorkflowFormat",
    "dump_workflow",
    "load_workflow",
    "workflow_format",
    "workflow_from_text",
    "workflow_to_json",
    "workflow_to_yaml",
]

WorkflowFormat = Literal["yaml", "json"]

_SUFFIXES: dict[str, WorkflowFormat] = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}
_NODE_KINDS = ("agent", "fn", "gate")
_FLOW_MAPPING_MAX = 3


def workflow_format(path: str | Path) -> WorkflowFormat:
    """The format a file name's suffix implies (.yaml/.yml or .json); ConfigError otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise ConfigError(
            f"{path}: cannot tell the workflow format from the file name",
            got=f"suffix {suffix!r}" if suffix else "no suffix",
            fix="name the file *.yaml, *.yml or *.json",
        )
    return _SUFFIXES[suffix]


def workflow_from_text(
    text: str,
    fmt: WorkflowFormat,
    *,
    source: str = "<text>",
    check: bool = True,
    catalog: Catalog | None = None,
) -> Workflow:
    """Parse a workflow from YAML or JSON text.

    Raises ConfigError naming `source` for malformed text, a duplicate key, or a field that does
    not fit the schema (each as `field.path: message`). With `check` (the default) the result
    must also pass `check_workflow` against `catalog`; without it, it is only well-formed.
    An ephemeral mode file (`<run>/modes/evolve-gen*.json`: mode, individual_id, generation,
    hash and the workflow) reads as the workflow it holds.
    """
    raw = _unwrap_mode(_parse(text, fmt, source))
    if not isinstance(raw, dict):
        got = "an empty document" if raw is None else f"a {type(raw).__name__}"
        raise ConfigError(
            f"{source} is not a workflow: it must hold a mapping with name, nodes and edges",
            got=got,
            fix=f"see {WORKFLOW_DOC} for the schema and an example",
        )
    try:
        wf = Workflow.model_validate(raw)
    except ValidationError as exc:
        problems = "\n".join(f"  - {p}" for p in _field_problems(exc, raw))
        raise ConfigError(
            f"{source} is not a valid workflow:\n{problems}",
            fix=f"see {WORKFLOW_DOC} for the schema",
        ) from None
    if check:
        check_workflow(wf, catalog, source=source)
    return wf


def load_workflow(
    path: str | Path, *, check: bool = True, catalog: Catalog | None = None
) -> Workflow:
    """Read a workflow from a .yaml, .yml or .json file (see `workflow_from_text`).

    Raises ConfigError when the file does not exist, is not UTF-8, or does not hold a valid
    workflow; every message names the file.
    """
    file = Path(path)
    fmt = workflow_format(file)
    if not file.is_file():
        raise ConfigError(
            f"workflow file {file} does not exist",
            fix="check the path, or use a built-in name (`loopwright workflow list`)",
        )
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError.not_utf8(
            f"workflow file {file}", exc, fix="save it as UTF-8 YAML or JSON"
        ) from None
    return workflow_from_text(text, fmt, source=str(file), check=check, catalog=catalog)


def dump_workflow(wf: Workflow, path: str | Path) -> None:
    """Write `wf` to `path` as YAML or JSON, chosen by the suffix. Overwrites the file."""
    fmt = workflow_format(path)
    text = workflow_to_yaml(wf) if fmt == "yaml" else workflow_to_json(wf)
    atomic_write(Path(path), text)


def workflow_to_yaml(wf: Workflow) -> str:
    """YAML with every field written out, keys in schema order, multi-line text as `|` blocks.

    Reading it back gives an equal workflow. Deterministic.
    """
    return yaml.dump(
        wf.model_dump(mode="json"),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=4096,
    )


def workflow_to_json(wf: Workflow) -> str:
    """JSON (indented, UTF-8, keys in schema order) with every field written out. Lossless."""
    return json.dumps(wf.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent list items under their key, as people write YAML by hand.
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Multi-line text (prompts) as a literal block; PyYAML quotes it instead when a block cannot
    # hold it exactly (trailing spaces on a line), so the output stays lossless.
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _flat(value: object) -> bool:
    return (
        value is None
        or isinstance(value, int | float | bool)
        or (isinstance(value, str) and "\n" not in value)
    )


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    # Lists of short scalars (tools, frozen) on one line.
    flow = all(_flat(item) for item in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _represent_dict(dumper: yaml.SafeDumper, value: dict[Any, Any]) -> yaml.MappingNode:
    # Small mappings of scalars (edges, args) on one line; nodes stay blocks.
    flow = len(value) <= _FLOW_MAPPING_MAX and all(_flat(v) for v in value.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=flow)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(dict, _represent_dict)


class _Loader(yaml.SafeLoader):
    """A safe loader that rejects duplicate keys instead of keeping the last one silently."""


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Hashable] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, Hashable):
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _JsonRejectedError(ValueError):
    """JSON that parses but is not allowed here: a duplicate key, NaN or Infinity."""


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _JsonRejectedError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _json_constant(name: str) -> float:
    raise _JsonRejectedError(f"{name} is not a JSON number")


def _parse(text: str, fmt: WorkflowFormat, source: str) -> object:
    try:
        if fmt == "yaml":
            return yaml.load(text, Loader=_Loader)  # safe: _Loader derives from SafeLoader
        return json.loads(text, object_pairs_hook=_json_object, parse_constant=_json_constant)
    except yaml.YAMLError as exc:
        # PyYAML names a parsed string "<unicode string>"; name the real source instead.
        detail = str(exc).replace('"<unicode string>"', source)
        raise ConfigError(f"{source} is not valid YAML", got=detail) from None
    except (json.JSONDecodeError, _JsonRejectedError) as exc:
        raise ConfigError(f"{source} is not valid JSON", got=str(exc)) from None


_MODE_KEYS = frozenset({"mode", "individual_id", "generation", "hash", "workflow"})


def _unwrap_mode(raw: object) -> object:
    """The workflow inside a mode file (exactly the keys `EphemeralModeRegistry` writes), else
    `raw` unchanged."""
    if isinstance(raw, dict) and set(raw) == _MODE_KEYS and isinstance(raw["workflow"], dict):
        return raw["workflow"]
    return raw


def _field_problems(exc: ValidationError, raw: dict[str, Any]) -> list[str]:
    """One `field.path: message (node 'id')` line per pydantic error."""
    lines = []
    for err in exc.errors():
        loc = list(err["loc"])
        # A discriminated union puts the tag ("agent", ...) in the path; people never write it.
        if len(loc) > 2 and loc[0] == "nodes" and loc[2] in _NODE_KINDS:
            del loc[2]
        message = str(err["msg"]).removeprefix("Value error, ")
        lines.append(f"{_path(loc)}: {message}{_node_hint(raw, loc)}")
    return lines


def _path(loc: list[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _node_hint(raw: dict[str, Any], loc: list[int | str]) -> str:
    if len(loc) < 2 or loc[0] != "nodes" or not isinstance(loc[1], int) or loc[2:] == ["id"]:
        return ""
    nodes = raw.get("nodes")
    if not isinstance(nodes, list) or loc[1] >= len(nodes) or not isinstance(nodes[loc[1]], dict):
        return ""
    node_id = nodes[loc[1]].get("id")
    return f" (node {node_id!r})" if isinstance(node_id, str) else ""
