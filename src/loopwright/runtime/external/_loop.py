"""External coding agents as agent nodes: `loop: external:NAME` runs an agent's own CLI.

An `ExternalAdapter` knows one agent CLI: the command line and environment that run it on a
prompt in the workspace (web tools off, the model's base URL and key handed over), and how to
read what it printed or saved into a `Transcript` (model turns, tool uses, tokens, cost). The
loop here does the rest, the same for every agent: it finds the executable (a missing one is a
recorded `unavailable`, never a crash), runs it through the node's sandbox like any command
(with no network but a path to its model endpoint where the sandbox can cut it: `_network`;
killed with its process group at the node's deadline), writes the transcript as `model_call` and `tool_call` events, records the reported
usage in the run's cost ledger, and keeps the agent's raw output, redacted, beside the events.
See docs/external-agents.md.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from loopwright._fs import atomic_write
from loopwright.errors import SandboxError
from loopwright.models import CostLedger, LiteLLMGateway, redact
from loopwright.records import ErrorEvent
from loopwright.runtime._context import INSTRUCTION_VIEW, ToolContext, ToolError
from loopwright.runtime._loops import LOOPS, AgentLoop, AgentResult, LoopContext
from loopwright.runtime._registry import Registry
from loopwright.runtime.external._events import emit_transcript
from loopwright.runtime.external._network import (
    NetworkPlan,
    bridge,
    forwarded_argv,
    interpreter_dirs,
    network_plan,
    relay_socket,
    warn_open,
)
from loopwright.runtime.external._types import (
    ExternalAdapter,
    ExternalRequest,
    Invocation,
    Transcript,
)
from loopwright.sandbox import CommandResult
from loopwright.workflow import EXTERNAL_LOOP_PREFIX, AgentNode

__all__ = [
    "EXECUTABLE_ENV_PREFIX",
    "EXTERNAL_AGENTS",
    "EXTERNAL_OUTPUT_DIR",
    "ExternalSettings",
    "executable_env_name",
    "external_agent",
    "external_loop",
    "resolve_executable",
    "run_external",
]

EXECUTABLE_ENV_PREFIX = "LOOPWRIGHT_EXTERNAL_"
"""`LOOPWRIGHT_EXTERNAL_<NAME>` (NAME upper-cased, `-` as `_`) names the executable of the
external agent NAME, e.g. `LOOPWRIGHT_EXTERNAL_CLAUDE_CODE=/opt/stand-ins/claude`."""

EXTERNAL_OUTPUT_DIR = "external"
"""The directory, beside events.jsonl, that keeps each external visit's raw output (redacted)."""

EXTERNAL_RECORD_VERSION = 2  # 2: `network`
_OUTPUT_CAP = 20_000_000
_TAIL_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class ExternalSettings:
    """How one external loop runs its agent. Every field defaults to "from the run":

    - `executable`: a command name or path; default `$LOOPWRIGHT_EXTERNAL_<NAME>`, else the
      adapter's own command looked up on PATH (this is how a stand-in is pointed to);
    - `model` / `api_base`: default the run's model name and its gateway's `api_base` (none
      for the offline models: the agent then uses its own default model);
    - `extra_args`: appended to the agent's own arguments;
    - `environ`: the environment keys and PATH are taken from (default: os.environ, read at
      each visit);
    - `agent_key`: a placeholder the agent gets in place of every key variable (default the
      gateway's `agent_key`: the metering relay's, which swaps it for the real key);
    - `expose`: more paths the agent's own installation needs (its config, a runtime it
      calls), shown read-only in an isolated sandbox. That sandbox shows the system, this
      Python's environment, the workspace and the executable's installation prefix (the
      directory above the one holding it), never the home directory as a whole.
    """

    executable: str | None = None
    model: str | None = None
    api_base: str | None = None
    extra_args: tuple[str, ...] = ()
    environ: Mapping[str, str] | None = field(default=None, repr=False)
    agent_key: str | None = field(default=None, repr=False)
    expose: tuple[str, ...] = ()


EXTERNAL_AGENTS: Registry[ExternalAdapter] = Registry("external agent")
"""Every adapter, by NAME. Each is also an agent loop `external:NAME` in LOOPS."""


def external_agent(adapter: ExternalAdapter) -> ExternalAdapter:
    """Register `adapter` in EXTERNAL_AGENTS and its loop (default settings) in LOOPS as
    `external:NAME`. Returns it. UsageError when the name is taken."""
    EXTERNAL_AGENTS.add(adapter.name, adapter)
    LOOPS.add(EXTERNAL_LOOP_PREFIX + adapter.name, external_loop(adapter))
    return adapter


def external_loop(adapter: ExternalAdapter, settings: ExternalSettings | None = None) -> AgentLoop:
    """The AgentLoop that runs `adapter`'s agent with `settings` (see run_external)."""
    chosen = settings if settings is not None else ExternalSettings()

    def loop(node: AgentNode, prompt: str, ctx: LoopContext) -> AgentResult:
        return run_external(adapter, chosen, node, prompt, ctx)

    return loop


