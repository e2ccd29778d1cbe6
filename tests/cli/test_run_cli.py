from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from loopwright.cli import main
from tests.taskfactory import GOLD, make_calc_task


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def gold_script(path: Path) -> Path:
    script = {
        "replies": [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "calc/core.py", "content": GOLD}}
                ]
            },
            {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]},
        ]
    }
    path.write_text(yaml.safe_dump(script))
    return path


def test_run_with_a_scripted_model_writes_the_run_and_prints_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_calc_task(tmp_path / "bench")
    script = gold_script(tmp_path / "script.yaml")
    run_dir = tmp_path / "run"
    code, out, _ = run(
        capsys, "run", "builder-only", "--bench", str(tmp_path / "bench"),
        "--model", f"scripted:{script}", "--run-dir", str(run_dir), "--json",
    )  # fmt: skip
    assert code == 0
    summary = json.loads(out)
    assert summary["simulated"] is True
    [wf] = summary["workflows"]
    assert wf["workflow"] == "builder-only"
    [row] = wf["tasks"]
    assert (row["task"], row["level"], row["mean_score"], row["resolved"]) == (
        "calc-ops",
        1,
        1.0,
        1,
    )
    assert wf["aggregate"]["mean_score"] == 1.0
    # the run directory as documented
    assert (run_dir / "config.yaml").is_file() and (run_dir / "summary.json").is_file()
    rep = run_dir / "builder-only" / "calc-ops" / "rep_0"
    for name in ("events.jsonl", "grade.json", "record.json", "diff.patch", "instruction.md"):
        assert (rep / name).is_file(), name
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["config"]["settings"]["model"] == f"scripted:{script}"
    assert (
        config["config"]["tasks"] == ["calc-ops"]
        and config["schema_version"] == 3
        and config["caller"] == "cli"
    )


def test_run_with_sim_says_simulated_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "run", "builder-only", "--bench", "mini", "--tasks", "l1-roman-numerals",
        "--run-dir", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 0
    assert "SIMULATED" in err  # the banner
    assert "builder-only [SIMULATED]" in out
    assert "SIMULATED" in out.splitlines()[-1]


def test_run_refuses_unknown_task_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        capsys, "run", "builder-only", "--bench", "mini", "--tasks", "nope,l1-slugify"
    )
    assert code == 2
    assert "unknown task id(s) in --tasks: nope" in err and "in tasks" not in err


def test_run_refuses_a_non_empty_run_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "x").write_text("")
    code, _, err = run(
        capsys, "run", "builder-only", "--bench", "mini", "--run-dir", str(tmp_path / "run")
    )
    assert code == 2
    assert "already exists and is not empty" in err


def test_run_refuses_an_unknown_model_before_writing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    code, _, err = run(
        capsys,
        "run",
        "builder-only",
        "--bench",
        "mini",
        "--model",
        "gpt-99",
        "--run-dir",
        str(run_dir),
    )
    assert code == 2
    assert "sim" in err and "Traceback" not in err
    assert not run_dir.exists()


def test_run_refuses_an_unknown_workflow(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "no-such-workflow", "--bench", "mini")
    assert code == 2
    assert "builder-only" in err


def test_run_with_an_agent_that_deletes_git_exits_normally_with_a_tamper_grade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_calc_task(tmp_path / "bench")
    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump(
            {
                "replies": [
                    {"tool_calls": [{"name": "write_file",
                                     "arguments": {"path": "calc/core.py", "content": GOLD}}]},
                    {"tool_calls": [{"name": "run_command",
                                     "arguments": {"command": "rm -rf .git"}}]},
                    {"tool_calls": [{"name": "finish", "arguments": {"summary": "done"}}]},
                ]
            }
        )
    )  # fmt: skip
    run_dir = tmp_path / "run"
    code, out, _ = run(
        capsys, "run", "builder-only", "--bench", str(tmp_path / "bench"), "--sandbox", "local",
        "--model", f"scripted:{script}", "--run-dir", str(run_dir), "--json",
    )  # fmt: skip
    assert code == 0
    [wf] = json.loads(out)["workflows"]
    [row] = wf["tasks"]
    assert row["resolved"] == 0
    grade = json.loads((run_dir / "builder-only" / "calc-ops" / "rep_0" / "grade.json").read_text())
    assert grade["invalid"] and grade["invalid_reason"].startswith("tamper:")
