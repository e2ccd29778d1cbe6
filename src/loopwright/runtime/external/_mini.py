"""`external:mini-swe-agent`: the `mini` command of mini-swe-agent (v2), unattended.

Command: `mini -y --exit-immediately -t PROMPT -o TRAJECTORY -c mini.yaml -c
agent.step_limit=N -c agent.cost_limit=0 [-m MODEL] [-c model.model_kwargs.api_base=URL]`
(mini-swe-agent 2.x, `minisweagent/run/mini.py`: `-c` replaces the default config, so
`mini.yaml` is named first). Its only tool is bash: there is no web tool to turn off.
Output: the trajectory JSON written to `-o` (`DefaultAgent.serialize`, `trajectory_format`
"mini-swe-agent-1.1"): `info` {`exit_status`, `submission`, `model_stats` {`instance_cost`,
`api_calls`}}, and `messages`: assistant messages with `extra.actions` [{`command`,
`tool_call_id`}], `extra.response` (the LiteLLM response, with `usage` and `model`) and
`extra.cost`; tool messages (`tool_call_id`, `extra.returncode`, `extra.raw_output`); and a last
`exit` message (`extra.exit_status`: Submitted, LimitsExceeded, or an exception's name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loopwright.models import provider_of
from loopwright.runtime.external._parse import ToolBuilder, dumps, openai_usage, text_of
from loopwright.runtime.external._types import (
    AgentOutcome,
    AgentTurn,
    ExternalRequest,
    Invocation,
    Transcript,
)
from loopwright.sandbox import CommandResult

__all__ = ["TRAJECTORY_FILE", "MiniSweAgent", "parse_mini_trajectory"]

TRAJECTORY_FILE = "trajectory.json"

_NOT_EXECUTED = "action was not executed"
_OUTCOMES: dict[str, AgentOutcome] = {
    "Submitted": "done",
    "LimitsExceeded": "max_turns",
    "": "unknown",
}

# mini reads its settings from the environment: no first-run setup prompt, no banner, no
# crash on a model missing from LiteLLM's price map, a private config dir, and LiteLLM's
# price map from its bundled copy instead of the network.
_MINI_ENV = {
    "MSWEA_CONFIGURED": "true",
    "MSWEA_SILENT_STARTUP": "1",
    "MSWEA_COST_TRACKING": "ignore_errors",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
}


@dataclass(frozen=True, slots=True)
class MiniSweAgent:
    """The mini-swe-agent adapter. The model name goes to `-m` as a LiteLLM name (as given),
    the base URL to `model.model_kwargs.api_base`, and the provider's key variable
    (`<PROVIDER>_API_KEY`, e.g. OPENAI_API_KEY) is passed on when set."""

    name: str = "mini-swe-agent"
    executable: str = "mini"
    install_hint: str = "pip install mini-swe-agent (https://mini-swe-agent.com)"
    web_tools: str = "none to disable: its only tool is bash"

    def invocation(
        self, request: ExternalRequest, executable: str, extra_args: Sequence[str]
    ) -> Invocation:
        trajectory = request.scratch / TRAJECTORY_FILE
        argv = [executable, "-y", "--exit-immediately", "-t", request.prompt]
        argv += ["-o", str(trajectory), "-c", "mini.yaml"]
        argv += ["-c", f"agent.step_limit={request.max_turns}", "-c", "agent.cost_limit=0"]
        env = request.base_env() | _MINI_ENV
        env["MSWEA_GLOBAL_CONFIG_DIR"] = str(request.scratch / "mini-config")
        if request.model:
            argv += ["-m", request.model]
            env |= request.keys(f"{provider_of(request.model).upper()}_API_KEY")
        if request.api_base:
            argv += ["-c", f"model.model_kwargs.api_base={request.api_base}"]
        argv += extra_args
        return Invocation(tuple(argv), env, files=(trajectory,))

    def parse(self, result: CommandResult, request: ExternalRequest) -> Transcript:
        path = request.scratch / TRAJECTORY_FILE
        if not path.is_file():
            raise ValueError(f"mini-swe-agent wrote no trajectory (exit code {result.exit_code})")
        return parse_mini_trajectory(json.loads(path.read_text(encoding="utf-8")))


def parse_mini_trajectory(data: Mapping[str, Any]) -> Transcript:
    """A Transcript from a mini-swe-agent trajectory (the JSON object it saves). Tool calls
    are matched to their observations by `tool_call_id`, or in order when there is none (the
    text-based models). Raises ValueError when `messages` is missing."""
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise ValueError("not a mini-swe-agent trajectory: no messages")
    turns: list[tuple[Mapping[str, Any], list[ToolBuilder]]] = []
    pending: list[ToolBuilder] = []
    exit_extra: Mapping[str, Any] = {}
    for message in (m for m in messages if isinstance(m, Mapping)):
        role, extra = message.get("role"), message.get("extra") or {}
        if role == "assistant":
            tools = [_action(a) for a in extra.get("actions") or () if isinstance(a, Mapping)]
            turns.append((message, tools))
            pending = list(tools)
        elif role == "exit":
            exit_extra = extra
        elif "returncode" in extra and pending:
            tool = _match(pending, message.get("tool_call_id"))
            code = extra.get("returncode")
            output = str(extra.get("raw_output") or text_of(message.get("content")))
            tool.result(ok=code == 0, output=output, error=f"return code {code}: {output}")
    return _transcript(data, turns, exit_extra)


def _action(action: Mapping[str, Any]) -> ToolBuilder:
    return ToolBuilder(
        "bash", dumps({"command": action.get("command")}), str(action.get("tool_call_id") or "")
    )


def _match(pending: list[ToolBuilder], call_id: object) -> ToolBuilder:
    for index, tool in enumerate(pending):
        if call_id and tool.call_id == call_id:
            return pending.pop(index)
    return pending.pop(0)


def _turn(message: Mapping[str, Any], tools: list[ToolBuilder]) -> AgentTurn:
    response = (message.get("extra") or {}).get("response") or {}
    usage = openai_usage(response.get("usage")) if isinstance(response, Mapping) else None
    model = response.get("model") if isinstance(response, Mapping) else None
    return AgentTurn(
        tools=tuple(t.freeze() for t in tools),
        text=text_of(message.get("content")),
        usage=usage[0] if usage else None,
        cache_write_tokens=usage[1] if usage else 0,
        model=str(model) if model else None,
    )


def _transcript(
    data: Mapping[str, Any],
    turns: list[tuple[Mapping[str, Any], list[ToolBuilder]]],
    exit_extra: Mapping[str, Any],
) -> Transcript:
    info = data.get("info") or {}
    status = str(exit_extra.get("exit_status") or info.get("exit_status") or "")
    outcome = _OUTCOMES.get(status, "error")
    if outcome == "done" and turns:
        # The submitting command ends the run before its output is recorded: mini pads it as
        # "action was not executed" (return code -1), yet it is the command that succeeded.
        for tool in turns[-1][1]:
            if not tool.ok and _NOT_EXECUTED in (tool.error or ""):
                tool.ok, tool.error = True, None
    submission = str(exit_extra.get("submission") or info.get("submission") or "")
    stats = info.get("model_stats") or {}
    cost = stats.get("instance_cost") if isinstance(stats, Mapping) else None
    return Transcript(
        turns=tuple(_turn(m, t) for m, t in turns),
        summary=submission.strip() or ("submitted" if outcome == "done" else ""),
        outcome=outcome,
        error=_error(status, exit_extra) if outcome == "error" else None,
        # 0 is what mini records for a model LiteLLM cannot price: unknown, not free.
        cost_usd=float(cost) if isinstance(cost, int | float) and cost > 0 else None,
    )


def _error(status: str, exit_extra: Mapping[str, Any]) -> str:
    detail = str(exit_extra.get("exception_str") or "").strip()
    return f"mini-swe-agent exited with {status}" + (f": {detail}" if detail else "")
