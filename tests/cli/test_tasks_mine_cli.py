"""`loopwright tasks mine`: the summary table, --json, and user errors as exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.cli import main
from tests.minerepo import make_env_spec, make_mine_repo, make_wcalc_repo


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("minecli") / "repo"
    return root, make_mine_repo(root)


def test_mine_prints_a_table_of_verdicts_and_the_time(
    tmp_path: Path, repo: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, ids = repo
    code, out, err = run(
        capsys, "tasks", "mine", str(root), "--out", str(tmp_path / "out"),
        "--paths", "tests/test_zero.py", "--model", "sim",
    )  # fmt: skip
    assert code == 1  # nothing kept is a failed mining run, with what to try
    assert "failed: no task kept of 1 commit(s) examined (1x no code change" in err
    assert "--env-spec" in err
    assert ids["tests-only"][:10] in out
    assert "dropped: no code change" in out
    assert "0 task(s) kept of 1 commit(s) examined (0 candidate(s))" in out
    assert "instructions: the commit message, as is (sim does not rewrite)" in out


def test_mine_json_reports_the_kept_and_dropped(
    tmp_path: Path, repo: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, ids = repo
    code, out, _ = run(
        capsys, "tasks", "mine", str(root), "--out", str(tmp_path / "out"), "--max", "1",
        "--sandbox", "local", "--json",
    )  # fmt: skip
    assert code == 1  # nothing kept: the JSON report is still printed, then the exit says so
    report = json.loads(out)
    assert [c["commit"] for c in report["commits"]] == [ids["still-failing"]]
    assert report["commits"][0]["kept"] is False
    assert report["commits"][0]["reason"].startswith("the tests failing at base fail")
    assert report["instruction_source"] == "the commit message, as is (no --model)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "no-such-rev"], "git rev-parse"),
        (["--max", "0"], "--max"),
        (["--model", "nosuchmodel"], "unknown model 'nosuchmodel'"),
    ],
)
def test_mine_user_errors_exit_2_without_a_traceback(
    tmp_path: Path,
    repo: tuple[Path, dict[str, str]],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    code, _, err = run(capsys, "tasks", "mine", str(repo[0]), "--out", str(tmp_path / "o"), *args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_mine_of_a_folder_that_is_no_repository_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "tasks", "mine", str(tmp_path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert "not a git repository" in err
    assert not (tmp_path / "o").exists()


def test_mine_with_a_model_writes_its_problem_statement(
    tmp_path: Path, repo: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    statement = "calc can only add. It should multiply with mul(a, b) and negate with neg(a)."
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"replies": [json.dumps({"problem_statement": statement})]}))
    code, out, _ = run(
        capsys, "tasks", "mine", str(repo[0]), "--out", str(tmp_path / "out"),
        "--paths", "tests/test_core.py", "--model", f"scripted:{script}",
    )  # fmt: skip
    assert code == 0
    assert "1 task(s) kept of 1 commit(s) examined" in out
    assert "instructions: rewritten by scripted from the commit message" in out
    (task,) = [p for p in (tmp_path / "out").iterdir() if (p / "task.toml").is_file()]
    assert (task / "instruction.md").read_text() == statement + "\n"


def test_mine_with_a_bad_env_spec_exits_2_before_writing_anything(
    tmp_path: Path, repo: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "env.toml"
    spec.write_text('[environment]\nrequirements_files = ["environment/requirements.txt"]\n')
    code, _, err = run(
        capsys, "tasks", "mine", str(repo[0]), "--out", str(tmp_path / "o"), "--env-spec", str(spec)
    )
    assert code == 2
    assert f"--env-spec {spec} names 'environment/requirements.txt', which does not exist" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_mine_with_an_env_spec_says_where_every_environment_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_wcalc_repo(tmp_path / "repo")
    spec = make_env_spec(tmp_path / "spec")
    code, out, _ = run(
        capsys, "tasks", "mine", str(tmp_path / "repo"), "--out", str(tmp_path / "out"),
        "--env-spec", str(spec), "--env-cache", str(tmp_path / "envs"), "--no-register",
    )  # fmt: skip
    assert code == 0, out
    assert "1 task(s) kept of 1 commit(s) examined" in out
    assert f"environment: the [environment] of {spec.resolve()} for every task" in out
    report = json.loads((tmp_path / "out" / "mine.json").read_text())
    assert report["env_spec"] == str(spec.resolve())
    assert report["commits"][0]["environment"].startswith(f"--env-spec {spec.resolve()} (")
