"""The runtime: tools, agent loops and the Runner that executes a workflow graph on a task.

`Runner(model, sandbox, cost_fn=..., price_table=...).run(workflow, task, workspace,
instruction_file, writer)` runs every node in topological order, gates RELOOP as the graph
says, and writes the exhaust. Tools, loops, functions and checks are registries
(`@tool`, `@agent_loop`, `@fn`, `@check`). External coding agents (Claude Code, Codex,
mini-swe-agent, OpenHands) are loops `external:NAME` (docs/external-agents.md). See docs/runtime.md.
"""

from __future__ import annotations

from loopwright.runtime._catalog import Registries, default_registries, runtime_catalog
from loopwright.runtime._commands import CommandReport, run_shell, run_visible_tests
from loopwright.runtime._context import (
    INSTRUCTION_VIEW,
    CostFn,
    NodeStatus,
    NotesBook,
    StepResult,
    ToolContext,
    ToolError,
    workspace_view,
)
from loopwright.runtime._gates import parse_verdict
from loopwright.runtime._loops import (
    LOOPS,
    AgentLoop,
    AgentResult,
    LoopContext,
    UsageMeter,
    agent_loop,
    call_model,
    react,
    run_agent,
)
from loopwright.runtime._loops_plan import (
    REPLAN,
    REPLAN_CAP,
    EngineSettings,
    hybrid,
    parse_plan,
    plan_execute,
)
from loopwright.runtime._prompts import JUDGE_PREAMBLE, SYSTEM_PREAMBLE, prompt_values, rules_text
from loopwright.runtime._registry import Registry
from loopwright.runtime._runner import Runner, RunOutcome, RunStatus
from loopwright.runtime._steps import CHECKS, FUNCTIONS, Check, Fn, changed_files, check, fn
from loopwright.runtime._tools import (
    FINISH,
    TOOLS,
    FunctionTool,
    Tool,
    ToolOutcome,
    execute_tool_call,
    resolve_path,
    tool,
)
from loopwright.runtime._user_settings import (
    SETTINGS_ENV,
    UserSettings,
    load_engine_settings,
    load_user_settings,
    user_settings_path,
)
from loopwright.runtime.external._loop import (
    EXTERNAL_AGENTS,
    ExternalSettings,
    executable_env_name,
    external_agent,
    external_loop,
    resolve_executable,
)
from loopwright.runtime.external._types import (
    AgentTurn,
    ExternalAdapter,
    ExternalRequest,
    Invocation,
    ToolUse,
    Transcript,
)

__all__ = [
    "CHECKS",
    "EXTERNAL_AGENTS",
    "FINISH",
    "FUNCTIONS",
    "INSTRUCTION_VIEW",
    "JUDGE_PREAMBLE",
    "LOOPS",
    "REPLAN",
    "REPLAN_CAP",
    "SETTINGS_ENV",
    "SYSTEM_PREAMBLE",
    "TOOLS",
    "AgentLoop",
    "AgentResult",
    "AgentTurn",
    "Check",
    "CommandReport",
    "CostFn",
    "EngineSettings",
    "ExternalAdapter",
    "ExternalRequest",
    "ExternalSettings",
    "Fn",
    "FunctionTool",
    "Invocation",
    "LoopContext",
    "NodeStatus",
    "NotesBook",
    "Registries",
    "Registry",
    "RunOutcome",
    "RunStatus",
    "Runner",
    "StepResult",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutcome",
    "ToolUse",
    "Transcript",
    "UsageMeter",
    "UserSettings",
    "agent_loop",
    "call_model",
    "changed_files",
    "check",
    "default_registries",
    "executable_env_name",
    "execute_tool_call",
    "external_agent",
    "external_loop",
    "fn",
    "hybrid",
    "load_engine_settings",
    "load_user_settings",
    "parse_plan",
    "parse_verdict",
    "plan_execute",
    "prompt_values",
    "react",
    "resolve_executable",
    "resolve_path",
    "rules_text",
    "run_agent",
    "run_shell",
    "run_visible_tests",
    "runtime_catalog",
    "tool",
    "user_settings_path",
    "workspace_view",
]
