"""A small valid workflow as plain data, for tests to copy and break."""

from __future__ import annotations

import copy
from typing import Any

PROMPT = (
    "Read the task instruction in {instruction_file}. Work in {workspace}.\n{notes}\n{feedback}\n"
)

BASE: dict[str, Any] = {
    "name": "sample",
    "description": "study, build, verify",
    "nodes": [
        {
            "id": "study",
            "kind": "agent",
            "role": "researcher",
            "prompt": PROMPT,
            "tools": ["read_file", "write_notes"],
        },
        {
            "id": "builder",
            "kind": "agent",
            "role": "builder",
            "prompt": PROMPT,
            "tools": ["read_file", "edit_file", "run_tests"],
            "model": "large",
        },
        {"id": "tests", "kind": "fn", "fn": "run_visible_tests", "args": {"verbose": True}},
        {"id": "gate", "kind": "gate", "check": "visible_tests_pass", "reloop_to": "builder"},
    ],
    "edges": [
        {"source": "study", "target": "builder"},
        {"source": "builder", "target": "tests"},
        {"source": "tests", "target": "gate"},
    ],
    "frozen": ["study"],
}


def sample_data() -> dict[str, Any]:
    """A fresh deep copy of a valid four-node workflow (agent, agent, fn, gate) as plain data."""
    return copy.deepcopy(BASE)
