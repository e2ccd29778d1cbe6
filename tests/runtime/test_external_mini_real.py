"""The real mini-swe-agent as an `external:mini-swe-agent` node, against the loopback
OpenAI-compatible server of tests/models with scripted answers: its bash commands change the
workspace, the grader resolves the task, and its trajectory becomes our events and ledger.

mini-swe-agent is pip-installed once into its own virtualenv under
$LOOPWRIGHT_TEST_CACHE (default ~/.cache/loopwright-test)/mini-swe-agent-venv and reused; when
the install fails (no network) the test is skipped, saying why.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import (
    LEDGER_FILE,
    CostLedger,
    GatewaySettings,
    LiteLLMGateway,
    Price,
    PriceTable,
    label_scope,
    read_ledger,
)
from loopwright.records import read_events
from loopwright.sandbox import default_sandbox
from loopwright.workflow import AgentNode, Workflow, builtin_workflow
from tests.models.test_gateway_loopback import gold_files, roman_task
from tests.models.test_gateway_server import DUMMY_KEY, Answer, Loopback, loopback

__all__ = ["loopback"]  # the fixture, re-exported for pytest

MINI_VERSION = "2.4.6"  # the trajectory format the adapter documents: mini-swe-agent-1.1
CACHE = Path(os.environ.get("LOOPWRIGHT_TEST_CACHE") or Path.home() / ".cache" / "loopwright-test")
MODEL = "openai/loopback-coder"
PRICES = PriceTable(
    version="loopback-test-prices-1",
    prices={
        name: Price(2.0, 8.0, 0.5, simulated=True, note="test price of the loopback model")
        for name in (MODEL, "loopback-coder")
    },
)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def mini_executable() -> Path:
    """The `mini` command of mini-swe-agent MINI_VERSION in the cached virtualenv (installed on
    first use; skipped when pip cannot install it)."""
    venv = CACHE / "mini-swe-agent-venv"
    mini, marker = venv / "bin" / "mini", venv / ".loopwright-installed"
    with _locked(CACHE / "mini-swe-agent.lock"):
        if mini.is_file() and marker.is_file() and marker.read_text() == MINI_VERSION:
            return mini
        shutil.rmtree(venv, ignore_errors=True)
        started = time.monotonic()
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300
        )
        install = made.returncode == 0 and subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check",
             "-q", f"mini-swe-agent=={MINI_VERSION}"],
            capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        if not install or install.returncode != 0 or not mini.is_file():
            detail = (made.stderr if not install else install.stderr).strip()[-500:]
            shutil.rmtree(venv, ignore_errors=True)
            pytest.skip(
                f"could not pip install mini-swe-agent=={MINI_VERSION} (no network?): {detail}"
            )
        marker.write_text(MINI_VERSION)
        print(f"\ninstalled mini-swe-agent {MINI_VERSION} in {time.monotonic() - started:.1f}s")
        return mini


def bash(command: str) -> tuple[tuple[str, str], ...]:
    return (("bash", json.dumps({"command": command})),)


def heredoc(path: str, content: str) -> str:
    parent = str(Path(path).parent)
    make = f"mkdir -p {parent} && " if parent != "." else ""
    return f"{make}cat > {path} <<'LOOPWRIGHT_EOF'\n{content}LOOPWRIGHT_EOF"


def test_real_mini_swe_agent_resolves_a_task_against_the_loopback_server(
    mini_executable: Path, loopback: Loopback, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    monkeypatch.setenv("LOOPWRIGHT_EXTERNAL_MINI_SWE_AGENT", str(mini_executable))
    task, run_dir = roman_task(), tmp_path / "run"
    writes = " && ".join(heredoc(p, c) for p, c in gold_files(task).items())
    answers = [
        Answer(bash("ls"), "Look around first.", prompt_tokens=900, completion_tokens=30),
        Answer(bash(writes), "Write the implementation.", 1400, 250, cached_tokens=800),
        Answer(bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"), "Done.", 1800, 12, 1200),
    ]
    loopback.script.answers.extend(answers)
    builder = builtin_workflow("builder-only").node("builder")
    assert isinstance(builder, AgentNode)
    node = builder.model_copy(update={"loop": "external:mini-swe-agent", "timeout_s": 180})
    workflow = Workflow(name="mini-external", nodes=(node,))
    ledger = CostLedger(run_dir / LEDGER_FILE)
    model = LiteLLMGateway(
        MODEL, GatewaySettings(api_base=loopback.url), ledger=ledger, prices=PRICES
    )
    spec = TaskRunSpec(
        workflow=workflow,
        task=task,
        model=model,
        sandbox=default_sandbox(),
        prices=PRICES,
        run_dir=run_dir,
        run_id="mini-real",
        seed=0,
    )
    started = time.monotonic()
    with label_scope(run="mini-real", candidate="mini-external"):
        record = run_task(spec)
    print(f"\nmini-swe-agent node run and graded in {time.monotonic() - started:.1f}s")

    # Its commands changed the workspace; the hidden tests grade what it left.
    assert record.grade is not None and record.grade.resolved and record.score_end == 1.0
    (step,) = record.steps
    assert (step.status, step.turns, step.tool_calls, step.tool_errors) == ("ok", 3, 3, 0)
    assert set(gold_files(task)) <= set(step.produced)

    # Every request reached the loopback server, with mini's bash tool and the key.
    assert len(loopback.script.requests) == 3
    assert {r["tools"][0]["function"]["name"] for r in loopback.script.requests} == {"bash"}
    assert {h["authorization"] for h in loopback.script.headers} == {f"Bearer {DUMMY_KEY}"}
    assert "instruction.md" in json.dumps(loopback.script.requests[0]["messages"])

    # Its trajectory became events: tokens exactly as the server sent them, priced by our table.
    calls = [e for e in read_events(run_dir / "events.jsonl") if e.type == "model_call"]
    assert [(c.input_tokens, c.output_tokens, c.cached_tokens) for c in calls] == [
        (a.prompt_tokens, a.completion_tokens, a.cached_tokens) for a in answers
    ]
    assert all(c.cost_usd is not None for c in calls) and {c.price_table for c in calls} == {
        "loopback-test-prices-1"
    }
    tools = [e for e in read_events(run_dir / "events.jsonl") if e.type == "tool_call"]
    assert [t.tool for t in tools] == ["bash"] * 3  # arguments are cut at 2,000 characters
    assert json.loads(tools[0].arguments) == {"command": "ls"}
    assert json.loads(tools[2].arguments) == {
        "command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    }

    # ...and ledger records labelled by run, candidate, node and role.
    records = read_ledger(run_dir / LEDGER_FILE)
    assert [r.source for r in records] == ["external:mini-swe-agent"] * 3
    assert {(r.labels.run, r.labels.candidate, r.labels.node, r.labels.role) for r in records} == {
        ("mini-real", "mini-external", "builder", "builder")
    }
    assert sum(r.input_tokens for r in records) == sum(a.prompt_tokens for a in answers)

    # The raw trajectory is kept; the key reached no file of the run.
    kept = run_dir / "external" / "builder.1.trajectory.json"
    assert json.loads(kept.read_text())["info"]["exit_status"] == "Submitted"
    for path in (p for p in run_dir.rglob("*") if p.is_file()):
        assert DUMMY_KEY.encode() not in path.read_bytes(), path
