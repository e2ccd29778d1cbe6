"""The outer loop as a workflow, and the same loop driven a step at a time.

`loopwright evolve` walks the built-in `outer-loop` workflow with the Runner; the
`outer-loop calibrate|evaluate|evolve|finalize|status|promote` commands are its nodes by hand.
Both must give the same run (and the same result.json) for the same seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from loopwright.cli import main
from loopwright.search import hand_designs, load_checkpoint
from loopwright.workflow import builtin_workflow, to_skill_md

SPLIT = ("--train", "l1-rle-decode,l1-slugify", "--holdout", "l1-ring-resize")
COMMON = ("--bench", "mini", "--seed-workflow", "builder-only", "--model", "sim",
          "--population", "3", "--generations", "2", "--seed", "5", "--holdout-reps", "1",
          "--sandbox", "local", *SPLIT)  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, out + err
    return out + err


def results(run_dir: Path) -> set[tuple[str, str, int, str, float]]:
    state = load_checkpoint(run_dir)
    return {
        (ind.id, r.task_id, r.repetition, r.split, r.score)
        for ind in state.individuals.values()
        for r in ind.results
    }


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_evolve_walks_the_outer_loop_workflow_and_the_steps_give_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = tmp_path / "whole"
    text = run(capsys, "evolve", *COMMON, "--run-dir", str(whole))
    assert "SIMULATED" in text and "stop reason: max_generations" in text

    walk = events(whole / "outer_loop" / "events.jsonl")
    visits = [e["node_id"] for e in walk if e["type"] == "node_end"]
    assert visits == ["seed", "evaluate", "reflect", "evolve", "gate_converge",
                      "evaluate", "reflect", "evolve", "gate_converge", "finalize"]  # fmt: skip
    gates = [e["decision"] for e in walk if e["type"] == "gate_decision"]
    assert gates == ["reloop", "proceed"]
    assert all(e["status"] == "ok" for e in walk if e["type"] == "node_end"
               and e["node_id"] != "gate_converge")  # fmt: skip

    result = json.loads((whole / "result.json").read_text())
    state = load_checkpoint(whole)
    assert result["schema_version"] == 3
    assert result["model"] == "sim" and result["simulated"] is True
    assert result["stop_reason"] == state.stop_reason == "max_generations"
    assert result["winner"]["id"] == state.winner_id
    assert result["generations"] == len(state.summaries) == 2
    assert result["holdout_gain"]["n_tasks"] == 1

    # The same run, one node at a time from the command line.
    steps = tmp_path / "steps"
    run(capsys, "outer-loop", "calibrate", "--run-dir", str(steps), *COMMON)
    for _ in range(2):
        run(capsys, "outer-loop", "evaluate", "--run-dir", str(steps))
        run(capsys, "outer-loop", "evolve", "--run-dir", str(steps))
    assert results(steps) == results(whole)
    assert load_checkpoint(steps).winner_id == state.winner_id

    # finalize writes the same result.json as evolve (but for the wall clock) and the report.
    assert not (steps / "result.json").exists()
    final = run(capsys, "outer-loop", "finalize", "--run-dir", str(steps))
    assert "stop reason: max_generations" in final and "result written to" in final
    stepped = json.loads((steps / "result.json").read_text())
    for data in (stepped, result):
        data["spent"].pop("wall_s")
    assert stepped == result
    assert (steps / "report.html").is_file()

    status = run(capsys, "outer-loop", "status", "--run-dir", str(steps))
    assert "stop reason: max_generations" in status and "holdout [SIMULATED]: winner" in status

    library = tmp_path / "library"
    promoted = run(capsys, "outer-loop", "promote", "--run-dir", str(steps), "evolved",
                   "--force", "--library", str(library))  # fmt: skip
    assert "promoted" in promoted
    saved = yaml.safe_load((library / "evolved.yaml").read_text())
    assert saved["name"] == "evolved"
    provenance = json.loads((library / "evolved.provenance.json").read_text())
    assert provenance["schema_version"] == 1 and provenance["forced"] is True
    assert provenance["individual_id"] == state.winner_id
    assert provenance["holdout_gain"]["n_tasks"] == 1

    # The promoted workflow is used by name, and shown with where it came from.
    monkeypatch.setenv("LOOPWRIGHT_WORKFLOW_LIBRARY", str(library))
    shown = run(capsys, "workflow", "show", "evolved")
    assert f"from run {steps.resolve()}" in shown and "holdout gain over the seed" in shown
    used = run(capsys, "run", "evolved", "--bench", "mini", "--tasks", "l1-slugify",
               "--sandbox", "local", "--run-dir", str(tmp_path / "use"))  # fmt: skip
    assert "evolved" in used


def test_finalize_runs_the_hand_designs_a_stepped_run_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--compare-designs` set at `outer-loop calibrate` is honoured at `finalize`, as `evolve`
    honours it at its end: the designs run on the holdout, once, and result.json names the
    best. (finalize used to write the result straight from the checkpoint: no designs.)"""
    steps = tmp_path / "steps"
    argv = [a if a != "2" else "1" for a in COMMON]  # one generation is enough here
    run(capsys, "outer-loop", "calibrate", "--run-dir", str(steps), *argv, "--compare-designs")
    run(capsys, "outer-loop", "evaluate", "--run-dir", str(steps))
    run(capsys, "outer-loop", "evolve", "--run-dir", str(steps))
    run(capsys, "outer-loop", "finalize", "--run-dir", str(steps), "--no-report")
    data = json.loads((steps / "result.json").read_text())
    designs = data["hand_designs"]["designs"]
    assert [d["name"] for d in designs] == list(hand_designs())
    assert all(d["runs"] == 1 and d["holdout"] is not None for d in designs)
    assert data["hand_designs"]["best"] in hand_designs()
    finished = [e for e in events(steps / "progress.jsonl") if e["event"] == "design_evaluated"]
    assert len(finished) == len(hand_designs())

    # a second finalize runs no design again and writes the same figures
    again = run(capsys, "outer-loop", "finalize", "--run-dir", str(steps), "--no-report")
    assert "result written to" in again
    assert json.loads((steps / "result.json").read_text())["hand_designs"] == data["hand_designs"]
    assert not list((steps / "designs").glob("*/*/rep_1"))
    later = [e for e in events(steps / "progress.jsonl") if e["event"] == "design_evaluated"]
    counts = [(e["name"], e["runs"], e["cached"]) for e in later]
    assert counts[len(finished) :] == counts[: len(finished)]  # nothing ran or was served again


