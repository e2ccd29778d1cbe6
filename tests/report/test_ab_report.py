"""The A/B page of a real (offline) loop A/B recording: the harness records the native loops on
one brief with a scripted model (hybrid writes nothing on the small tier, so it fails the gate
there), builds the scoreboard, and the report shows the matrix with the gate, the promotion,
the ranking and the pairwise intervals."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from loopwright.report import detect_kind, render_report
from tests.report.probe import charts, marks, meta, section, table_rows, text_of

harness = pytest.importorskip("loopwright.harness", reason="the A/B harness (issue 8) is absent")

NATIVE = ("hybrid", "plan_execute", "react")
AB_CHARTS = {"ab-composite", "ab-correctness", "ab-ranking", "ab-pairwise"}


def _scripted(files: dict[str, str], write: bool) -> object:
    from loopwright.models import ModelResponse, ScriptedModel, ToolCall, Usage

    turns: list[int] = []

    def answer(messages: Sequence[object], tools: Sequence[object]) -> ModelResponse:
        if not tools:  # a planning call
            return ModelResponse("1. Do it.", (), Usage(400, 60), 0.0, "scripted", simulated=True)
        turns.append(1)
        if len(turns) == 1 and write:
            calls = tuple(
                ToolCall(f"w{i}", "write_file", json.dumps({"path": p, "content": c}))
                for i, (p, c) in enumerate(files.items())
            )
            return ModelResponse("", calls, Usage(800, 300), 0.0, "scripted", simulated=True)
        done = ToolCall("f", "finish", json.dumps({"summary": "done"}))
        return ModelResponse("", (done,), Usage(1200, 20), 0.0, "scripted", simulated=True)

    return ScriptedModel(answer)


@pytest.fixture(scope="module")
def ab_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from loopwright.runtime import Registries, Registry, default_registries
    from loopwright.sandbox import default_sandbox

    suite = harness.load_brief_suite()
    brief = suite.get("simple-wordfreq")
    files = {
        p.relative_to(brief.solution_dir).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(brief.solution_dir.rglob("*.py"))
    }

    def factory(cell: object) -> object:
        return _scripted(files, write=not (cell.loop == "hybrid" and cell.tier == "small"))  # type: ignore[attr-defined]

    base = default_registries()
    loops = Registry(base.loops.kind)
    for name in NATIVE:
        loops.add(name, base.loops.get(name))
    manifest = harness.Manifest(
        loops="all",
        tiers={"small": "openai/scripted-small", "medium": "openai/scripted-medium"},
        briefs=["simple-wordfreq"],
        repetitions=2,
        seed=7,
    )
    plan = harness.make_plan(manifest, registered=NATIVE, suite=suite)
    provenance = harness.Provenance(
        commit="c0ffee" * 6 + "abcd", dirty=False, loopwright_version="0.1.0"
    )
    out = tmp_path_factory.mktemp("ab") / "record"
    options = harness.RecordOptions(
        out=out,
        sandbox=default_sandbox("local"),
        models=harness.OfflineSource(factory),
        gateway=None,
        registries=Registries(base.tools, loops, base.functions, base.checks),
        provenance=provenance,
    )
    harness.record(plan, suite, options)
    scoreboard = harness.build_scoreboard(out, provenance)
    (out / "scoreboard.json").write_text(scoreboard.model_dump_json(indent=2), encoding="utf-8")
    return out


def test_the_ab_page_shows_the_matrix_with_the_gate(ab_dir: Path) -> None:
    assert detect_kind(ab_dir) == "ab"
    report = render_report(ab_dir)
    page = report.html
    assert report.kind == "ab" and report.simulated and not report.partial
    assert meta(page, "loopwright-report-kind") == "ab" and 'id="sim-banner"' in page
    found = charts(page)
    assert set(found) == AB_CHARTS
    assert all(marks(svg) > 0 for svg in found.values())
    scoreboard = json.loads((ab_dir / "scoreboard.json").read_text())
    assert marks(found["ab-composite"]) == len(scoreboard["cells"]) == 6  # 3 loops x 2 tiers
    failed = [c for c in scoreboard["cells"] if not c["gate_passed"]]
    assert [(c["loop"], c["tier"]) for c in failed] == [("hybrid", "small")]
    assert found["ab-composite"].count(">✗ ") == 1  # the cell text, not the caption


def test_the_ab_page_gives_promotion_ranking_and_intervals(ab_dir: Path) -> None:
    page = render_report(ab_dir).html
    scoreboard = json.loads((ab_dir / "scoreboard.json").read_text())
    promotion = text_of(section(page, "promotion"))
    for line in scoreboard["promotion"]["lines"]:
        assert line in promotion
    ranked = [r[1] for r in table_rows(section(page, "ranking"))]
    assert ranked == [r["loop"] for r in scoreboard["ranking"]]
    pairs = table_rows(section(page, "pairwise"))
    assert len(pairs) == len(scoreboard["pairwise"]) == 3
    stamp = text_of(page.split('id="stamp">', 1)[1].split("</div>", 1)[0])
    assert "commit c0ffeec0ffee" in stamp and "brief suite v" in stamp and "seed 7" in stamp


def test_a_recording_without_scoreboard_is_partial(ab_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "record"
    shutil.copytree(ab_dir, copy)
    (copy / "scoreboard.json").unlink()
    first = sorted(copy.glob("cells/*"))[0]
    shutil.rmtree(first)  # a cell that never finished
    report = render_report(copy)
    assert report.kind == "ab" and report.partial
    assert "11 of 12 runs recorded" in text_of(report.html.split('id="partial-banner"', 1)[1])
    assert len(table_rows(section(report.html, "cells"))) == 11


def test_the_ab_page_reads_version_1_cells_and_names_tamper_runs(
    ab_dir: Path, tmp_path: Path
) -> None:
    """Cells written before schema_version 2 read back as they are; a `tamper` run (version 2)
    is named in the cells table of the page built from the rebuilt scoreboard."""
    copy = tmp_path / "record"
    shutil.copytree(ab_dir, copy)
    paths = sorted(copy.glob("cells/*/result.json"))
    old = json.loads(paths[0].read_text())
    old["schema_version"] = 1
    paths[0].write_text(json.dumps(old))
    forged = json.loads(paths[1].read_text())
    forged.update(status="tamper", reason="tamper: __main__._run_one was replaced", correctness=0.0)
    paths[1].write_text(json.dumps(forged))
    scoreboard = harness.build_scoreboard(copy, harness.current_provenance())
    (copy / "scoreboard.json").write_text(scoreboard.model_dump_json(indent=2))
    cells = table_rows(section(render_report(copy).html, "cells"))
    tampered = [row for row in cells if "tamper" in row[3]]
    key = forged["cell"]
    assert [(r[0], r[1], r[2]) for r in tampered] == [(key["loop"], key["brief"], key["tier"])]
    assert tampered[0][3] == "2 (1 tamper)"


def test_an_invalid_scoreboard_is_a_config_error_naming_the_file(
    ab_dir: Path, tmp_path: Path
) -> None:
    from loopwright.errors import ConfigError

    copy = tmp_path / "record"
    shutil.copytree(ab_dir, copy)
    data = json.loads((copy / "scoreboard.json").read_text())
    del data["ranking"]
    (copy / "scoreboard.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"scoreboard\.json is not a valid scoreboard"):
        render_report(copy)