def executable_env_name(name: str) -> str:
    """`claude-code` -> `LOOPWRIGHT_EXTERNAL_CLAUDE_CODE`."""
    return EXECUTABLE_ENV_PREFIX + name.upper().replace("-", "_").replace(".", "_")


def resolve_executable(
    adapter: ExternalAdapter, settings: ExternalSettings, environ: Mapping[str, str]
) -> tuple[str, str | None]:
    """(what was looked for, its absolute path or None when it is not there). Deterministic
    given the filesystem."""
    wanted = (
        settings.executable or environ.get(executable_env_name(adapter.name)) or adapter.executable
    )
    if "/" in wanted:
        path = Path(wanted).expanduser()
        found = path.is_file() and os.access(path, os.X_OK)
        return wanted, str(path.absolute()) if found else None
    return wanted, shutil.which(wanted, path=environ.get("PATH"))


def run_external(
    adapter: ExternalAdapter,
    settings: ExternalSettings,
    node: AgentNode,
    prompt: str,
    ctx: LoopContext,
) -> AgentResult:
    """Run the agent once on `prompt` in the workspace and record what it did. Never raises for
    the agent's failures: a missing executable is status "error" with an `unavailable: ...`
    error (and an error event), a run killed at the node's deadline is "timeout", a non-zero
    exit or an agent-reported failure is "error", an agent-reported turn limit "max_turns",
    any reported web tool use "error" (a leak); otherwise "ok" with the agent's final text."""
    tc, environ = ctx.tool_ctx, settings.environ if settings.environ is not None else os.environ
    wanted, executable = resolve_executable(adapter, settings, environ)
    if executable is None:
        return _fail(tc, node, _unavailable(adapter, wanted))
    try:
        timeout = tc.time_left()
    except ToolError as exc:
        return AgentResult("timeout", error=f"timed out before starting: {exc}")
    scratch = Path(tempfile.mkdtemp(prefix="lw-ext-"))
    try:
        request = _request(node, prompt, ctx, settings, scratch, environ)
        invocation = adapter.invocation(request, executable, settings.extra_args)
        plan = network_plan(tc.sandbox, request.api_base, request.model)
        warn_open(plan, adapter.name)
        started = time.monotonic()
        try:
            result = _invoke(tc, invocation, scratch, timeout, _exposed(executable, settings), plan)
        except SandboxError as exc:
            return _fail(tc, node, f"unavailable: {exc}. Install: {adapter.install_hint}")
        transcript = _parse(adapter, result, request)
        _keep_exhaust(tc, adapter, invocation, result, time.monotonic() - started, plan)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    emit_transcript(ctx, adapter.name, request.model, transcript, _ledger_of(ctx))
    return _result(tc, node, adapter, result, transcript, timeout)


def _invoke(
    tc: ToolContext,
    invocation: Invocation,
    scratch: Path,
    timeout: float,
    exposed: list[Path],
    plan: NetworkPlan,
) -> CommandResult:
    """Run the agent in the node's sandbox, in the workspace, for at most `timeout` seconds
    (then its process group is killed), with the network `plan` allows: under
    `endpoint-only` no network but the forwarder to its model endpoint. Raises SandboxError
    when it cannot be started."""
    relay = relay_socket(tc.sandbox, tc.workspace, scratch) if plan.endpoint else None
    argv = forwarded_argv(invocation.argv, plan, scratch, relay)
    if relay is not None:
        shown = interpreter_dirs() if relay.python is None else []  # else the sandbox's own
        exposed = [*exposed, *shown, Path(invocation.argv[0]).resolve()]
    with bridge(plan, scratch, relay):
        return tc.sandbox.run(
            argv,
            cwd=tc.workspace,
            timeout_s=timeout,
            writable=[scratch],
            readonly=exposed,
            env={**invocation.env, **plan.environment()},
            output_cap=_OUTPUT_CAP,
            network=plan.mode == "open",
            stdin=invocation.stdin,
        )


def _exposed(executable: str, settings: ExternalSettings) -> list[Path]:
    """The agent's installation prefix (`<prefix>/bin/agent` -> `<prefix>`) and the paths the
    settings name, those that exist."""
    prefix = Path(executable).resolve().parent.parent
    wanted = [prefix, *(Path(p).expanduser() for p in settings.expose)]
    return [p for p in wanted if p.exists() and p != Path("/")]


def _request(
    node: AgentNode,
    prompt: str,
    ctx: LoopContext,
    settings: ExternalSettings,
    scratch: Path,
    environ: Mapping[str, str],
) -> ExternalRequest:
    """The request, with the instruction file copied into `scratch` (a run directory under
    /tmp is hidden from a bubblewrap-sandboxed command; the scratch directory is bound)."""
    tc, model = ctx.tool_ctx, ctx.model
    (scratch / "home").mkdir()
    instruction = tc.instruction_file
    if instruction.is_file():
        copy = scratch / instruction.name
        shutil.copyfile(instruction, copy)
        prompt = prompt.replace(INSTRUCTION_VIEW, str(copy)).replace(str(instruction), str(copy))
    gateway = model if isinstance(model, LiteLLMGateway) else None
    return ExternalRequest(
        prompt=prompt,
        workspace=tc.workspace,
        scratch=scratch,
        model=settings.model or (None if model.simulated else model.name),
        api_base=settings.api_base or (gateway.settings.api_base if gateway else None),
        max_turns=node.max_turns,
        environ=environ,
        agent_key=settings.agent_key or (gateway.settings.agent_key if gateway else None),
    )


