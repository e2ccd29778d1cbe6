"""The unittest and command test runners (`[grading] runner`): tasks built here validate (gold
1.0, flawed < 1.0), bad runs are invalid rather than zero, and hostile agents cannot forge a
reward or junit file from the workspace."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.sandbox import Sandbox, create_workspace, default_sandbox, remove_workspace
from loopwright.scoring import (
    TAMPER_PREFIX,
    CommandGrader,
    GradeResult,
    Outcome,
    PytestGrader,
    UnittestGrader,
    grader_for,
    validate_benchmark,
)
from loopwright.scoring._unittest import parse_unittest
from loopwright.tasks import Task, load_benchmark_dir, load_task
from tests.containers import docker_sandbox_or_skip
from tests.scoring.hostile import run_agent, shell, write
from tests.scoring.runner_tasks import (
    JUNIT_IDS,
    command_task,
    junit_task,
    unittest_task,
)
from tests.taskfactory import GOLD, PARTIAL, write_files


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return default_sandbox("auto")


def grade(
    task: Task,
    core: str | None,
    tmp_path: Path,
    sandbox: Sandbox,
    files: dict[str, str] | None = None,
) -> GradeResult:
    ws = create_workspace(task.repo_dir, tmp_path / "ws")
    try:
        if core is not None:
            (ws.path / "calc" / "core.py").write_text(core)
        write_files(ws.path, files or {})
        return grader_for(task, sandbox).capture(task).grade(ws.path)
    finally:
        remove_workspace(ws)


# --- the task format -------------------------------------------------------------------------


def test_grader_for_picks_the_runner_the_task_names(tmp_path: Path, sandbox: Sandbox) -> None:
    assert isinstance(grader_for(unittest_task(tmp_path), sandbox), UnittestGrader)
    assert isinstance(grader_for(command_task(tmp_path), sandbox), CommandGrader)
    assert grader_for(command_task(tmp_path), sandbox).name == "command"


@pytest.mark.parametrize(
    ("grading", "ids", "needle"),
    [
        ('runner = "command"', "", "needs command"),
        ('runner = "command"\ncommand = "x"\njunit = "a"\nreward = "b"', "", "not both"),
        ('runner = "unittest"\ncommand = "x"', 'fail_to_pass = ["a.b.C.t"]', "for runner"),
        ('runner = "unittest"', 'fail_to_pass = ["tests/test_x.py::t"]', "not a unittest id"),
        ('runner = "command"\ncommand = "x"', 'fail_to_pass = ["a"]', "has no test ids"),
        ('runner = "command"\ncommand = "x"\nreward = "../r"', "", "relative"),
        ('runner = "pytest"', 'fail_to_pass = ["t.T.t"]', "pytest node id"),
    ],
)
def test_bad_grading_tables_are_refused(
    tmp_path: Path, grading: str, ids: str, needle: str
) -> None:
    task = command_task(tmp_path)
    text = f'schema_version = 1\nid = "calc-reward"\nlevel = 1\n{ids}\n[grading]\n{grading}\n'
    (task.root / "task.toml").write_text(text)
    with pytest.raises(ConfigError, match=needle):
        load_task(task.root)


def test_pytest_tasks_still_need_a_pytest_test_cmd_but_other_runners_ignore_it(
    tmp_path: Path,
) -> None:
    task = command_task(tmp_path)
    toml = (task.root / "task.toml").read_text()
    (task.root / "task.toml").write_text(toml.replace("level = 1", 'level = 1\ntest_cmd = "make"'))
    assert load_task(task.root).spec.grading.runner == "command"
    pytest_toml = 'schema_version = 1\nid = "calc-reward"\nlevel = 1\ntest_cmd = "make"\n'
    (task.root / "task.toml").write_text(pytest_toml + 'fail_to_pass = ["tests/t.py::t"]\n')
    with pytest.raises(ConfigError, match="python -m pytest"):
        load_task(task.root)


# --- unittest --------------------------------------------------------------------------------

VERBOSE = """\
test_doc (tests.test_a.T.test_doc)
A docstring line. ... ok
test_err (tests.test_a.T.test_err) ... ERROR
test_fail (tests.test_a.T.test_fail) ... FAIL
test_skip (tests.test_a.T.test_skip) ... skipped 'why'
test_sub (tests.test_a.T.test_sub) ...
  test_sub (tests.test_a.T.test_sub) (i=1) ... FAIL
test_us (tests.test_a.T.test_us) ... unexpected success
test_xf (tests.test_a.T.test_xf) ... expected failure
test_old (tests.test_a.T) ... ok
test_noisy (tests.test_a.T.test_noisy) ... printed by the testok
setUpClass (tests.test_a.S) ... ERROR
test_missing (unittest.loader._FailedTest.test_missing) ... ERROR

