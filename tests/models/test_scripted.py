from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.models import (
    ChatModel,
    Message,
    ModelResponse,
    ScriptedModel,
    ScriptExhaustedError,
    ToolCall,
    ToolSpec,
    Usage,
)

PROMPT = [Message("system", "be brief"), Message("user", "Read /t/instruction.md please")]


def test_list_script_answers_in_order_then_raises() -> None:
    read = ToolCall.make("c1", "read_file", path="a.py")
    model = ScriptedModel(["hello", read, (read, ToolCall.make("c2", "finish", summary="ok"))])
    assert model.chat(PROMPT, []).text == "hello"
    second = model.chat(PROMPT, [])
    assert second.tool_calls == (read,) and second.text == ""
    assert [c.name for c in model.chat(PROMPT, []).tool_calls] == ["read_file", "finish"]
    with pytest.raises(ScriptExhaustedError) as err:
        model.chat(PROMPT, [])
    message = str(err.value)
    assert "call 4" in message
    assert "Read /t/instruction.md please" in message
    assert "3 call(s)" in message


def test_tuple_reply_carries_text_and_calls() -> None:
    call = ToolCall.make("c1", "finish", summary="done")
    reply = ScriptedModel([("all done", call)]).chat(PROMPT, [])
    assert reply.text == "all done"
    assert reply.tool_calls == (call,)


def test_mapping_script_matches_substring_of_last_message() -> None:
    model = ScriptedModel({"instruction.md": "reading", "exit code 1": "fixing"})
    assert model.chat(PROMPT, []).text == "reading"
    failed = [*PROMPT, Message("tool", "exit code 1\nFAILED", tool_call_id="c1")]
    assert model.chat(failed, []).text == "fixing"
    assert model.chat(PROMPT, []).text == "reading"  # keys answer more than once
    with pytest.raises(ScriptExhaustedError, match=r"'instruction.md', 'exit code 1'"):
        model.chat([Message("user", "something else")], [])


def test_callable_script_sees_messages_and_tools() -> None:
    def script(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str | None:
        return f"{len(messages)} messages, tools {[t.name for t in tools]}" if tools else None

    model = ScriptedModel(script)
    assert model.chat(PROMPT, [ToolSpec("finish", "")]).text == "2 messages, tools ['finish']"
    with pytest.raises(ScriptExhaustedError, match="callable script"):
        model.chat(PROMPT, [])


def test_model_response_is_returned_exactly() -> None:
    given = ModelResponse("x", (), Usage(7, 3, 1), 0.5, "custom")
    assert ScriptedModel([given]).chat(PROMPT, []) is given


def test_usage_counts_chars_over_four_and_marks_simulated() -> None:
    model = ScriptedModel(["abcdefgh"])
    reply = model.chat(PROMPT, [])
    read = sum(len(m.content) for m in PROMPT) // 4 - 1  # per-message floor
    assert reply.usage.output_tokens == 2
    assert read <= reply.usage.input_tokens <= read + 2
    assert reply.latency_s == 0.0
    assert (reply.model, reply.simulated) == ("scripted", True)
    assert isinstance(model, ChatModel)
    assert model.calls == 1


def test_one_reply_instead_of_a_script_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="wrap it in a list"):
        ScriptedModel("hello")  # type: ignore[arg-type]  # the mistake under test


def test_from_file_yaml_list(tmp_path: Path) -> None:
    path = tmp_path / "script.yaml"
    path.write_text(
        """
replies:
  - text: reading
    tool_calls:
      - name: read_file
        arguments: {path: /t/instruction.md}
  - tool_calls: [{name: finish, arguments: {summary: done}, id: last}]
    usage: {input_tokens: 100, output_tokens: 5}
  - plain text
""",
        encoding="utf-8",
    )
    model = ScriptedModel.from_file(path)
    first = model.chat(PROMPT, [])
    assert first.text == "reading"
    assert first.tool_calls[0].name == "read_file"
    assert first.tool_calls[0].arguments() == {"path": "/t/instruction.md"}
    assert first.tool_calls[0].id == "call-1-1"
    second = model.chat(PROMPT, [])
    assert second.tool_calls[0].id == "last"
    assert second.usage == Usage(100, 5, 0)
    assert model.chat(PROMPT, []).text == "plain text"
    with pytest.raises(ScriptExhaustedError, match=r"script\.yaml"):
        model.chat(PROMPT, [])


def test_from_file_json_match(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"name": "mine", "match": {"instruction": "ok"}}), "utf-8")
    reply = ScriptedModel.from_file(path).chat(PROMPT, [])
    assert (reply.text, reply.model) == ("ok", "mine")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("replies: [a]\nmatch: {x: b}\n", "exactly one of"),
        ("[1, 2]\n", "must hold a mapping"),
        ("replies:\n  - tool_calls: [{arguments: {}}]\n", "name"),
        ("replies: [\n", "cannot be parsed"),
    ],
)
def test_from_file_rejects_malformed_scripts(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=problem):
        ScriptedModel.from_file(path)


def test_from_file_missing_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ScriptedModel.from_file(tmp_path / "nope.yaml")
