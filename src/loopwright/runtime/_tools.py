"""The tool seam: the `Tool` protocol, the `@tool` registry, argument checking, workspace paths,
and `execute_tool_call`, which turns one model tool call into the result the model sees."""

from __future__ import annotations

import inspect
import time
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from loopwright.errors import LoopwrightError
from loopwright.models import JsonValue, ToolCall, ToolSpec
from loopwright.runtime._context import INSTRUCTION_VIEW, ToolContext, ToolError
from loopwright.runtime._registry import Registry

__all__ = [
    "FINISH",
    "TOOLS",
    "FunctionTool",
    "Tool",
    "ToolOutcome",
    "execute_tool_call",
    "relative_path",
    "resolve_path",
    "tool",
]

FINISH = "finish"
"""The tool that ends an agent: offered to every agent node, whatever its allowlist."""

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARTICLE: dict[type, str] = {str: "a", int: "an", float: "a", bool: "a"}


class Tool(Protocol):
    """A tool an agent may call. One verb: `call`, which returns the text the model sees or
    raises ToolError (shown to the model as "error: ..."). `spec()` is what the model is offered."""

    @property
    def name(self) -> str: ...

    def spec(self) -> ToolSpec: ...

    def call(self, ctx: ToolContext, arguments: Mapping[str, JsonValue]) -> str: ...


@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    kind: type
    required: bool
    description: str