def test_finalize_refuses_a_run_that_has_not_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "outer-loop", "calibrate", "--run-dir", str(tmp_path), *COMMON)
    code = main(["outer-loop", "finalize", "--run-dir", str(tmp_path)])
    text = "".join(capsys.readouterr())
    assert code == 2 and "has not stopped" in text and "outer-loop evaluate" in text
    assert not (tmp_path / "result.json").exists()


def test_an_ephemeral_mode_file_runs_by_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "outer-loop", "calibrate", "--run-dir", str(tmp_path / "r"), *COMMON)
    mode = sorted((tmp_path / "r" / "modes").glob("evolve-gen0-*.json"))[0]
    used = run(capsys, "run", str(mode), "--bench", "mini", "--tasks", "l1-slugify",
               "--sandbox", "local", "--run-dir", str(tmp_path / "use"))  # fmt: skip
    assert "Extra inputs" not in used
    shown = run(capsys, "workflow", "show", str(mode))
    assert f"source: file: {mode}" in shown


def test_a_step_out_of_order_is_refused_with_the_next_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "outer-loop", "calibrate", "--run-dir", str(tmp_path), *COMMON)
    code = main(["outer-loop", "evolve", "--run-dir", str(tmp_path)])
    text = "".join(capsys.readouterr())
    assert code == 2 and "outer-loop evaluate" in text


def test_the_outer_loop_exports_as_a_skill_naming_each_command() -> None:
    text = to_skill_md(builtin_workflow("outer-loop"))
    for command in ("outer-loop calibrate", "outer-loop evaluate", "outer-loop reflect",
                    "outer-loop evolve", "outer-loop status", "outer-loop finalize",
                    "outer-loop promote"):  # fmt: skip
        assert command in text
    assert "at most 1000 time(s)" in text


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "outer-loop", "--bench", "mini", "--tasks", "l1-slugify"),
        ("evolve", "--bench", "mini", "--seed-workflow", "outer-loop"),
    ],
    ids=["run", "evolve"],
)
def test_the_outer_loop_is_not_a_task_workflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code = main([*argv, "--run-dir", str(tmp_path / "r")])
    text = "".join(capsys.readouterr())
    assert code == 2 and "outer loop itself" in text and "fix:" in text
    assert not (tmp_path / "r" / "checkpoint.json").exists()


def test_calibrate_takes_every_setting_a_whole_run_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Budgets, repetitions and selection settings given to `outer-loop calibrate` are the
    run's, as they would be for `evolve` (the later steps read them from the checkpoint)."""
    steps = tmp_path / "steps"
    run(capsys, "outer-loop", "calibrate", "--run-dir", str(steps), *COMMON,
        "--reps", "2", "--tournament-k", "2", "--elitism", "1", "--overfit-gap", "0.3",
        "--calibration-reps", "2", "--max-evaluations", "40", "--max-train-evaluations", "30",
        "--max-usd", "5", "--max-wall-s", "600", "--target-score", "0.99", "--plateau", "3")  # fmt: skip
    config = load_checkpoint(steps).config
    assert (config.repetitions, config.tournament_k, config.elitism) == (2, 2, 1)
    assert config.overfit_gap == 0.3 and config.calibration.repetitions == 2
    b = config.budgets
    assert (b.max_generations, b.max_evaluations, b.max_train_evaluations) == (2, 40, 30)
    assert (b.max_usd, b.max_wall_s, b.target_score, b.plateau_generations) == (5, 600, 0.99, 3)
