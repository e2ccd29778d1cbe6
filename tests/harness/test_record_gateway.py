"""A recorded run through `loopwright ab record --gateway-base-url` against the loopback
OpenAI-compatible server (from the models tests): the native loops through the LiteLLM
gateway, mini-swe-agent (a stand-in executable that makes real HTTP calls) through the
metering relay, and the other external agents unavailable. Every call is in one ledger."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.harness import live_loops, load_brief_suite, load_results, read_scoreboard
from loopwright.models import read_ledger
from loopwright.runtime import EXTERNAL_AGENTS, executable_env_name
from tests.harness.conftest import solution_files
from tests.models.test_gateway_server import DUMMY_KEY, Answer, Loopback, loopback

__all__ = ["loopback"]  # the fixture, re-exported for pytest

MODEL = "openai/loopback-coder"

# A stand-in for mini-swe-agent's `mini` command: it reads the options the adapter passes
# (-t prompt, -o trajectory, -m model, -c model.model_kwargs.api_base=URL), talks to that base
# URL over HTTP as mini does (OpenAI chat completions with a bash tool), runs the commands it
# is given in the workspace, and saves a trajectory in mini's format.
STAND_IN = """
import json, os, subprocess, sys, urllib.request

args = sys.argv[1:]
value = lambda flag: args[args.index(flag) + 1]
configs = [args[i + 1] for i, a in enumerate(args) if a == "-c"]
base = next(c.split("=", 1)[1] for c in configs if c.startswith("model.model_kwargs.api_base="))
steps = int(next(c.split("=", 1)[1] for c in configs if c.startswith("agent.step_limit=")))
model, trajectory = value("-m"), value("-o")
bash = {"type": "function", "function": {"name": "bash", "description": "run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}
chat = [{"role": "user", "content": value("-t")}]
saved = list(chat)
status, submission = "LimitsExceeded", ""
for _ in range(steps):
    body = json.dumps({"model": model.split("/", 1)[1], "messages": chat, "tools": [bash]})
    request = urllib.request.Request(base + "/chat/completions", data=body.encode(), headers={
        "Content-Type": "application/json",
        "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "")})
    reply = json.load(urllib.request.urlopen(request, timeout=30))
    message = reply["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    actions = [{"command": json.loads(c["function"]["arguments"])["command"],
                "tool_call_id": c["id"]} for c in calls]
    saved.append({"role": "assistant", "content": message.get("content") or "",
                  "extra": {"actions": actions, "response": reply}})
    chat.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls}
                if calls else {"role": "assistant", "content": message.get("content") or ""})
    if not calls:
        status, submission = "Submitted", message.get("content") or ""
        break
    for action in actions:
        done = subprocess.run(["sh", "-c", action["command"]], capture_output=True, text=True)
        output = done.stdout + done.stderr
        saved.append({"role": "tool", "tool_call_id": action["tool_call_id"], "content": output,
                      "extra": {"returncode": done.returncode, "raw_output": output}})
        chat.append({"role": "tool", "tool_call_id": action["tool_call_id"], "content": output})
saved.append({"role": "exit", "content": "",
              "extra": {"exit_status": status, "submission": submission}})
info = {"exit_status": status, "submission": submission, "model_stats": {"instance_cost": 0}}
with open(trajectory, "w") as f:
    json.dump({"info": info, "messages": saved, "trajectory_format": "mini-swe-agent-1.1"}, f)
"""


def call(name: str, **arguments: str) -> tuple[str, str]:
    return (name, json.dumps(arguments))


def answers(files: dict[str, str]) -> list[Answer]:
    """What the server answers, in cell order (loops sorted; the unavailable agents make no
    call): mini-swe-agent, then hybrid, plan_execute and react. Distinct usage per answer."""
    heredocs = "\n".join(f"cat > {p} <<'EOF'\n{c}EOF" for p, c in files.items())
    writes = tuple(call("write_file", path=p, content=c) for p, c in files.items())
    plan = Answer(text="1. Implement top_words and finish.")
    finish = Answer(calls=(call("finish", summary="done"),))
    steps = [
        Answer(calls=(call("bash", command=heredocs),)),  # mini-swe-agent
        Answer(text="Implemented top_words."),
        plan, Answer(calls=writes), finish,  # hybrid
        plan, Answer(calls=writes), finish,  # plan_execute
        Answer(calls=writes), finish,  # react
    ]  # fmt: skip
    return [
        Answer(calls=a.calls, text=a.text, prompt_tokens=200 + 7 * i, completion_tokens=30 + i)
        for i, a in enumerate(steps)
    ]


def test_recorded_run_through_the_gateway_with_an_external_agent(
    loopback: Loopback,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stand_in = tmp_path / "bin" / "mini"
    stand_in.parent.mkdir()
    stand_in.write_text(f"#!{sys.executable}\n{textwrap.dedent(STAND_IN)}", encoding="utf-8")
    stand_in.chmod(0o755)
    for name in EXTERNAL_AGENTS:
        missing = str(tmp_path / "not-installed" / name)
        monkeypatch.setenv(executable_env_name(name), missing)
    monkeypatch.setenv(executable_env_name("mini-swe-agent"), str(stand_in))
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    brief = load_brief_suite().get("simple-wordfreq")
    sent = answers(solution_files(brief, None))
    loopback.script.answers += sent
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(
        f"loops: all\ntiers:\n  small: {MODEL}\nbriefs: [simple-wordfreq]\nrepetitions: 1\n",
        encoding="utf-8",
    )
    out = tmp_path / "record"
    code = main(["ab", "record", "--gateway-base-url", loopback.url, "--manifest",
                 str(manifest), "--out", str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr().err

    results = {r.cell.loop: r for r in load_results(out)}
    assert set(results) == set(live_loops())
    measured = ["external:mini-swe-agent", "hybrid", "plan_execute", "react"]
    assert {loop: results[loop].correctness for loop in measured} == dict.fromkeys(measured, 1.0)
    for name in ("claude-code", "codex", "openhands"):
        row = results[f"external:{name}"]
        assert row.status == "unavailable" and row.correctness is None
        assert row.reason is not None and row.reason.startswith(
            f"unavailable: the external agent '{name}' needs the executable"
        )

    # One ledger holds every call the server answered: the relay's and the gateway's.
    ledger = read_ledger(out / "ledger.jsonl")
    assert len(ledger) == len(sent) == len(loopback.script.requests)
    assert sum(r.input_tokens for r in ledger) == sum(a.prompt_tokens for a in sent)
    assert sum(r.output_tokens for r in ledger) == sum(a.completion_tokens for a in sent)
    sources = {(r.labels.candidate, r.source) for r in ledger}
    assert sources == {("external:mini-swe-agent", "relay"), ("hybrid", "gateway"),
                       ("plan_execute", "gateway"), ("react", "gateway")}  # fmt: skip
    assert {r.model for r in ledger} == {MODEL}
    assert {r["model"] for r in loopback.script.requests} == {"loopback-coder"}
    # The agent held only the relay's placeholder; every call reached the server with the key.
    assert {h.get("authorization") for h in loopback.script.headers} == {f"Bearer {DUMMY_KEY}"}
    mini = results["external:mini-swe-agent"]
    assert (mini.turns, mini.input_tokens) == (2, sent[0].prompt_tokens + sent[1].prompt_tokens)

    scoreboard = read_scoreboard(out / "scoreboard.json")
    assert not scoreboard.simulated and scoreboard.complete
    assert [m.model for m in scoreboard.money] == [MODEL] and scoreboard.money[0].calls == 10
    bucket = scoreboard.buckets[0]
    unavailable = {
        s.loop for s in bucket.standings if s.disqualified and "unavailable" in s.disqualified
    }
    assert unavailable == {"external:claude-code", "external:codex", "external:openhands"}
    assert scoreboard.promotion.default_loop_type == bucket.winner == "react"
    markdown = (out / "scoreboard.md").read_text(encoding="utf-8")
    assert "| 0 | unavailable: the external agent 'codex' needs the executable" in markdown
    assert DUMMY_KEY not in "".join(
        p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()
    )
