"""The data an external agent adapter works with: the request it builds a command from, the
invocation it returns, and the transcript it reads back (turns, tool uses, tokens, cost); and the
`ExternalAdapter` protocol itself. See docs/external-agents.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from loopwright.models import Usage
from loopwright.sandbox import CommandResult

__all__ = [
    "AgentOutcome",
    "AgentTurn",
    "ExternalAdapter",
    "ExternalRequest",
    "Invocation",
    "ToolUse",
    "Transcript",
]

AgentOutcome = Literal["done", "max_turns", "error", "unknown"]


@dataclass(frozen=True, slots=True)
class ExternalRequest:
    """What an adapter builds its command from. `prompt` is the node's filled prompt (the
    instruction file's path in it points at a copy under `scratch`); `scratch` is a private,
    writable directory outside the workspace (HOME and any trajectory file go there); `model`
    is a LiteLLM-style name or None (the agent's own default); `api_base` a base URL or None;
    `environ` the parent's environment, from which an adapter takes the keys it needs, unless
    `agent_key` is set (the metering relay's placeholder): then every key variable an adapter
    asks for holds it, and no real key reaches the agent."""

    prompt: str
    workspace: Path
    scratch: Path
    model: str | None
    api_base: str | None
    max_turns: int
    environ: Mapping[str, str]
    agent_key: str | None = field(default=None, repr=False)

    @property
    def home(self) -> Path:
        """The agent's HOME: fresh for every visit, so no user config or login leaks in."""
        return self.scratch / "home"

    def base_env(self) -> dict[str, str]:
        """PATH (the parent's), HOME, LANG and nothing else; adapters add what they need."""
        return {
            "PATH": self.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def keys(self, *names: str) -> dict[str, str]:
        """The named key variables: those of the parent's environment that are set, or with an
        `agent_key`, the same names (the first name when none is set) holding the placeholder."""
        if self.agent_key is None:
            return {name: self.environ[name] for name in names if self.environ.get(name)}
        named = [name for name in names if self.environ.get(name)] or list(names[:1])
        return dict.fromkeys(named, self.agent_key)


@dataclass(frozen=True, slots=True)
class Invocation:
    """How to run the agent: argv (argv[0] the executable), the complete environment, what to
    write to its stdin, and the files it writes that the parser reads (kept in the exhaust)."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    stdin: str | None = None
    files: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call the agent reported: its name, its arguments as JSON text, and its result
    as far as reported (`ok`, `error`, the size of its output)."""

    name: str
    arguments: str = "{}"
    call_id: str = ""
    ok: bool = True
    error: str | None = None
    output_chars: int = 0


@dataclass(frozen=True, slots=True)
class AgentTurn:
    """One model call of the agent: the tools it asked for, its text, and its tokens when the
    agent reports them per call (`usage`, cache reads inside `input_tokens`; `cache_write_tokens`
    apart), and the model that answered."""

    tools: tuple[ToolUse, ...] = ()
    text: str = ""
    usage: Usage | None = None
    cache_write_tokens: int = 0
    model: str | None = None


@dataclass(frozen=True, slots=True)
class Transcript:
    """What an agent run reported. `outcome` is the agent's own verdict (done, max_turns,
    error, or unknown when it said nothing); `total_usage` and `cost_usd` are totals the
    agent reported (used when its turns carry no tokens, and for cost when our price table
    does not know the model); `web_uses` names every web tool use it reported (a leak)."""

    turns: tuple[AgentTurn, ...] = ()
    summary: str = ""
    outcome: AgentOutcome = "unknown"
    error: str | None = None
    total_usage: Usage | None = None
    total_cache_write_tokens: int = 0
    cost_usd: float | None = None
    model: str | None = None
    web_uses: tuple[str, ...] = ()


class ExternalAdapter(Protocol):
    """One external agent CLI. `name` is the NAME of `external:NAME`; `executable` the default
    command; `install_hint` how to install it; `web_tools` how its web tools are kept off.
    `invocation` builds the command (pure); `parse` reads the result (may raise ValueError on
    output it cannot read: the loop records that as the node's error)."""

    @property
    def name(self) -> str: ...

    @property
    def executable(self) -> str: ...

    @property
    def install_hint(self) -> str: ...

    @property
    def web_tools(self) -> str: ...

    def invocation(
        self, request: ExternalRequest, executable: str, extra_args: Sequence[str]
    ) -> Invocation: ...

    def parse(self, result: CommandResult, request: ExternalRequest) -> Transcript: ...
