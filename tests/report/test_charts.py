"""The drawing primitives: ticks, colours, charts, workflow graphs and workflow changes."""

from __future__ import annotations

import shutil

import pytest

from loopwright.report.charts._graph import draw_workflow, workflow_changes
from loopwright.report.charts._heat import HeatCell, HeatGrid, heat_grid
from loopwright.report.charts._svg import Point, Series, line_chart, nice_ticks, score_color
from loopwright.workflow import AgentNode, builtin_workflow
from tests.report.probe import marks


def test_ticks_are_round_and_cover_the_range() -> None:
    assert [t for _, t in nice_ticks(0.0, 1.0)] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]
    assert [t for _, t in nice_ticks(-0.05, 0.3)] == ["0.0", "0.1", "0.2", "0.3"]
    assert [t for _, t in nice_ticks(-0.12, 0.1, 4)] == ["-0.1", "0.0", "0.1"]
    assert [t for _, t in nice_ticks(-0.1, 0.2, 6)] == [
        "-0.10",
        "-0.05",
        "0.00",
        "0.05",
        "0.10",
        "0.15",
        "0.20",
    ]
    assert [t for _, t in nice_ticks(0.0, 4.3, 4, prefix="$")] == ["$0", "$2", "$4"]
    assert [t for _, t in nice_ticks(0.0, 0.53, 6, " s")][:2] == ["0.0 s", "0.1 s"]


def test_score_colours_run_from_dark_to_yellow_and_clamp() -> None:
    assert score_color(0.0) == "#440154" and score_color(1.0) == "#fde725"
    assert score_color(-3) == score_color(0.0) and score_color(7) == score_color(1.0)
    assert score_color(0.5) == "#21918c"


def test_a_line_chart_draws_a_dot_per_value_and_breaks_at_gaps() -> None:
    points = (Point(0, 0.2), Point(1, None), Point(2, 0.4), Point(3, 0.5, 0.3, 0.7))
    svg = line_chart([Series("s", "#000", points)], label="x", x_ticks=[(0, "0")])
    assert marks(svg) == 3
    assert svg.count("<polyline") == 1  # 0.2 stands alone; 0.4 -> 0.5 is one line
    assert svg.count('stroke-width="1.5" fill="none" opacity') == 1  # one interval bar


def test_heat_grid_draws_the_given_cells_and_escapes_labels() -> None:
    grid = HeatGrid(
        rows=("<script>alert(1)</script>", "b"),
        cols=("c1", "c2", "c3"),
        cells={(0, 0): HeatCell(0.5, "0.50", "t"), (1, 2): HeatCell(None, "inv", "t")},
    )
    svg = heat_grid(grid, label="grid")
    assert marks(svg) == 2
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_workflow_changes_name_added_removed_and_changed_parts() -> None:
    seed, rbv = builtin_workflow("builder-only"), builtin_workflow("research-build-verify")
    changes = {(c.kind, c.subject) for c in workflow_changes(seed, rbv)}
    assert {("added", "node study"), ("added", "node gate_verify")} <= changes
    assert {("added", "edge study → builder"), ("added", "edge builder → gate_verify")} <= changes
    back = {(c.kind, c.subject) for c in workflow_changes(rbv, seed)}
    assert ("removed", "node study") in back
    assert workflow_changes(seed, seed) == []


def test_a_changed_prompt_and_model_are_shown_with_a_diff() -> None:
    seed = builtin_workflow("builder-only")
    node = seed.nodes[0]
    assert isinstance(node, AgentNode)
    edited = node.model_copy(
        update={"prompt": node.prompt + "\nCheck every edge case.\n", "model": "large"}
    )
    [change] = workflow_changes(seed, seed.model_copy(update={"nodes": (edited,)}))
    assert change.kind == "changed" and change.subject == f"node {node.id}"
    assert "model: medium → large" in change.details
    assert "+Check every edge case." in change.prompt_diff


@pytest.mark.parametrize("use_dot", [True, False])
def test_workflow_drawings_show_every_node_and_the_reloop(use_dot: bool) -> None:
    if use_dot and shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` is not installed")
    wf = builtin_workflow("research-build-verify")
    drawing = draw_workflow(wf, "t", {"study": "#d3f2d8"}, use_dot=use_dot)
    assert drawing.engine == ("graphviz" if use_dot else "builtin")
    assert drawing.svg.startswith("<svg") and drawing.svg.rstrip().endswith("</svg>")
    for node in wf.nodes:
        assert f"<title>{node.id}</title>" in drawing.svg
    assert "RELOOP ≤3" in drawing.svg and "#d3f2d8" in drawing.svg
