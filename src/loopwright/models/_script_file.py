"""Script files for `ScriptedModel.from_file` and `--model scripted:FILE` (YAML or JSON).

The file holds exactly one of `replies` (used in order, one per call) or `match` (a mapping from
a substring of the last message to a reply), and optionally `name` (default "scripted"):

```yaml
name: scripted
replies:
  - "a text-only reply"
  - text: "reading the task"          # optional
    tool_calls:
      - name: read_file
        arguments: {path: /abs/instruction.md}
        id: call-1                     # optional; default call-<n>-<i>
  - tool_calls: [{name: finish, arguments: {summary: done}}]
    usage: {input_tokens: 120, output_tokens: 8}   # optional; default chars // 4
```

A `match` file maps substrings to replies of the same shape; the first key found in the last
message answers. Parsed once; `ScriptFile.model()` builds a fresh ScriptedModel each time.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic import JsonValue as PydanticJson

from loopwright.errors import ConfigError
from loopwright.models._scripted import Reply, ScriptedModel
from loopwright.models._types import ModelResponse, ToolCall, Usage

__all__ = ["ScriptFile", "load_script_file"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCallSpec(_Strict):
    """One tool call in a script file."""

    name: str = Field(min_length=1)
    arguments: dict[str, PydanticJson] = Field(default_factory=dict)
    id: str | None = None


class UsageSpec(_Strict):
    """Token counts a script file states for one reply."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)


class ReplySpec(_Strict):
    """One reply: text and/or tool calls, optionally with its usage."""

    text: str = ""
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    usage: UsageSpec | None = None

    def reply(self, number: int, model_name: str) -> Reply:
        """The reply as ScriptedModel takes it; `number` makes default call ids unique."""
        calls = tuple(
            ToolCall(c.id or f"call-{number}-{i}", c.name, json.dumps(c.arguments))
            for i, c in enumerate(self.tool_calls, start=1)
        )
        if self.usage is not None:
            usage = Usage(**self.usage.model_dump())
            return ModelResponse(self.text, calls, usage, 0.0, model_name, simulated=True)
        return (self.text, *calls) if self.text else calls


def _coerce(value: object) -> object:
    return {"text": value} if isinstance(value, str) else value


class ScriptFile(_Strict):
    """A parsed script file: exactly one of `replies` or `match`."""

    name: str = "scripted"
    replies: list[ReplySpec] | None = None
    match: dict[str, ReplySpec] | None = None
    source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _plain_strings(cls, data: object) -> object:
        if isinstance(data, dict):
            data = dict(data)
            if isinstance(data.get("replies"), list):
                data["replies"] = [_coerce(r) for r in data["replies"]]
            if isinstance(data.get("match"), dict):
                data["match"] = {k: _coerce(v) for k, v in data["match"].items()}
        return data

    @model_validator(mode="after")
    def _one_mode(self) -> ScriptFile:
        if (self.replies is None) == (self.match is None):
            raise ValueError("give exactly one of 'replies' (a list) or 'match' (a mapping)")
        if not (self.replies or self.match):
            raise ValueError("the script is empty: a model with no reply fails at its first call")
        return self

    def model(self) -> ScriptedModel:
        """A fresh ScriptedModel for this script (each run gets its own)."""
        if self.replies is not None:
            replies = [r.reply(i, self.name) for i, r in enumerate(self.replies, start=1)]
            return ScriptedModel(replies, name=self.name, source=self.source)
        assert self.match is not None  # guaranteed by _one_mode
        mapping = {k: r.reply(i, self.name) for i, (k, r) in enumerate(self.match.items(), 1)}
        return ScriptedModel(mapping, name=self.name, source=self.source)


def load_script_file(path: Path) -> ScriptFile:
    """Read and validate a script file. Raises ConfigError (what, got, fix) on any problem."""
    fix = "see the format in docs/sim-model.md, section 'Script files'"
    if not path.is_file():
        raise ConfigError(f"script file {path} does not exist", fix=fix)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError.not_utf8(
            f"script file {path}", exc, fix=f"{fix}; save it as UTF-8 YAML or JSON"
        ) from None
    try:
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"script file {path} cannot be parsed", got=str(exc), fix=fix) from None
    if not isinstance(raw, dict):
        raise ConfigError(
            f"script file {path} must hold a mapping", got=type(raw).__name__, fix=fix
        )
    try:
        return ScriptFile.model_validate({**raw, "source": str(path)})
    except ValidationError as exc:
        problems = "; ".join(
            (f"{'.'.join(str(p) for p in e['loc'])}: " if e["loc"] else "")
            + e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )
        raise ConfigError(f"script file {path} is invalid", got=problems, fix=fix) from None
