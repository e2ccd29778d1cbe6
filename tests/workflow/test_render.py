from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest

from loopwright.errors import MissingDependencyError
from loopwright.workflow import Workflow, _render, builtin_workflow, render_svg, to_dot, to_mermaid

Data = dict[str, Any]

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)"
)


def test_mermaid_draws_every_node_with_its_shape(data: Data) -> None:
    text = to_mermaid(Workflow.model_validate(data))
    assert "flowchart TD" in text
    assert 'n0["study<br/>researcher · medium<br/>(frozen)"]' in text
    assert 'n1["builder<br/>builder · large"]' in text
    assert 'n2[["tests<br/>fn: run_visible_tests"]]' in text
    assert 'n3{"gate<br/>check: visible_tests_pass"}' in text


def test_mermaid_edges_and_dashed_reloop(data: Data) -> None:
    text = to_mermaid(Workflow.model_validate(data))
    assert "    n0 --> n1\n    n1 --> n2\n    n2 --> n3\n" in text
    assert '    n3 -.->|"RELOOP ≤3"| n1\n' in text
    assert "class n0 frozen" in text


def test_dot_draws_nodes_edges_and_dashed_reloop(data: Data) -> None:
    text = to_dot(Workflow.model_validate(data))
    assert text.startswith('digraph "sample" {')
    assert (
        '"study" [shape=box, peripheries=2, label="study\\nresearcher · medium\\n(frozen)"];'
        in text
    )
    assert '"tests" [shape=box, style="rounded", label="tests\\nfn: run_visible_tests"];' in text
    assert '"gate" [shape=diamond, label="gate\\ncheck: visible_tests_pass"];' in text
    assert '"study" -> "builder";' in text
    assert '"gate" -> "builder" [style=dashed, constraint=false, label="RELOOP ≤3"];' in text


def hostile(data: Data) -> Workflow:
    data["nodes"][1]["role"] = 'say "hi" <b>bold</b> & #1\nsecond line \\ end'
    return Workflow.model_validate(data)


def test_mermaid_escapes_quotes_angle_brackets_and_newlines(data: Data) -> None:
    text = to_mermaid(hostile(data))
    line = next(ln for ln in text.splitlines() if ln.startswith("    n1["))
    assert line == (
        '    n1["builder<br/>say #quot;hi#quot; #lt;b#gt;bold#lt;/b#gt; #amp; #35;1'
        '<br/>second line \\ end · large"]'
    )


def test_dot_escapes_quotes_and_newlines(data: Data) -> None:
    text = to_dot(hostile(data))
    assert 'label="builder\\nsay \\"hi\\" <b>bold</b> & #1\\nsecond line \\\\ end · large"' in text


@needs_dot
def test_dot_output_with_hostile_labels_parses(data: Data) -> None:
    done = subprocess.run(
        ["dot", "-Tcanon"], input=to_dot(hostile(data)), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "second line" in done.stdout


@needs_dot
def test_render_svg_draws_the_workflow() -> None:
    svg = render_svg(builtin_workflow("research-build-verify"))
    assert "<svg" in svg
    assert "gate_verify" in svg
    assert "RELOOP ≤3" in svg
    assert 'stroke-dasharray="5,2"' in svg  # the dashed RELOOP edge


def test_render_svg_without_graphviz_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_render.shutil, "which", lambda _name: None)
    with pytest.raises(MissingDependencyError, match="apt-get install graphviz"):
        render_svg(builtin_workflow("builder-only"))


def test_rendering_is_deterministic() -> None:
    wf = builtin_workflow("thorough")
    assert to_mermaid(wf) == to_mermaid(builtin_workflow("thorough"))
    assert to_dot(wf) == to_dot(builtin_workflow("thorough"))


def test_invalid_edges_are_left_out_of_drawings(data: Data) -> None:
    data["edges"].append({"source": "gate", "target": "ghost"})
    wf = Workflow.model_validate(data)
    assert "ghost" not in to_mermaid(wf)
    assert "ghost" not in to_dot(wf)
