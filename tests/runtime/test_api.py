"""The runtime's public surface, prompt values, and a built-in workflow end to end."""

from __future__ import annotations

import loopwright.runtime as runtime
from loopwright.runtime import parse_verdict, prompt_values
from loopwright.workflow import PLACEHOLDERS, builtin_workflow, builtin_workflow_names
from tests.runtime.conftest import FakeModel, Harness, call, finish, reply
from tests.taskfactory import GOLD


def test_all_is_pinned() -> None:
    assert sorted(runtime.__all__) == sorted(
        [
            "CHECKS", "FINISH", "FUNCTIONS", "JUDGE_PREAMBLE", "LOOPS", "REPLAN", "REPLAN_CAP",
            "SYSTEM_PREAMBLE", "TOOLS", "AgentLoop", "AgentResult", "Check", "CommandReport",
            "CostFn", "EngineSettings", "Fn", "FunctionTool",
            "LoopContext", "NodeStatus", "NotesBook", "Registries", "Registry", "RunOutcome",
            "RunStatus", "Runner", "StepResult", "Tool", "ToolContext", "ToolError", "ToolOutcome",
            "UsageMeter", "agent_loop", "call_model", "changed_files", "check", "default_registries",
            "execute_tool_call", "fn", "hybrid", "parse_plan", "parse_verdict", "plan_execute",
            "prompt_values", "react", "resolve_path",
            "rules_text", "run_agent", "run_shell", "run_visible_tests", "runtime_catalog", "tool",
            # external agents as nodes (issue 6)
            "EXTERNAL_AGENTS", "AgentTurn", "ExternalAdapter", "ExternalRequest",
            "ExternalSettings", "Invocation", "ToolUse", "Transcript", "executable_env_name",
            "external_agent", "external_loop", "resolve_executable",
            # the user's settings file (`loopwright ab apply`, issue 8)
            "SETTINGS_ENV", "UserSettings", "load_engine_settings", "load_user_settings",
            "user_settings_path",
            # path-independent prompts (issue 21)
            "INSTRUCTION_VIEW", "workspace_view",
        ]
    )  # fmt: skip
    for name in runtime.__all__:
        assert getattr(runtime, name) is not None


def test_prompt_values_fill_every_placeholder(h: Harness) -> None:
    values = prompt_values(h.task, h.workspace, h.instruction, notes="", feedback="")
    assert set(values) == set(PLACEHOLDERS)


def test_judge_verdicts() -> None:
    assert parse_verdict("PASS\nall good") is True
    assert parse_verdict("Verdict: failed. The div edge case is wrong.") is False
    assert parse_verdict("Looking at it...\nFAIL") is False
    assert parse_verdict("FAIL: though one could say it would pass") is False
    assert parse_verdict("no idea") is None


def test_every_builtin_workflow_fills_its_prompts_and_runs(h: Harness) -> None:
    for name in builtin_workflow_names():
        h.events_path.unlink(missing_ok=True)
        wf = builtin_workflow(name)
        model = FakeModel([finish()] * 20)
        outcome = h.run(wf, model)
        assert outcome.status == "completed", name
        for prompt in model.prompts():
            assert runtime.INSTRUCTION_VIEW in prompt
            assert str(h.instruction.resolve().parent) not in prompt  # no host path
            assert "{" not in prompt.replace("{{", "")


def test_research_build_verify_with_a_scripted_model(h: Harness) -> None:
    model = FakeModel(
        [
            reply(call("read_file", path=str(h.instruction)), call("list_files")),
            reply(call("write_notes", text="Add mul and div to calc/core.py.")),
            finish("studied"),
            reply(call("write_file", path="calc/core.py", content=GOLD)),
            reply(call("run_tests")),
            finish("implemented mul and div"),
        ]
    )
    outcome = h.run(builtin_workflow("research-build-verify"), model)
    assert "Add mul and div to calc/core.py." in model.prompts()[1]
    assert [(e.node_id, e.status, e.produced) for e in h.events("node_end")] == [
        ("study", "ok", []),
        ("builder", "ok", ["calc/core.py"]),
        ("gate_verify", "ok", []),
    ]
    assert [d.decision for d in h.events("gate_decision")] == ["proceed"]
    assert outcome.attempts == {"study": 1, "builder": 1, "gate_verify": 1}
    assert outcome.usage.input_tokens == 60
