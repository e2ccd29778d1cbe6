"""The external agents' output parsers on the samples their documentation shows, and on the
edge cases: one-object JSON results, text-based trajectories, plain JSON Lines, garbage."""

from __future__ import annotations

import json

import pytest

from loopwright.models import Usage
from loopwright.runtime.external._claude import parse_claude_stream
from loopwright.runtime.external._codex import parse_codex_jsonl
from loopwright.runtime.external._mini import parse_mini_trajectory
from loopwright.runtime.external._openhands import parse_openhands_events
from loopwright.runtime.external._parse import anthropic_usage, bare_model, marked_objects

# The sample of `codex exec --json` in Codex's docs/exec.md ("JSON output mode").
CODEX_DOC_SAMPLE = """\
{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Searching for README files**"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"2025-09-11\\nAGENTS.md\\nREADME.md\\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"reasoning","text":"**Checking repository root for README**"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Yep — there’s a `README.md` in the repository root."}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}
"""


def test_codex_documented_sample() -> None:
    transcript = parse_codex_jsonl(CODEX_DOC_SAMPLE)
    (turn,) = transcript.turns
    assert turn.usage == Usage(24763, 122, 24448)
    (tool,) = turn.tools
    assert (tool.name, json.loads(tool.arguments), tool.ok) == (
        "command_execution", {"command": "bash -lc ls"}, True,
    )  # fmt: skip
    assert tool.output_chars == len("2025-09-11\nAGENTS.md\nREADME.md\n")
    assert transcript.outcome == "done" and transcript.summary.startswith("Yep")


def test_codex_turn_failed_is_an_error() -> None:
    text = CODEX_DOC_SAMPLE.replace(
        '{"type":"turn.completed"',
        '{"type":"turn.failed","error":{"message":"stream disconnected"}}\n{"x":"',
    )
    transcript = parse_codex_jsonl(text)
    assert transcript.outcome == "error" and transcript.error == "stream disconnected"


def test_claude_json_output_is_one_turn_carrying_the_totals() -> None:
    # `claude -p --output-format json`: only the result object.
    result = {
        "type": "result", "subtype": "success", "is_error": False, "duration_ms": 3952,
        "num_turns": 1, "result": "final text", "session_id": "s", "total_cost_usd": 0.1046,
        "usage": {"input_tokens": 2, "output_tokens": 9, "cache_creation_input_tokens": 7924,
                  "cache_read_input_tokens": 13368,
                  "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0}},
    }  # fmt: skip
    transcript = parse_claude_stream(json.dumps(result))
    assert transcript.turns == () and transcript.summary == "final text"
    assert transcript.total_usage == Usage(2 + 13368 + 7924, 9, 13368)
    assert transcript.total_cache_write_tokens == 7924 and transcript.cost_usd == 0.1046
    assert transcript.outcome == "done" and transcript.web_uses == ()


def test_claude_error_result_and_server_side_web_use() -> None:
    result = {
        "type": "result", "subtype": "error_during_execution", "is_error": True,
        "usage": {"input_tokens": 1, "output_tokens": 1, "server_tool_use": {"web_fetch_requests": 2}},
    }  # fmt: skip
    transcript = parse_claude_stream("banner\n" + json.dumps(result))
    assert transcript.outcome == "error" and transcript.error == "error_during_execution"
    assert transcript.web_uses == ("web_fetch (server)", "web_fetch (server)")


def test_mini_text_based_trajectory_pairs_observations_in_order() -> None:
    data = {
        "info": {"exit_status": "RuntimeError", "model_stats": {"instance_cost": 0.25}},
        "messages": [
            {"role": "assistant", "content": "```bash\nls\n```",
             "extra": {"actions": [{"command": "ls"}], "response": {"usage": {
                 "prompt_tokens": 10, "completion_tokens": 2}}}},
            {"role": "user", "content": "<returncode>2</returncode>", "extra": {"returncode": 2}},
            {"role": "exit", "content": "boom", "extra": {"exit_status": "RuntimeError",
                                                          "exception_str": "boom"}},
        ],
    }  # fmt: skip
    transcript = parse_mini_trajectory(data)
    (turn,) = transcript.turns
    assert turn.usage == Usage(10, 2, 0) and not turn.tools[0].ok
    assert (
        transcript.outcome == "error"
        and transcript.error == "mini-swe-agent exited with RuntimeError: boom"
    )
    assert transcript.cost_usd == 0.25


def test_openhands_plain_json_lines_are_read_too() -> None:
    lines = [
        {"kind": "ActionEvent", "tool_name": "terminal", "tool_call_id": "a", "llm_response_id": "r",
         "action": {"kind": "TerminalAction", "command": "ls"}, "thought": []},
        {"kind": "ObservationEvent", "tool_call_id": "a", "observation": {"is_error": True,
                                                                          "content": "nope"}},
        {"kind": "ConversationErrorEvent", "code": "LLMError", "detail": "bad key"},
    ]  # fmt: skip
    transcript = parse_openhands_events("\n".join(json.dumps(x) for x in lines))
    assert [t.ok for t in transcript.turns[0].tools] == [False]
    assert transcript.outcome == "error" and transcript.error == "bad key"


@pytest.mark.parametrize("parse", [parse_claude_stream, parse_codex_jsonl, parse_openhands_events])
def test_output_without_any_agent_event_cannot_be_read(parse: object) -> None:
    with pytest.raises(ValueError, match=r"no .* in its output"):
        parse("Segmentation fault\n{not json\n")  # type: ignore[operator]


def test_helpers() -> None:
    assert bare_model("anthropic/claude-sonnet-4-5", "anthropic") == "claude-sonnet-4-5"
    assert bare_model("openai/gpt-5", "anthropic") == "openai/gpt-5"
    assert anthropic_usage({"output_tokens": 3}) is None
    text = 'noise\n--JSON Event--\n{\n  "a": 1\n}\n--JSON Event--\n{broken\n--JSON Event--\n{"b": [2]}\n'
    assert marked_objects(text, "--JSON Event--") == [{"a": 1}, {"b": [2]}]