======================================================================
ERROR: test_missing (unittest.loader._FailedTest.test_missing)
----------------------------------------------------------------------
ERROR: setUpClass (tests.test_a.S)
----------------------------------------------------------------------
Ran 10 tests in 0.001s

FAILED (failures=2, errors=2, skipped=1, expected failures=1, unexpected successes=1)
"""


def test_unittest_verbose_output_parses_into_outcomes() -> None:
    parsed = parse_unittest(VERBOSE)
    outcomes = {k.rsplit(".", 1)[1]: c.outcome for k, c in parsed.report.cases.items()}
    assert outcomes == {
        "test_doc": Outcome.PASSED,
        "test_err": Outcome.ERROR,
        "test_fail": Outcome.FAILED,
        "test_skip": Outcome.SKIPPED,
        "test_sub": Outcome.FAILED,
        "test_us": Outcome.FAILED,
        "test_xf": Outcome.XFAILED,
        "test_old": Outcome.PASSED,
        "test_noisy": Outcome.PASSED,
    }
    assert "tests.test_a.T.test_old" in parsed.report.cases  # Python 3.10's form
    assert parsed.report.collection_errors == ("test_missing: failed to import",)
    assert (parsed.ran, parsed.reported, parsed.finished) == (10, 10, True)
    assert not parse_unittest(VERBOSE.split("Ran ")[0]).finished


def test_a_unittest_task_validates(tmp_path: Path, sandbox: Sandbox) -> None:
    unittest_task(tmp_path / "bench")
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "bench"), PytestGrader(sandbox))
    by_variant = {c.variant: c for c in checks}
    assert all(c.ok for c in checks), [c.problem for c in checks]
    gold, flawed = by_variant["gold"].grade, by_variant["only-mul"].grade
    assert gold is not None and gold.score == 1.0 and gold.resolved
    assert flawed is not None and flawed.score == pytest.approx(1 / 3) and not flawed.invalid
    assert flawed.p2p_passed == 1
    outcomes = {t.id: t.outcome for t in flawed.tests}
    assert outcomes["tests.test_ops_hidden.TestOps.test_div"] is Outcome.ERROR


def test_a_unittest_run_cut_short_by_the_code_under_test_is_tampered(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    task = unittest_task(tmp_path)
    result = grade(task, GOLD + "\nimport os\nos._exit(0)\n", tmp_path, sandbox)
    assert result.invalid and (result.invalid_reason or "").startswith(TAMPER_PREFIX)
    assert result.score == 0.0


FORGE = """
import sys

for name in {names}:
    sys.__stderr__.write(f"{{name}} (tests.test_ops_hidden.TestOps.{{name}}) ... ok\\n")
