"""An evaluator named by reference (`evaluator = "package.module:function"` in task.toml) is
imported where it grades: so function-graded tasks run from the CLI, which registers nothing,
and on a Ray worker, which is not forked from the process that registered one (registered
functions are shipped there with the jobs). One that cannot be imported is one error up front
naming the task, the module and the fix, with nothing written."""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path

import pytest
import yaml

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.scoring import check_evaluators, evaluator_key, resolve_evaluator
from loopwright.tasks import load_task
from tests.taskfactory import GOLD, REPO, write_files

METRIC = """
from loopwright.scoring import Assessment, Check

evaluator_version = "7"


def grade(sub):
    source = sub.read_text("calc/core.py")
    checks = (Check(name="defines mul", passed="def mul" in source),
              Check(name="defines div", passed="def div" in source))
    passed = sum(c.passed for c in checks)
    return Assessment(score=passed / 2, checks=checks, feedback=f"{passed}/2 by reference")


grade.evaluator_version = "7"
not_a_function = 3
"""


def metric_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of its own name on sys.path (a fresh name: nothing cached in sys.modules)."""
    name = f"lwref_{uuid.uuid4().hex[:10]}"
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / f"{name}.py").write_text(textwrap.dedent(METRIC))
    monkeypatch.syspath_prepend(str(mods))
    return name


def task_dir(bench: Path, evaluator: str) -> Path:
    root = bench / "calc-ref"
    write_files(root / "repo", {k: v for k, v in REPO.items() if not k.startswith("tests/")})
    (root / "instruction.md").write_text("Add `mul(a, b)` and `div(a, b)` to `calc/core.py`.\n")
    (root / "task.toml").write_text(
        'schema_version = 1\nid = "calc-ref"\nlevel = 1\n\n'
        f'[grading]\nrunner = "function"\nevaluator = "{evaluator}"\n'
    )
    return root


def gold_script(path: Path) -> Path:
    write = {"name": "write_file", "arguments": {"path": "calc/core.py", "content": GOLD}}
    finish = {"name": "finish", "arguments": {"summary": "done"}}
    path.write_text(
        yaml.safe_dump({"replies": [{"tool_calls": [write]}, {"tool_calls": [finish]}]})
    )
    return path


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_grades_a_task_whose_evaluator_is_a_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    name = metric_module(tmp_path, monkeypatch)
    task_dir(tmp_path / "bench", f"{name}:grade")
    run_dir = tmp_path / "run"
    code, out, err = cli(
        capsys, "run", "builder-only", "--bench", str(tmp_path / "bench"),
        "--model", f"scripted:{gold_script(tmp_path / 's.yaml')}", "--run-dir", str(run_dir),
        "--json",
    )  # fmt: skip
    assert code == 0, err
    [wf] = json.loads(out)["workflows"]
    assert wf["tasks"][0]["mean_score"] == 1.0
    record = json.loads(
        (run_dir / "builder-only" / "calc-ref" / "rep_0" / "record.json").read_text()
    )
    assert [t["id"] for t in record["grade"]["tests"]] == ["defines mul", "defines div"]
    assert record["grade"]["feedback"] == "2/2 by reference"
    key = evaluator_key(f"{name}:grade")
    assert key.startswith(f"{name}:grade:7:")  # its evaluator_version, and its source's hash


@pytest.mark.parametrize(
    ("reference", "what", "got"),
    [
        ("lwref_nosuchmodule:grade", "cannot be imported", "ModuleNotFoundError"),
        ("{mod}:nosuch", "does not exist", "has no nosuch"),
        ("{mod}:not_a_function", "is not a function", "int"),
        ("just-a-name", "no evaluator is registered under 'just-a-name'", "registered:"),
    ],
)
def test_an_evaluator_that_cannot_be_found_stops_the_cli_before_anything_is_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reference: str,
    what: str,
    got: str,
) -> None:
    reference = reference.format(mod=metric_module(tmp_path, monkeypatch))
    task_dir(tmp_path / "bench", reference)
    run_dir = tmp_path / "run"
    code, _, err = cli(
        capsys, "run", "builder-only", "--bench", str(tmp_path / "bench"),
        "--model", f"scripted:{gold_script(tmp_path / 's.yaml')}", "--run-dir", str(run_dir),
    )  # fmt: skip
    assert code == 2 and not run_dir.exists()
    assert f"task calc-ref is graded by the evaluator {reference!r}: " in err and what in err
    assert "Traceback" not in err and got in err and "fix:" in err
    if "cannot be imported" in what:
        assert "PYTHONPATH" in err


def test_a_registered_name_wins_over_a_reference_and_check_evaluators_passes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loopwright.scoring import register_evaluator, unregister_evaluator

    name = metric_module(tmp_path, monkeypatch)
    task = load_task(task_dir(tmp_path / "bench", f"{name}:grade"))
    check_evaluators([task])
    by_reference = resolve_evaluator(f"{name}:grade")
    assert by_reference.__module__ == name

    def mine(sub: object) -> float:
        return 0.5

    register_evaluator(f"{name}:grade", mine)
    try:
        assert resolve_evaluator(f"{name}:grade") is mine
    finally:
        unregister_evaluator(f"{name}:grade")
    with pytest.raises(ConfigError, match="cannot be imported"):
        resolve_evaluator("lwref_nosuchmodule:grade")
