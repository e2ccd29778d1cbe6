"""External agents as nodes (`loop: external:NAME`), driven by stand-in executables that print
each agent's documented output format (tests/runtime/fixtures/standin_agent.py): the workspace
change, the events (turns, tool calls, tokens, cost), the command line and environment they
were given, a crash, a hang killed at the timeout, a web-tool leak, a turn limit, and a missing
executable recorded as `unavailable`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.models import CostLedger, GatewaySettings, LiteLLMGateway
from loopwright.records import EventWriter, read_events
from loopwright.runtime import (
    EXTERNAL_AGENTS,
    ExternalSettings,
    Registries,
    Runner,
    default_registries,
    executable_env_name,
    external_loop,
)
from loopwright.sandbox import BubblewrapSandbox, bubblewrap_available
from loopwright.workflow import EXTERNAL_LOOP_PREFIX, AgentNode
from tests.runtime.conftest import FakeModel, Harness, agent, chain, gate
from tests.runtime.fixtures import standin_agent as standin

FIXTURE = Path(__file__).parent / "fixtures" / "standin_agent.py"
AGENTS = ("claude-code", "codex", "mini-swe-agent", "openhands")
SECRET = "sk-ant-standin-secret-0123456789"  # a key-shaped dummy: must reach no file


def stand_in(tmp_path: Path, name: str, scenario: str, solution: Path) -> tuple[Path, Path]:
    """A wrapper script running the stand-in as agent `name`; and its record directory."""
    record = tmp_path / f"record-{name}-{scenario}"
    record.mkdir()
    script = tmp_path / f"bin-{name}-{scenario}"
    script.write_text(
        f'#!/bin/sh\nexec {sys.executable} {FIXTURE} {name} {scenario} {record} {solution} "$@"\n'
    )
    script.chmod(0o755)
    return script, record


def registries(name: str, script: Path, **settings: Any) -> Registries:
    environ = {"PATH": os.environ["PATH"], **settings.pop("environ", {})}
    loop = external_loop(
        EXTERNAL_AGENTS.get(name),
        ExternalSettings(executable=str(script), environ=environ, **settings),
    )
    return default_registries().with_loop(EXTERNAL_LOOP_PREFIX + name, loop)


def external(name: str, **kw: Any) -> AgentNode:
    return agent("builder", loop=EXTERNAL_LOOP_PREFIX + name, **kw)


def run_stand_in(
    h: Harness,
    tmp_path: Path,
    name: str,
    scenario: str,
    *,
    with_gate: bool = False,
    **settings: Any,
) -> tuple[Any, Path]:
    script, record = stand_in(tmp_path, name, scenario, h.task.solution_dir or tmp_path)
    nodes = (external(name, timeout_s=1 if scenario == "hang" else 60),)
    wf = chain(*nodes, *((gate(),) if with_gate else ()))
    outcome = h.run(wf, FakeModel([]), registries=registries(name, script, **settings))
    return outcome, record


def called(record: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((record / "call.json").read_text())
    return data


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie awaiting its reaper counts as dead)."""
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" not in status.read_text()
    except OSError:
        return False


def run_dir_files(h: Harness) -> list[Path]:
    return [p for p in h.events_path.parent.rglob("*") if p.is_file()]


# --- each agent's stand-in, run to success ---------------------------------------------------