"""


def test_forged_unittest_lines_do_not_raise_the_score(tmp_path: Path, sandbox: Sandbox) -> None:
    """Code under test prints `... ok` lines for the tests it fails: the real lines win; a
    line for a test that never ran makes the count disagree with `Ran N tests`: tampered."""
    task = unittest_task(tmp_path)
    forged = FORGE.format(names=["test_div", "test_div_by_zero"])
    same_tests = grade(task, PARTIAL + forged, tmp_path, sandbox)
    assert same_tests.score == pytest.approx(1 / 3) and not same_tests.invalid
    extra = grade(task, PARTIAL + FORGE.format(names=["test_extra"]), tmp_path, sandbox)
    assert extra.tampered and "forged" in (extra.invalid_reason or "")


# --- command: reward, junit, exit code ---------------------------------------------------------


def test_a_command_task_with_a_reward_file_validates(tmp_path: Path, sandbox: Sandbox) -> None:
    command_task(tmp_path / "bench")
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "bench"), PytestGrader(sandbox))
    assert all(c.ok for c in checks), [c.problem for c in checks]
    scores = {c.variant: c.grade.score for c in checks if c.grade is not None}
    assert scores == {"gold": 1.0, "only-mul": pytest.approx(1 / 3), "untouched": 0.0}


def test_a_command_task_with_a_junit_file_validates(tmp_path: Path, sandbox: Sandbox) -> None:
    junit_task(tmp_path / "bench")
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "bench"), PytestGrader(sandbox))
    assert all(c.ok for c in checks), [c.problem for c in checks]
    flawed = next(c.grade for c in checks if c.variant == "only-mul")
    assert flawed is not None and flawed.f2p_passed == 1 and flawed.p2p_passed == 1


def test_a_command_graded_by_its_exit_code(tmp_path: Path, sandbox: Sandbox) -> None:
    task = command_task(tmp_path, command='"$PYTHON" -c "from calc.core import div"', source="")
    assert grade(task, GOLD, tmp_path, sandbox).score == 1.0
    failed = grade(task, PARTIAL, tmp_path, sandbox)
    assert failed.score == 0.0 and not failed.invalid and failed.exit_code != 0


@pytest.mark.parametrize(
    ("written", "needle"),
    [
        (None, "wrote no reward file"),
        ("high", "does not hold a number"),
        ("1.5", "does not hold a number"),
        ("nan", "does not hold a number"),
        ("0." + "5" * 100, "does not hold a number"),
    ],
)
def test_a_missing_or_garbled_reward_is_invalid_not_zero(
    tmp_path: Path,
    sandbox: Sandbox,
    written: str | None,
    needle: str,
) -> None:
    body = "" if written is None else f'printf "{written}" > "$LOOPWRIGHT_OUTPUT/reward.txt"'
    task = command_task(tmp_path, command=body or "true")
    result = grade(task, GOLD, tmp_path, sandbox)
    assert result.invalid and needle in (result.invalid_reason or "")
    assert not result.tampered and result.score == 0.0


def test_a_missing_junit_file_is_invalid(tmp_path: Path, sandbox: Sandbox) -> None:
    task = command_task(tmp_path, command="true", source='junit = "junit.xml"', ids=JUNIT_IDS)
    result = grade(task, GOLD, tmp_path, sandbox)
    assert result.invalid and "wrote no junit XML" in (result.invalid_reason or "")


# --- hostile agents ------------------------------------------------------------------------------

FORGED_JUNIT = """<testsuite>{}</testsuite>""".format(
    "".join(
        f'<testcase classname="tests.test_ops_hidden.TestOps" name="{n}"/>'
        for n in ("test_mul", "test_div", "test_div_by_zero")
    )
)


def test_reward_and_junit_files_the_agent_plants_in_the_workspace_are_not_read(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    planted = {"reward.txt": "1.0", "junit.xml": FORGED_JUNIT, "out/reward.txt": "1.0"}
    reward = grade(command_task(tmp_path / "a"), PARTIAL, tmp_path, sandbox, planted)
    assert reward.score == pytest.approx(1 / 3) and not reward.invalid
    junit = grade(junit_task(tmp_path / "b"), PARTIAL, tmp_path, sandbox, planted)
    assert junit.f2p_passed == 1 and not junit.resolved


def test_an_agent_that_rewrites_the_hidden_checker_still_gets_its_real_score(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    """The scripted agent writes the partial solution, a checker that always awards 1.0 where
    the hidden one will land, and a reward file in the workspace: grading restores the checker
    and reads the reward from its own fresh directory."""
    task = command_task(tmp_path / "bench")
    forged = 'import os\nopen(os.environ["LOOPWRIGHT_OUTPUT"] + "/reward.txt", "w").write("1")\n'
    steps = [
        write("calc/core.py", PARTIAL),
        write("tests/check.py", forged),
        write("reward.txt", "1.0"),
        shell("mkdir -p out && echo 1.0 > out/reward.txt"),
    ]
    record, result = run_agent(task, steps, sandbox, tmp_path / "run")
    assert result.score == pytest.approx(1 / 3) and not result.resolved and not result.invalid
    assert any("tests/" in action for action in result.restored)
    assert record.score_end == pytest.approx(1 / 3)
    saved = json.loads((tmp_path / "run" / "grade.json").read_text())
    assert saved["score"] == pytest.approx(1 / 3)


@pytest.mark.docker
@pytest.mark.parametrize(
    "make", [unittest_task, command_task, junit_task], ids=lambda f: f.__name__
)
def test_runner_tasks_validate_in_the_container_sandbox(
    tmp_path: Path, make: Callable[[Path], Task]
) -> None:
    docker = docker_sandbox_or_skip()
    make(tmp_path / "bench")
    checks = validate_benchmark(load_benchmark_dir(tmp_path / "bench"), PytestGrader(docker))
    assert all(c.ok for c in checks), [c.problem for c in checks]
    assert {c.grade.sandbox for c in checks if c.grade is not None} == {"docker"}


def test_bench_validate_reports_a_unittest_and_a_reward_task_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unittest_task(tmp_path / "bench")
    command_task(tmp_path / "bench")
    code = main(["bench", "validate", str(tmp_path / "bench"), "--json"])
    checks = json.loads(capsys.readouterr().out)
    assert code == 0, checks
    assert {(c["task"], c["variant"]): c["score"] for c in checks} == {
        ("calc-reward", "gold"): 1.0,
        ("calc-reward", "only-mul"): pytest.approx(1 / 3),
        ("calc-reward", "untouched"): 0.0,
        ("calc-unittest", "gold"): 1.0,
        ("calc-unittest", "only-mul"): pytest.approx(1 / 3),
        ("calc-unittest", "untouched"): 0.0,
    }
