from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from loopwright.errors import ConfigError
from loopwright.workflow import (
    Workflow,
    builtin_workflow,
    builtin_workflow_names,
    dump_workflow,
    load_workflow,
    workflow_format,
    workflow_from_text,
    workflow_to_json,
    workflow_to_yaml,
)

Data = dict[str, Any]


@pytest.mark.parametrize("name", builtin_workflow_names())
def test_builtins_round_trip_through_yaml_and_json(name: str) -> None:
    wf = builtin_workflow(name)
    via_yaml = workflow_from_text(workflow_to_yaml(wf), "yaml")
    via_json = workflow_from_text(workflow_to_json(via_yaml), "json")
    back = workflow_from_text(workflow_to_yaml(via_json), "yaml")
    assert via_yaml == wf
    assert via_json == wf
    assert workflow_to_yaml(back) == workflow_to_yaml(wf)


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_dump_and_load_a_file(tmp_path: Path, data: Data, suffix: str) -> None:
    wf = Workflow.model_validate(data)
    path = tmp_path / f"wf{suffix}"
    dump_workflow(wf, path)
    assert load_workflow(path) == wf
    if suffix == ".json":
        assert json.loads(path.read_text())["nodes"][0]["id"] == "study"


def test_tricky_text_survives_both_formats(data: Data) -> None:
    prompt = (
        "  indented first line {instruction_file}\n"
        "trailing spaces   \n"
        'tab\there, quotes "\'", unicode ≤ é 日本\n'
        "literal {{braces}}: yes, no, null, 1.0\n\n\n"
    )
    data["nodes"][0]["prompt"] = prompt
    data["nodes"][2]["args"] = {"flag": "yes", "n": 3, "ratio": 0.5, "on": False}
    data["description"] = "multi\nline: description #not a comment"
    wf = Workflow.model_validate(data)
    for text, fmt in ((workflow_to_yaml(wf), "yaml"), (workflow_to_json(wf), "json")):
        back = workflow_from_text(text, fmt)  # type: ignore[arg-type]
        assert back == wf
        assert back.node("study").prompt == prompt  # type: ignore[union-attr]


def test_prompts_are_written_as_yaml_block_scalars() -> None:
    text = workflow_to_yaml(builtin_workflow("research-build-verify"))
    assert text.count("prompt: |") == 2
    assert "\n      The task instruction is in {instruction_file}." in text
    assert "tools: [read_file, list_files, search_code, write_notes]" in text
    assert "- {source: study, target: builder}" in text


def test_yaml_output_is_plain_yaml(data: Data) -> None:
    wf = Workflow.model_validate(data)
    assert yaml.safe_load(workflow_to_yaml(wf)) == wf.model_dump(mode="json")


def test_malformed_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nnodes: [\n  {id: a\n")
    with pytest.raises(ConfigError) as info:
        load_workflow(path)
    message = str(info.value)
    assert f"{path} is not valid YAML" in message
    assert "line" in message
    assert "<unicode string>" not in message


def test_malformed_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x", "nodes": [}')
    with pytest.raises(ConfigError, match=r"broken\.json is not valid JSON") as info:
        load_workflow(path)
    assert "line 1 column" in str(info.value)


@pytest.mark.parametrize(
    ("fmt", "text"),
    [("yaml", "name: a\nname: b\nnodes: []\n"), ("json", '{"name": "a", "name": "b"}')],
)
def test_duplicate_keys_are_rejected(fmt: str, text: str) -> None:
    with pytest.raises(ConfigError, match="duplicate key 'name'"):
        workflow_from_text(text, fmt, source="dup")  # type: ignore[arg-type]


def test_json_nan_is_rejected() -> None:
    with pytest.raises(ConfigError, match="NaN is not a JSON number"):
        workflow_from_text('{"name": "x", "nodes": [], "schema_version": NaN}', "json")


def test_schema_errors_name_the_field_path_and_node(tmp_path: Path, data: Data) -> None:
    data["nodes"][3]["max_loops"] = 0
    data["nodes"][1]["timeout"] = 5
    path = tmp_path / "wf.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as info:
        load_workflow(path)
    message = str(info.value)
    assert f"{path} is not a valid workflow" in message
    assert "nodes[3].max_loops: Input should be greater than or equal to 1 (node 'gate')" in message
    assert "nodes[1].timeout: Extra inputs are not permitted (node 'builder')" in message


def test_unknown_node_kind_is_reported_at_its_index(data: Data) -> None:
    data["nodes"][1]["kind"] = "robot"
    with pytest.raises(ConfigError, match=r"nodes\[1\]: Input tag 'robot'"):
        workflow_from_text(json.dumps(data), "json")


def test_a_document_that_is_not_a_mapping_is_rejected() -> None:
    with pytest.raises(ConfigError, match="must hold a mapping") as info:
        workflow_from_text("- a\n- b\n", "yaml", source="list.yaml")
    assert "got: a list" in str(info.value)


def test_an_empty_document_is_rejected() -> None:
    with pytest.raises(ConfigError, match="got: an empty document"):
        workflow_from_text("", "yaml")


def test_semantic_problems_fail_the_load_unless_check_is_off(tmp_path: Path, data: Data) -> None:
    data["nodes"][1]["tools"] = ["teleport"]
    path = tmp_path / "wf.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"\(.*wf\.yaml\) has 1 problem:"):
        load_workflow(path)
    assert load_workflow(path, check=False).node("builder").tools == ("teleport",)  # type: ignore[union-attr]


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_workflow(tmp_path / "nope.yaml")


def test_a_binary_file_is_a_config_error_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "wf.yaml"
    path.write_bytes(b"name: x\n\xff\xfe")
    with pytest.raises(ConfigError, match=r"workflow file .*wf\.yaml is not UTF-8 text") as info:
        load_workflow(path)
    assert info.value.got == "byte b'\\xff' at offset 8" and "UTF-8" in str(info.value.fix)


@pytest.mark.parametrize("name", ["wf.txt", "wf", "wf.toml"])
def test_unknown_suffix_is_a_config_error(name: str) -> None:
    with pytest.raises(ConfigError, match="cannot tell the workflow format"):
        workflow_format(name)


def test_format_follows_the_suffix() -> None:
    assert [workflow_format(p) for p in ("a.yaml", "a.YML", "a.json")] == ["yaml", "yaml", "json"]