def test_claude_code_stream_becomes_turns_tools_tokens_and_reported_cost(
    h: Harness, tmp_path: Path
) -> None:
    outcome, record = run_stand_in(
        h, tmp_path, "claude-code", "ok", with_gate=True,
        model="anthropic/claude-sonnet-4-5", api_base="http://127.0.0.1:9/v1",
        environ={"ANTHROPIC_API_KEY": SECRET, "OPENAI_API_KEY": "sk-not-for-claude-0000"},
    )  # fmt: skip
    assert outcome.node_status == {"builder": "ok", "gate": "ok"}  # the gate's tests pass
    (end,) = [e for e in h.events("node_end") if e.node_id == "builder"]
    assert end.produced == ["calc/core.py"] and end.summary == "Done: added mul and div."
    calls = h.events("model_call")
    # Anthropic counts cache reads and writes apart from input_tokens; ours include them.
    assert [c.input_tokens for c in calls] == [160, 200, 400]
    assert [c.cached_tokens for c in calls] == [50, 0, 100]
    assert [c.output_tokens for c in calls] == [20, 40, 60]
    assert [c.model for c in calls] == ["claude-standin-1"] * 3 and not calls[0].simulated
    # The test price table does not know the model: the agent's own total is recorded.
    assert [c.cost_usd for c in calls] == [0.0, 0.0, standin.CLAUDE_COST]
    assert {c.price_table for c in calls} == {"agent-reported:claude-code"}
    tools = h.events("tool_call")
    assert [(t.turn, t.tool, t.ok) for t in tools] == [(1, "Read", True), (2, "Write", False)]
    assert tools[1].error == "Error: denied"
    assert outcome.usage.input_tokens == 760

    call = called(record)
    assert call["argv"][-2:] == ["--disallowedTools", "WebSearch,WebFetch"]
    assert call["argv"][call["argv"].index("--model") + 1] == "claude-sonnet-4-5"
    assert call["urls"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"  # Claude adds /v1 itself
    assert "ANTHROPIC_API_KEY" in call["env"] and "OPENAI_API_KEY" not in call["env"]
    assert call["home"] != os.environ.get("HOME") and call["cwd"] == str(h.workspace.resolve())
    # The prompt came on stdin, pointing at a readable copy of the instruction file.
    assert str(h.instruction) not in call["stdin"] and "instruction.md" in call["stdin"]
    kept = h.events_path.parent / "external"
    assert sorted(p.name for p in kept.iterdir()) == [
        "builder.1.json", "builder.1.stderr", "builder.1.stdout",
    ]  # fmt: skip
    assert json.loads((kept / "builder.1.json").read_text())["exit_code"] == 0
    for path in run_dir_files(h):
        assert SECRET not in path.read_text(errors="replace"), path


def test_codex_jsonl_becomes_one_turn_per_codex_turn(h: Harness, tmp_path: Path) -> None:
    outcome, record = run_stand_in(
        h, tmp_path, "codex", "ok",
        model="openai/gpt-5-codex", api_base="http://127.0.0.1:9/v1",
        environ={"OPENAI_API_KEY": "sk-openai-standin-000000000"},
    )  # fmt: skip
    assert outcome.node_status == {"builder": "ok"}
    (call_event,) = h.events("model_call")
    usage = standin.CODEX_USAGE
    assert (call_event.input_tokens, call_event.cached_tokens, call_event.output_tokens) == (
        usage["input_tokens"], usage["cached_input_tokens"], usage["output_tokens"],
    )  # fmt: skip
    assert call_event.cost_usd is None and call_event.price_table == "test-prices-1"  # unpriced
    tools = [(t.tool, t.ok) for t in h.events("tool_call")]
    assert tools == [
        ("command_execution", True), ("file_change", True), ("command_execution", False),
    ]  # fmt: skip
    assert h.events("node_end")[0].summary == "Added mul and div."
    call = called(record)
    argv = call["argv"]
    assert argv[:2] == ["exec", "--json"] and argv[-1] == "-"
    assert 'web_search="disabled"' in argv and argv[argv.index("-m") + 1] == "gpt-5-codex"
    assert call["urls"]["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert {"CODEX_API_KEY", "OPENAI_API_KEY"} <= set(call["env"])


def test_mini_swe_agent_trajectory_becomes_turns_and_is_kept(h: Harness, tmp_path: Path) -> None:
    outcome, record = run_stand_in(
        h, tmp_path, "mini-swe-agent", "ok",
        model="openai/local-coder", api_base="http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert outcome.node_status == {"builder": "ok"}
    calls = h.events("model_call")
    assert [(c.input_tokens, c.output_tokens, c.cached_tokens) for c in calls] == [
        (p, c, k) for p, c, k in standin.MINI_USAGE
    ]
    assert {c.model for c in calls} == {"openai/standin"} and calls[0].cost_usd is None
    assert [(t.tool, json.loads(t.arguments)["command"]) for t in h.events("tool_call")] == [
        ("bash", "ls"), ("bash", "cp -r solution/. ."),
    ]  # fmt: skip
    argv = called(record)["argv"]
    assert argv[argv.index("-m") + 1] == "openai/local-coder"
    assert "model.model_kwargs.api_base=http://127.0.0.1:9/v1" in argv
    assert "agent.step_limit=30" in argv and argv[argv.index("-c") + 1] == "mini.yaml"
    kept = h.events_path.parent / "external" / "builder.1.trajectory.json"
    assert json.loads(kept.read_text())["trajectory_format"] == "mini-swe-agent-1.1"


def test_openhands_marked_events_become_turns_with_totals_on_the_last(
    h: Harness, tmp_path: Path
) -> None:
    outcome, record = run_stand_in(
        h, tmp_path, "openhands", "ok",
        model="openai/local-coder", api_base="http://127.0.0.1:9/v1",
        environ={"OPENAI_API_KEY": "sk-openai-standin-000000000"},
    )  # fmt: skip
    assert outcome.node_status == {"builder": "ok"}
    calls = h.events("model_call")
    totals = standin.OPENHANDS_TOTALS
    assert [c.input_tokens for c in calls] == [0, 0, totals["prompt_tokens"]]
    assert calls[-1].cached_tokens == totals["cache_read_tokens"]
    assert [c.cost_usd for c in calls] == [0.0, 0.0, standin.OPENHANDS_COST]
    tools = h.events("tool_call")
    assert [(t.tool, t.ok, t.error) for t in tools] == [
        ("terminal", True, None), ("file_editor", False, "file exists"), ("finish", True, None),
    ]  # fmt: skip
    assert h.events("node_end")[0].summary == "Added mul and div."
    call = called(record)
    assert call["urls"] == {
        "LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "LLM_MODEL": "openai/local-coder",
    }
    assert "LLM_API_KEY" in call["env"] and call["argv"][:3] == [
        "--headless",
        "--json",
        "--override-with-envs",
    ]


# --- failures: crash, hang, leak, turn limit, missing executable ------------------------------


@pytest.mark.parametrize("name", AGENTS)
def test_a_crash_is_a_recorded_node_error_and_the_run_goes_on(
    h: Harness, tmp_path: Path, name: str
) -> None:
    outcome, _ = run_stand_in(h, tmp_path, name, "crash", with_gate=True)
    assert outcome.status == "completed"
    assert outcome.node_status["builder"] == "error"
    (error,) = [e for e in h.events("error") if e.node_id == "builder"]
    assert f"{name} failed (exit code 1)" in error.message
    assert "stand-in crash" in error.message  # the agent's stderr says why


@pytest.mark.parametrize("name", AGENTS)
def test_a_hang_is_killed_with_its_process_group_at_the_timeout(
    h: Harness, tmp_path: Path, name: str
) -> None:
    outcome, record = run_stand_in(h, tmp_path, name, "hang")
    assert outcome.node_status == {"builder": "timeout"}
    (end,) = h.events("node_end")
    assert end.status == "timeout" and "process group was killed" in (end.error or "")
    assert 1.0 <= end.duration_s < 10.0
    child = int((record / "child.pid").read_text())
    assert not alive(child)  # the agent's own child died with it


@pytest.mark.parametrize("name", ["claude-code", "codex", "openhands"])
def test_a_web_tool_use_is_recorded_as_a_leak(h: Harness, tmp_path: Path, name: str) -> None:
    outcome, _ = run_stand_in(h, tmp_path, name, "leak")
    assert outcome.node_status == {"builder": "error"}
    (error,) = h.events("error")
    assert error.message.startswith(f"leak: {name} used a web tool")


@pytest.mark.parametrize("name", ["claude-code", "mini-swe-agent"])
def test_an_agent_reported_turn_limit_is_max_turns(h: Harness, tmp_path: Path, name: str) -> None:
    outcome, _ = run_stand_in(h, tmp_path, name, "max_turns")
    assert outcome.node_status == {"builder": "max_turns"}
    assert "turn limit" in (h.events("node_end")[0].error or "")


@pytest.mark.parametrize("name", AGENTS)
def test_a_missing_executable_is_a_recorded_unavailable(
    h: Harness, tmp_path: Path, name: str
) -> None:
    loop = external_loop(
        EXTERNAL_AGENTS.get(name), ExternalSettings(environ={"PATH": str(tmp_path)})
    )
    regs = default_registries().with_loop(EXTERNAL_LOOP_PREFIX + name, loop)
    outcome = h.run(chain(external(name), gate()), FakeModel([]), registries=regs)
    assert outcome.status == "completed" and outcome.node_status["builder"] == "error"
    (error,) = [e for e in h.events("error") if e.node_id == "builder"]
    adapter = EXTERNAL_AGENTS.get(name)
    assert error.message.startswith(f"unavailable: the external agent {name!r}")
    assert adapter.install_hint in error.message and executable_env_name(name) in error.message
    assert h.events("model_call") == []


def test_the_executable_env_var_points_the_default_loop_at_a_stand_in(
    h: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, record = stand_in(tmp_path, "codex", "ok", h.task.solution_dir or tmp_path)
    monkeypatch.setenv("LOOPWRIGHT_EXTERNAL_CODEX", str(script))
    assert executable_env_name("codex") == "LOOPWRIGHT_EXTERNAL_CODEX"
    outcome = h.run(chain(external("codex")), FakeModel([]))  # the default registries
    assert outcome.node_status == {"builder": "ok"} and (record / "call.json").is_file()


def test_only_registered_external_loops_pass_validation(h: Harness) -> None:
    with pytest.raises(ConfigError) as info:
        h.run(chain(external("nonesuch")), FakeModel([]))
    assert "external:nonesuch" in str(info.value) and "external:claude-code" in str(info.value)
    assert h.events() == []  # refused before anything ran


# --- the run's model, ledger and sandbox ------------------------------------------------------


def test_the_run_gateway_gives_model_and_base_url_and_its_ledger_gets_labelled_records(
    h: Harness, tmp_path: Path
) -> None:
    script, record = stand_in(tmp_path, "claude-code", "ok", h.task.solution_dir or tmp_path)
    ledger = CostLedger()
    gateway = LiteLLMGateway(
        "anthropic/claude-sonnet-4-5",
        GatewaySettings(api_base="http://127.0.0.1:9"),
        ledger=ledger,
    )
    regs = registries("claude-code", script)
    runner = Runner(gateway, h.sandbox, cost_fn=lambda m, u: None, price_table="t", registries=regs)
    with EventWriter(h.events_path) as writer:
        outcome = runner.run(
            chain(external("claude-code")), h.task, h.workspace, h.instruction, writer
        )
    assert outcome.node_status == {"builder": "ok"}
    argv = called(record)["argv"]
    assert argv[argv.index("--model") + 1] == "claude-sonnet-4-5"
    assert called(record)["urls"]["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    records = ledger.records()
    assert [r.source for r in records] == ["external:claude-code"] * 3
    assert [r.input_tokens for r in records] == [160, 200, 400]
    assert [r.cache_write_tokens for r in records] == [10, 0, 0]
    assert {(r.labels.node, r.labels.role) for r in records} == {("builder", "builder")}
    assert ledger.totals()[None].cost_usd == pytest.approx(standin.CLAUDE_COST)
    assert read_events(h.events_path)[-1].type == "node_end"


@pytest.mark.skipif(not bubblewrap_available(), reason="bubblewrap does not work here")
def test_under_bubblewrap_the_agent_reads_the_instruction_copy_and_edits_the_workspace(
    h: Harness, tmp_path: Path
) -> None:
    h.sandbox = BubblewrapSandbox()  # type: ignore[assignment]  # the harness field is typed Local
    # The task's solution lives under /tmp, which bubblewrap hides: the stand-in copies it from
    # inside the workspace instead (already there when the visit starts, so not "produced").
    solution = h.workspace / ".standin-solution"
    (solution / "calc").mkdir(parents=True)
    (solution / "calc" / "core.py").write_text(
        (h.workspace / "calc" / "core.py").read_text() + "\n"
    )
    script, _ = stand_in(tmp_path, "claude-code", "ok", solution)
    # The stand-in's own code lives in the checkout, which the sandbox does not show unasked.
    regs = registries("claude-code", script, expose=(str(FIXTURE.parent),))
    outcome = h.run(chain(external("claude-code")), FakeModel([]), registries=regs)
    assert outcome.node_status == {"builder": "ok"}
    read = h.events("tool_call")[0]
    assert (read.tool, read.ok) == ("Read", True)  # the run directory is hidden; the copy is not
    assert h.events("node_end")[0].produced == ["calc/core.py"]
