from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import yaml

from loopwright.workflow import (
    Workflow,
    builtin_workflow,
    normalize_prompt,
    workflow_from_text,
    workflow_hash,
)

Data = dict[str, Any]


def digest(data: Data) -> str:
    return workflow_hash(Workflow.model_validate(data))


def test_hash_is_sha256_hex(data: Data) -> None:
    value = digest(data)
    assert len(value) == 64
    assert int(value, 16) >= 0


def test_key_order_does_not_matter(data: Data) -> None:
    shuffled = {k: data[k] for k in reversed(list(data))}
    shuffled["nodes"] = [{k: n[k] for k in reversed(list(n))} for n in data["nodes"]]
    assert json.dumps(shuffled) != json.dumps(data)
    assert digest(shuffled) == digest(data)


def test_node_edge_tool_and_frozen_order_do_not_matter(data: Data) -> None:
    before = digest(data)
    data["nodes"].reverse()
    data["edges"].reverse()
    data["nodes"][2]["tools"].reverse()  # builder, now at index 2
    data["frozen"] = ["builder", "study"]
    after_first = digest(data)
    data["frozen"].reverse()
    assert digest(data) == after_first
    assert after_first != before  # frozen gained a node
    data["frozen"] = ["study"]
    assert digest(data) == before


def test_formatting_does_not_matter(data: Data) -> None:
    wf = Workflow.model_validate(data)
    pretty = workflow_from_text(yaml.safe_dump(data, default_flow_style=True), "yaml")
    compact = workflow_from_text(json.dumps(data, separators=(",", ":")), "json")
    assert workflow_hash(pretty) == workflow_hash(compact) == workflow_hash(wf)


def test_explicit_defaults_hash_like_omitted_ones(data: Data) -> None:
    explicit = Workflow.model_validate(data).model_dump(mode="json")
    assert explicit["nodes"][0]["timeout_s"] == 600  # the default is now written out
    assert "timeout_s" not in data["nodes"][0]
    assert digest(explicit) == digest(data)


def test_name_and_description_are_labels_not_identity(data: Data) -> None:
    before = digest(data)
    data["name"] = "renamed"
    data["description"] = "a different description"
    assert digest(data) == before


def test_line_end_whitespace_in_prompts_does_not_matter(data: Data) -> None:
    before = digest(data)
    prompt = data["nodes"][0]["prompt"]
    data["nodes"][0]["prompt"] = prompt.replace("\n", "   \r\n") + "\n\n"
    assert digest(data) == before


def test_prompt_wording_and_indentation_change_the_hash(data: Data) -> None:
    before = digest(data)
    data["nodes"][0]["prompt"] += "Be brief.\n"
    reworded = digest(data)
    data["nodes"][0]["prompt"] = "  " + data["nodes"][0]["prompt"]
    assert len({before, reworded, digest(data)}) == 3


def test_an_edge_or_a_setting_changes_the_hash(data: Data) -> None:
    seen = {digest(data)}
    data["edges"][1] = {"source": "study", "target": "tests"}
    seen.add(digest(data))
    data["nodes"][3]["max_loops"] = 4
    seen.add(digest(data))
    data["nodes"][1]["model"] = "small"
    seen.add(digest(data))
    assert len(seen) == 4


def test_normalize_prompt_touches_only_line_ends() -> None:
    assert normalize_prompt("  a  \r\n\n  b\t\n\n") == "  a\n\n  b"


def test_hash_is_the_same_in_another_process() -> None:
    here = workflow_hash(builtin_workflow("thorough"))
    code = (
        "from loopwright.workflow import builtin_workflow, workflow_hash;"
        "print(workflow_hash(builtin_workflow('thorough')))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == here