def _parse(adapter: ExternalAdapter, result: CommandResult, request: ExternalRequest) -> Transcript:
    try:
        return adapter.parse(result, request)
    except (ValueError, KeyError, TypeError, OSError) as exc:
        return Transcript(outcome="error", error=f"could not read the agent's output: {exc}")


def _ledger_of(ctx: LoopContext) -> CostLedger | None:
    """The run's cost ledger: the one of the gateway the run's model is, if any."""
    return ctx.model.ledger if isinstance(ctx.model, LiteLLMGateway) else None


def _unavailable(adapter: ExternalAdapter, wanted: str) -> str:
    return (
        f"unavailable: the external agent {adapter.name!r} needs the executable {wanted!r}, "
        f"which is not installed (or not executable). Install: {adapter.install_hint}; "
        f"or point ${executable_env_name(adapter.name)} at it"
    )


def _fail(tc: ToolContext, node: AgentNode, message: str) -> AgentResult:
    tc.events.write(ErrorEvent(t=tc.events.now(), node_id=node.id, where="node", message=message))
    return AgentResult("error", error=message)


def _tail(text: str) -> str:
    text = redact(text.strip())
    return text if len(text) <= _TAIL_CHARS else "..." + text[-_TAIL_CHARS:]


def _result(
    tc: ToolContext,
    node: AgentNode,
    adapter: ExternalAdapter,
    result: CommandResult,
    transcript: Transcript,
    timeout: float,
) -> AgentResult:
    turns = len(transcript.turns)
    summary = redact(transcript.summary)
    if result.timed_out:
        error = (
            f"timed out: {adapter.name} ran past the node's deadline ({timeout:.0f}s left at "
            "its start) and its process group was killed"
        )
        return AgentResult("timeout", summary, error, turns)
    if transcript.web_uses:
        used = ", ".join(sorted(set(transcript.web_uses)))
        return _failed(tc, node, f"leak: {adapter.name} used a web tool ({used})", summary, turns)
    if transcript.outcome == "max_turns":
        limit = f"{adapter.name} stopped at its turn limit (max_turns={node.max_turns})"
        return AgentResult("max_turns", summary, limit, turns)
    if result.exit_code != 0 or transcript.outcome == "error":
        reasons = [r for r in (transcript.error, _tail(result.stderr)) if r]
        reason = "; ".join(reasons) or _tail(result.stdout) or "no output"
        message = f"{adapter.name} failed (exit code {result.exit_code}): {redact(reason)}"
        return _failed(tc, node, message, summary, turns)
    return AgentResult("ok", summary, None, turns)


def _failed(
    tc: ToolContext, node: AgentNode, message: str, summary: str, turns: int
) -> AgentResult:
    tc.events.write(ErrorEvent(t=tc.events.now(), node_id=node.id, where="node", message=message))
    return AgentResult("error", summary, message, turns)


def _keep_exhaust(
    tc: ToolContext,
    adapter: ExternalAdapter,
    invocation: Invocation,
    result: CommandResult,
    duration_s: float,
    plan: NetworkPlan,
) -> None:
    """Write the visit's raw output, redacted, under <run dir>/external/: `<node>.<attempt>.json`
    (the command, env names, exit), `.stdout`, `.stderr` and each file the agent wrote."""
    folder = tc.events.path.parent / EXTERNAL_OUTPUT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{tc.node_id}.{tc.attempt}"
    atomic_write(folder / f"{stem}.stdout", redact(result.stdout))
    atomic_write(folder / f"{stem}.stderr", redact(result.stderr))
    kept = []
    for path in invocation.files:
        if path.is_file():
            target = folder / f"{stem}.{path.name}"
            atomic_write(target, redact(path.read_text(encoding="utf-8", errors="replace")))
            kept.append(target.name)
    record = {
        "schema_version": EXTERNAL_RECORD_VERSION,
        "agent": adapter.name,
        "argv": [redact(_short(a)) for a in invocation.argv],
        "env": sorted(invocation.env),  # names only: values may be keys
        "sandbox": result.sandbox,
        "network": plan.describe(),
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "truncated": result.truncated,
        "duration_s": round(duration_s, 3),
        "files": kept,
    }
    atomic_write(folder / f"{stem}.json", json.dumps(record, indent=2) + "\n")


def _short(arg: str, limit: int = 300) -> str:
    return arg if len(arg) <= limit else f"{arg[:limit]}... [{len(arg)} characters]"