@dataclass(frozen=True, slots=True)
class FunctionTool:
    """A tool made from a function `fn(ctx, **arguments) -> str` by `@tool`.

    Parameters come from the function's signature: `str`, `int`, `float`, `bool`, optionally
    `| None` with a default (then the argument may be left out). `call` refuses a missing,
    unexpected or wrongly typed argument with a ToolError naming it and the expected ones.
    """

    name: str
    description: str
    params: tuple[_Param, ...]
    fn: Callable[..., str]

    def spec(self) -> ToolSpec:
        """The JSON-schema description offered to the model."""
        properties: dict[str, JsonValue] = {
            p.name: {"type": _JSON_TYPES[p.kind], "description": p.description} for p in self.params
        }
        required: list[JsonValue] = [p.name for p in self.params if p.required]
        schema: dict[str, JsonValue] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        return ToolSpec(self.name, self.description, schema)

    def call(self, ctx: ToolContext, arguments: Mapping[str, JsonValue]) -> str:
        """Check `arguments` against the parameters, then run the function."""
        return self.fn(ctx, **self._bind(arguments))

    def _bind(self, arguments: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
        expected = ", ".join(p.name + ("" if p.required else "?") for p in self.params) or "none"
        known = {p.name for p in self.params}
        extra = sorted(set(arguments) - known)
        if extra:
            raise ToolError(f"{self.name} got unexpected arguments {extra}; it takes: {expected}")
        bound: dict[str, JsonValue] = {}
        for p in self.params:
            value = arguments.get(p.name)
            if value is None:  # left out, or null: the default applies when there is one
                if p.required:
                    raise ToolError(
                        f"{self.name} is missing argument {p.name!r}; it takes: {expected}"
                    )
                continue
            if not _is_type(value, p.kind):
                raise ToolError(
                    f"argument {p.name!r} of {self.name} must be {_ARTICLE[p.kind]} {_JSON_TYPES[p.kind]}, "
                    f"got {type(value).__name__} {str(value)[:40]!r}"
                )
            bound[p.name] = value
        return bound


def _is_type(value: JsonValue, kind: type) -> bool:
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


TOOLS: Registry[Tool] = Registry("tool")
"""The default tool registry, filled by `@tool` when loopwright.runtime is imported."""


def tool(
    name: str, *, params: Mapping[str, str] | None = None, registry: Registry[Tool] | None = None
) -> Callable[[Callable[..., str]], FunctionTool]:
    """Register `fn(ctx: ToolContext, **arguments) -> str` as the tool `name`.

    The description is the function's docstring (its first paragraph); `params` describes each
    argument for the model. Registers in `registry` (default: TOOLS). Raises UsageError for a
    taken name or a parameter type a tool cannot have (see FunctionTool).
    """

    def decorate(fn: Callable[..., str]) -> FunctionTool:
        doc = inspect.getdoc(fn) or name
        made = FunctionTool(
            name, doc.split("\n\n")[0].replace("\n", " "), _params(fn, params or {}), fn
        )
        (registry if registry is not None else TOOLS).add(name, made)
        return made

    return decorate


def _params(fn: Callable[..., str], docs: Mapping[str, str]) -> tuple[_Param, ...]:
    hints = typing.get_type_hints(fn)
    found = []
    for p in list(inspect.signature(fn).parameters.values())[1:]:  # the first is ctx
        kind, optional = _unwrap_optional(hints[p.name])
        if kind not in _JSON_TYPES:
            raise LoopwrightError(f"tool parameter {p.name!r} has unsupported type {kind!r}")
        required = p.default is inspect.Parameter.empty and not optional
        found.append(_Param(p.name, kind, required, docs.get(p.name, "")))
    return tuple(found)


def _unwrap_optional(hint: object) -> tuple[type, bool]:
    if isinstance(hint, types.UnionType):
        members = [m for m in typing.get_args(hint) if m is not type(None)]
        if len(members) == 1 and isinstance(members[0], type):
            return members[0], True
    if isinstance(hint, type):
        return hint, False
    raise LoopwrightError(f"unsupported tool parameter type {hint!r}")


def resolve_path(ctx: ToolContext, raw: str, *, instruction_ok: bool = False) -> Path:
    """`raw` (relative to the workspace, or absolute) resolved with symlinks followed.

    Raises ToolError unless the result is inside the workspace; with `instruction_ok`, the
    task's instruction file is allowed too. Deterministic given the filesystem.
    """
    if instruction_ok and raw == INSTRUCTION_VIEW:
        return ctx.instruction_file.resolve()
    view = ctx.workspace_view
    if view != "." and (raw == view or raw.startswith(view + "/")):
        raw = "." + raw[len(view) :]  # the fixed path the agent was told
    candidate = Path(raw).expanduser() if raw.startswith("~") else Path(raw)
    resolved = (ctx.workspace / candidate).resolve()  # an absolute `candidate` replaces it
    if resolved.is_relative_to(ctx.workspace):
        return resolved
    if instruction_ok and resolved == ctx.instruction_file.resolve():
        return resolved
    where = "" if view == "." else f" {view}"
    raise ToolError(
        f"path {raw} leaves the workspace{where}; use a path inside it "
        "(relative paths are taken from the workspace root)"
    )


def relative_path(ctx: ToolContext, path: Path) -> str:
    """`path` relative to the workspace, '/'-separated ("." for the workspace itself)."""
    return path.relative_to(ctx.workspace).as_posix()


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """One executed tool call: `output` is what the model sees; `error` is set when the call
    was refused or failed (then `output` is "error: " + error); `finished` for finish."""

    output: str
    error: str | None
    finished: bool
    duration_s: float


def execute_tool_call(
    call: ToolCall, allowed: Sequence[str], tools: Registry[Tool], ctx: ToolContext
) -> ToolOutcome:
    """Run one tool call for a node whose allowlist is `allowed` (FINISH is always allowed).

    Never raises for a bad call: an unknown or disallowed tool, malformed arguments, a path
    leaving the workspace, a missing file or a sandbox failure become an error outcome the
    model is shown. Only a bug inside a tool (any other exception) propagates.
    """
    started = time.monotonic()
    try:
        permitted = [*allowed, FINISH] if FINISH not in allowed else list(allowed)
        if call.name not in permitted or call.name not in tools:
            what = "is not allowed for this node" if call.name in tools else "does not exist"
            raise ToolError(
                f"tool {call.name!r} {what} (node {ctx.node_id!r}); "
                f"allowed tools: {', '.join(permitted)}"
            )
        output = tools.get(call.name).call(ctx, call.arguments())
    except (LoopwrightError, ValueError, OSError) as exc:  # ToolCallError is a ValueError
        message = ctx.shown(str(exc) or type(exc).__name__)
        return ToolOutcome(f"error: {message}", message, False, time.monotonic() - started)
    return ToolOutcome(ctx.shown(output), None, call.name == FINISH, time.monotonic() - started)
