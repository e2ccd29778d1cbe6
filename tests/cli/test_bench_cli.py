from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.tasks import load_benchmark
from tests.taskfactory import make_calc_task


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_list_shows_mini(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "bench", "list", "--json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["mini"]["tasks"] >= 12


def test_validate_unknown_benchmark_is_a_user_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "bench", "validate", "no-such-bench")
    assert code == 2
    assert "unknown benchmark 'no-such-bench'" in err
    assert "mini" in err
    assert "Traceback" not in err


def test_validate_task_missing_instruction_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = make_calc_task(tmp_path)
    (task.root / "instruction.md").unlink()
    code, _, err = run(capsys, "bench", "validate", str(tmp_path))
    assert code == 2
    assert "instruction.md is missing" in err
    assert "Traceback" not in err


def test_validate_task_missing_hidden_tests_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = make_calc_task(tmp_path)
    shutil.rmtree(task.hidden_tests_dir)
    code, _, err = run(capsys, "bench", "validate", str(tmp_path))
    assert code == 2
    assert "tests/ is missing or empty" in err
    assert "Traceback" not in err


def test_validate_malformed_task_toml_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = make_calc_task(tmp_path)
    (task.root / "task.toml").write_text("level = = 1")
    code, _, err = run(capsys, "bench", "validate", str(task.root))
    assert code == 2
    assert "task.toml is not valid TOML" in err


def test_validate_good_folder_passes_with_json_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_calc_task(tmp_path)
    code, out, _ = run(capsys, "bench", "validate", str(tmp_path), "--json")
    assert code == 0
    rows = {r["variant"]: r for r in json.loads(out)}
    assert set(rows) == {"gold", "only-mul", "untouched"}
    assert (rows["gold"]["f2p_passed"], rows["gold"]["f2p_total"], rows["gold"]["resolved"]) == (
        6,
        6,
        True,
    )
    assert rows["only-mul"]["score"] == 0.5 and rows["only-mul"]["ok"]
    assert rows["untouched"]["score"] == 0.0 and not rows["untouched"]["invalid"]


def test_validate_fails_and_names_the_task_whose_gold_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_calc_task(tmp_path, "good-task")
    bad = make_calc_task(tmp_path, "bad-task")
    (bad.root / "solution" / "calc" / "core.py").write_text("def add(a, b):\n    return a + b\n")
    code, out, _ = run(capsys, "bench", "validate", str(tmp_path))
    assert code == 1
    assert "failed validation: bad-task" in out
    assert "good-task" not in out.split("failed validation:")[1]


def test_validate_fails_when_a_flawed_variant_scores_full_marks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = make_calc_task(tmp_path)
    shutil.copy(
        task.root / "solution" / "calc" / "core.py", task.root / "flawed" / "only-mul" / "calc"
    )
    code, out, _ = run(capsys, "bench", "validate", str(tmp_path), "--json")
    assert code == 1
    rows = {r["variant"]: r for r in json.loads(out)}
    assert not rows["only-mul"]["ok"]
    assert "expected score < 1.0" in rows["only-mul"]["problem"]


@pytest.mark.slow
def test_mini_validates_and_a_broken_gold_in_a_copy_fails_naming_the_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "bench", "validate", "mini", "--json")
    rows = json.loads(out)
    assert code == 0, [r for r in rows if not r["ok"]]
    assert all(r["ok"] for r in rows)
    mini = load_benchmark("mini")
    copy = tmp_path / "mini-copy"
    shutil.copytree(mini.root, copy)
    victim = mini.tasks[0]
    for path in (copy / victim.id / "solution").rglob("*.py"):
        path.write_text("raise ImportError('broken on purpose')\n")
    code, out, _ = run(capsys, "bench", "validate", str(copy))
    assert code == 1
    assert f"failed validation: {victim.id}" in out


def test_validate_names_the_test_file_that_could_not_be_collected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = make_calc_task(tmp_path)
    (task.hidden_tests_dir / "test_ops_hidden.py").write_text("def broken(:\n")
    code, out, _ = run(capsys, "bench", "validate", str(tmp_path), "--json")
    assert code == 1
    rows = {r["variant"]: r for r in json.loads(out)}
    assert "collection errors: tests/test_ops_hidden.py" in rows["gold"]["problem"]
