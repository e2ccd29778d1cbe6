from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from loopwright.cli import main
from loopwright.workflow import _render, builtin_workflow, workflow_from_text, workflow_hash
from tests.workflow.samples import sample_data

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["workflow", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, data: dict[str, Any], name: str = "wf.yaml") -> Path:
    path = tmp_path / name
    text = json.dumps(data) if name.endswith(".json") else yaml.safe_dump(data, sort_keys=False)
    path.write_text(text)
    return path


def test_list_shows_the_builtins_with_node_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list")
    assert code == 0
    for name in ("builder-only", "research-build-verify", "thorough"):
        assert name in out
    code, out, _ = run(capsys, "list", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert (rows["builder-only"]["nodes"], rows["thorough"]["nodes"]) == (1, 5)
    assert rows["research-build-verify"]["description"]


def test_validate_a_builtin_prints_ok_and_hash(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "research-build-verify")
    digest = workflow_hash(builtin_workflow("research-build-verify"))
    assert code == 0
    assert out == f"ok research-build-verify (3 nodes, hash {digest[:12]})\n"


def test_validate_a_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", str(write(tmp_path, sample_data())))
    assert code == 0
    assert out.startswith("ok sample (4 nodes, hash ")


def test_validate_prints_each_problem_on_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = sample_data()
    data["nodes"][1]["tools"] = ["teleport"]
    data["nodes"][3]["reloop_to"] = "ghost"
    path = write(tmp_path, data)
    code, out, err = run(capsys, "validate", str(path))
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert f"error: workflow 'sample' ({path}) has 2 problems:" in lines
    assert any(ln.startswith("  - node 'builder': unknown tool 'teleport'") for ln in lines)
    assert any(ln.startswith("  - node 'gate': reloop_to 'ghost' is not a node") for ln in lines)
    assert "Traceback" not in err


def test_validate_json_reports_issues_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = sample_data()
    data["edges"].append({"source": "gate", "target": "nowhere"})
    code, out, _ = run(capsys, "validate", str(write(tmp_path, data)), "--json")
    report = json.loads(out)
    assert code == 2
    assert report["valid"] is False
    assert [i["code"] for i in report["issues"]] == ["dangling_edge"]
    assert report["issues"][0]["where"] == "edge gate -> nowhere"
    assert len(report["hash"]) == 64


def test_validate_json_of_a_valid_workflow(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "thorough", "--json")
    report = json.loads(out)
    assert code == 0
    assert report == {
        "valid": True,
        "name": "thorough",
        "issues": [],
        "hash": workflow_hash(builtin_workflow("thorough")),
    }


def test_malformed_yaml_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nnodes:\n  - id: a\n   kind: agent\n")
    code, out, err = run(capsys, "validate", str(path))
    assert code == 2
    assert out == ""
    assert f"{path} is not valid YAML" in err
    assert "line 4" in err
    assert "Traceback" not in err


def test_schema_error_exits_2_with_the_field_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = sample_data()
    data["nodes"][3]["max_loops"] = 0
    code, _, err = run(capsys, "validate", str(write(tmp_path, data, "wf.json")))
    assert code == 2
    assert "nodes[3].max_loops: Input should be greater than or equal to 1" in err
    assert "Traceback" not in err


def test_unknown_name_lists_the_builtins(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "validate", "no-such-flow")
    assert code == 2
    assert (
        "'no-such-flow' is neither a built-in workflow, a library workflow nor a workflow file"
        in err
    )
    assert "builder-only, outer-loop, research-build-verify, thorough" in err


def test_show_prints_nodes_edges_and_gates(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "research-build-verify")
    assert code == 0
    for text in ("study", "researcher", "builder", "gate_verify", "react", "medium", "write_notes"):
        assert text in out
    assert "edges: study -> builder, builder -> gate_verify" in out
    assert "gate gate_verify: check visible_tests_pass; on failure RELOOP to builder" in out


def test_show_marks_frozen_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", str(write(tmp_path, sample_data())))
    assert code == 0
    assert "frozen" in out
    assert "run_visible_tests(verbose=True)" in out


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_show_yaml_and_json_round_trip(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, _ = run(capsys, "show", "thorough", "--format", fmt)
    assert code == 0
    assert workflow_from_text(out, fmt) == builtin_workflow("thorough")  # type: ignore[arg-type]


def test_show_mermaid(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "thorough", "-f", "mermaid")
    assert code == 0
    assert "flowchart TD" in out
    assert '-.->|"RELOOP ≤3"|' in out


def test_show_refuses_an_invalid_workflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = sample_data()
    data["frozen"] = ["ghost"]
    code, out, err = run(capsys, "show", str(write(tmp_path, data)))
    assert code == 2
    assert out == ""
    assert "frozen: 'ghost' is not a node" in err


def test_render_mermaid_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "render", "research-build-verify")
    assert code == 0
    assert out.startswith("%% research-build-verify")
    assert 'n2 -.->|"RELOOP ≤3"| n1' in out


def test_render_dot_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "flow.dot"
    code, out, _ = run(capsys, "render", "thorough", "--format", "dot", "-o", str(target))
    assert code == 0
    assert out == f"wrote {target} (dot)\n"
    assert '"gate_verify" -> "builder" [style=dashed' in target.read_text()


@needs_dot
def test_render_svg_to_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "flow.svg"
    code, _, _ = run(capsys, "render", "thorough", "--format", "svg", "-o", str(target))
    assert code == 0
    assert "<svg" in target.read_text()


def test_render_svg_without_graphviz_exits_2_with_a_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_render.shutil, "which", lambda _name: None)
    code, out, err = run(capsys, "render", "thorough", "--format", "svg")
    assert code == 2
    assert out == ""
    assert "apt-get install graphviz" in err


def test_unknown_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "render", "thorough", "--format", "png")
    assert code == 2
    assert "png" in err
