"""Calibration warns when it keeps fewer than 10 training or 3 holdout tasks, and
--min-train/--min-holdout refuse such a split before generation 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loopwright._caller import called_from_cli
from loopwright.cli import main
from loopwright.errors import UsageError
from loopwright.search._split_size import expected_half_width, require_sizes, split_warnings
from loopwright.tasks import load_benchmark

TASKS = ("l1-interval-merge", "l1-ring-resize", "l1-rle-decode", "l1-roman-numerals",
         "l1-semver-compare")  # fmt: skip


def test_enough_tasks_give_no_warning() -> None:
    assert split_warnings(10, [0.5, 0.5, 0.5], 3) == ()


def test_a_small_split_says_the_width_to_expect_and_how_to_get_more() -> None:
    (text,) = split_warnings(6, [0.5, 0.5, 0.5], 3)
    assert "only 6 training and 3 holdout" in text and "fewer than 10 training" in text
    assert "+/-0.46" in text  # 1.96 * sqrt(2 * 0.25 / 3) / sqrt(3)
    assert "cannot exclude zero unless every holdout task improves" in text
    ways = ("calibration.band_low", "add tasks", "calibration.repetitions", "holdout_repetitions",
            "calibration.min_train")  # fmt: skip
    for way in ways:  # a Python caller's words: the EvolveConfig fields, no flag
        assert way in text and "--" not in text
    with called_from_cli():
        (text,) = split_warnings(6, [0.5, 0.5, 0.5], 3)
    for way in ("--band", "add tasks", "--calibration-reps", "--holdout-reps", "--min-train"):
        assert way in text and "calibration.repetitions" not in text


def test_the_expected_width_narrows_with_tasks_and_repetitions() -> None:
    three = expected_half_width([0.5] * 3, 3)
    assert three is not None
    assert expected_half_width([0.5] * 12, 3) == pytest.approx(three / 2)
    assert expected_half_width([0.5] * 3, 12) == pytest.approx(three / 2)
    assert expected_half_width([], 3) is None


def test_few_holdout_tasks_alone_are_warned_about() -> None:
    (text,) = split_warnings(12, [0.4, 0.6], 3)
    assert "fewer than 3 holdout" in text and "fewer than 10 training" not in text


def test_minimums_refuse_a_split_below_them() -> None:
    require_sizes(6, 3, 6, 3, "")
    with pytest.raises(UsageError) as err:
        require_sizes(6, 3, 10, None, "widen the band")
    text = err.value.render()
    assert "fewer than calibration.min_train 10" in text and "widen the band" in text
    with pytest.raises(UsageError, match="too few tasks"):
        require_sizes(6, 1, None, 2, "")


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five mini tasks, and beside them the fitness cache both CLI tests share (the second
    calibration is read from it)."""
    folder = tmp_path_factory.mktemp("small") / "bench"
    for task in load_benchmark("mini").tasks:
        if task.id in TASKS:
            shutil.copytree(task.root, folder / task.id)
    return folder


def calibrate(run_dir: Path, bench: Path, *extra: str) -> list[str]:
    return ["outer-loop", "calibrate", "--run-dir", str(run_dir), "--bench", str(bench),
            "--seed-workflow", "builder-only", "--model", "sim", "--population", "2",
            "--sandbox", "local", "--band", "0.1,0.9", "--cache", str(bench.parent / "cache.db"),
            *extra]  # fmt: skip


def test_calibration_warns_in_the_cli_and_records_it_in_the_run(
    tmp_path: Path, small_bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main(calibrate(run, small_bench)) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "fewer than 10 training" in " ".join(err.split())
    recorded = json.loads((run / "calibration.json").read_text())["warnings"]
    assert len(recorded) == 1 and "fewer than 10 training" in recorded[0]
    events = [json.loads(x) for x in (run / "progress.jsonl").read_text().splitlines()]
    (finished,) = [e for e in events if e["event"] == "calibration_finished"]
    assert finished["calibration"]["warnings"] == recorded


def test_min_train_refuses_before_generation_0(
    tmp_path: Path, small_bench: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main(calibrate(run, small_bench, "--min-train", "10")) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "fewer than --min-train 10" in err and "widen the band" in err
    assert "Traceback" not in err
    assert (run / "calibration.json").is_file()
    assert not (run / "checkpoint.json").exists()


def test_the_report_shows_the_calibration_warning() -> None:
    from loopwright.report.pages._evolve import calibration_section
    from loopwright.search import Calibration

    cal = Calibration(seed_workflow="s", band=(0.3, 0.7), repetitions=3, rows=(),
                      warnings=split_warnings(2, [0.5], 3))  # fmt: skip
    section = calibration_section(cal)
    assert "<strong>Warning:</strong> calibration kept only 2 training" in section.body
