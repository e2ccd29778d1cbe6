from __future__ import annotations

import pytest

from loopwright.errors import ConfigError, UsageError
from loopwright.workflow import fill_prompt, parse_template, prompt_placeholders


def test_placeholders_are_found_and_escaped_braces_ignored() -> None:
    template = "Read {instruction_file}; {{not_a_field}}; notes: {notes} {notes}"
    assert prompt_placeholders(template) == {"instruction_file", "notes"}


def test_decorated_fields_are_not_known() -> None:
    fields = parse_template("{notes!r} {feedback:>10} {workspace}")
    assert [(f.name, f.known) for f in fields] == [
        ("notes", False),
        ("feedback", False),
        ("workspace", True),
    ]


def test_fill_prompt_inserts_values_literally() -> None:
    out = fill_prompt(
        "Read {instruction_file}. {{braces}} stay. Notes: {notes}",
        {"instruction_file": "/task/instruction.md", "notes": "use {x} here"},
    )
    assert out == "Read /task/instruction.md. {braces} stay. Notes: use {x} here"


def test_fill_prompt_rejects_unknown_placeholders() -> None:
    with pytest.raises(ConfigError, match=r"unknown placeholders \{notes\.__class__\}"):
        fill_prompt("{notes.__class__}", {"notes": ""})


def test_fill_prompt_needs_every_value() -> None:
    with pytest.raises(UsageError, match="no value given for feedback"):
        fill_prompt("{instruction_file} {feedback}", {"instruction_file": "i.md"})


def test_unbalanced_braces_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a valid prompt template"):
        parse_template("a } b")
