"""`mine_repository`: the fixture repository's five commits keep exactly the expected one, with
the expected FAIL_TO_PASS and PASS_TO_PASS, and the output passes `bench validate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.models import ScriptedModel
from loopwright.sandbox import EnvironmentBuildError, EnvironmentCache, Prepared
from loopwright.scoring import (
    MINE_REPORT_FILE,
    MineOptions,
    MineReport,
    Outcome,
    PytestGrader,
    TestRun,
    mine_repository,
    split_outcomes,
    statement_rewriter,
    validate_benchmark,
)
from loopwright.tasks import Task, load_benchmark
from tests.minerepo import EXPECTED_F2P, EXPECTED_P2P, commit, make_mine_repo


@pytest.fixture(scope="module")
def mined(
    tmp_path_factory: pytest.TempPathFactory, grader: PytestGrader
) -> tuple[MineReport, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("mining")
    ids = make_mine_repo(root / "repo")
    options = MineOptions(repo=root / "repo", out=root / "out", jobs=2)  # window order kept
    seen: list[int] = []
    report = mine_repository(options, grader, on_window=seen.append)
    assert seen == [5]
    return report, root / "out", ids


def test_exactly_the_feature_commit_is_kept(
    mined: tuple[MineReport, Path, dict[str, str]],
) -> None:
    report, out, ids = mined
    assert [c.commit for c in report.kept] == [ids["feature"]]
    kept = report.kept[0]
    assert kept.fail_to_pass == EXPECTED_F2P
    assert kept.pass_to_pass == len(EXPECTED_P2P)
    assert kept.flawed == ["first-half", "second-half"] and kept.dropped_variants == []
    assert kept.level == 1 and kept.seconds > 0
    task = load_benchmark(out).task(kept.task_id or "")
    assert task.spec.fail_to_pass == EXPECTED_F2P
    assert task.spec.pass_to_pass == EXPECTED_P2P
    assert task.spec.hidden_tests_layout == "patch" and task.spec.environment is None
    assert "def mul" not in (task.repo_dir / "calc/core.py").read_text()  # the base
    assert "def mul" in task.instruction  # as a signature to add


def test_every_dropped_commit_says_why(mined: tuple[MineReport, Path, dict[str, str]]) -> None:
    report, _, ids = mined
    reasons = {c.commit: c.reason for c in report.commits if not c.kept}
    assert reasons == {
        ids["tests-only"]: "no code change (tests or other files only)",
        ids["code-only"]: "no test change",
        ids["already-passing"]: "every test already passes at base",
        ids["still-failing"]: "the tests failing at base fail with the change too: "
        "tests/test_div.py::test_div",
    }


def test_the_mined_benchmark_validates(
    mined: tuple[MineReport, Path, dict[str, str]], grader: PytestGrader
) -> None:
    _, out, _ = mined
    checks = validate_benchmark(load_benchmark(out), grader)
    assert [(c.variant, c.ok) for c in checks] == [
        ("gold", True), ("first-half", True), ("second-half", True), ("untouched", True),
    ]  # fmt: skip


def test_the_report_is_written_and_reads_back(
    mined: tuple[MineReport, Path, dict[str, str]],
) -> None:
    report, out, _ = mined
    on_disk = MineReport.model_validate_json((out / MINE_REPORT_FILE).read_text())
    assert on_disk == report
    assert json.loads((out / MINE_REPORT_FILE).read_text())["schema_version"] == 1
    assert not [p.name for p in out.iterdir() if p.name.startswith(".mining")]


def test_mining_into_a_non_empty_folder_is_refused(tmp_path: Path, grader: PytestGrader) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="not an empty directory"):
        mine_repository(MineOptions(repo=tmp_path, out=tmp_path / "out"), grader)
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


def run(outcomes: dict[str, str], invalid: str | None = None) -> TestRun:
    return TestRun({k: Outcome(v) for k, v in outcomes.items()}, invalid)


def test_a_test_that_flips_between_runs_is_unstable_and_in_no_list() -> None:
    before = [run({"t::a": "failed", "t::b": "passed"}), run({"t::a": "passed", "t::b": "passed"})]
    after = [run({"t::a": "passed", "t::b": "passed"})] * 2
    split = split_outcomes(before, after)
    assert (split.fail_to_pass, split.pass_to_pass, split.unstable) == ([], ["t::b"], ["t::a"])
    assert split.reason == "its fail-to-pass tests are unstable over 2 runs: t::a"


def test_fail_to_pass_counts_missing_and_skipped_as_failing_before() -> None:
    before = [run({"t::b": "skipped"})] * 2
    after = [run({"t::a": "passed", "t::b": "passed", "t::c": "failed"})] * 2
    split = split_outcomes(before, after)
    assert (split.fail_to_pass, split.pass_to_pass, split.reason) == (["t::a", "t::b"], [], None)


def test_runs_that_report_no_test_do_not_say_every_test_passes_at_base() -> None:
    # A test file that cannot import collects nothing, before and after (canaries are left out).
    empty = [run({})] * 2
    split = split_outcomes(empty, empty)
    assert (split.fail_to_pass, split.pass_to_pass) == ([], [])
    assert split.reason is not None
    assert split.reason.startswith("no test ran, before or after the change")
    assert "--env-spec" in split.reason


def test_an_invalid_run_gives_no_fail_to_pass_and_says_why() -> None:
    split = split_outcomes([run({}, "pytest timed out")], [run({"t::a": "passed"})])
    assert split.fail_to_pass == []
    assert split.reason == "the tests could not run at base: pytest timed out"


def test_a_model_rewrites_the_instruction_from_the_draft_only() -> None:
    prompts: list[str] = []

    def reply(messages: object, _tools: object) -> str:
        prompts.append(str(messages))
        return json.dumps({"problem_statement": "calc cannot multiply; add mul(a, b)."})

    rewrite = statement_rewriter(ScriptedModel(reply))
    assert rewrite("Add mul\n\n- `calc/core.py: def mul(a, b):`\n") == (
        "calc cannot multiply; add mul(a, b).\n"
    )
    assert "def mul(a, b)" in prompts[0]


def test_a_model_without_a_usable_reply_leaves_the_draft() -> None:
    why: list[str] = []
    rewrite = statement_rewriter(ScriptedModel(["no json", "still none"]), why.append)
    assert rewrite("Add mul\n") == "Add mul\n"
    assert len(why) == 1


def test_a_commit_whose_tree_cannot_be_exported_safely_is_dropped_saying_why(
    tmp_path: Path, grader: PytestGrader
) -> None:
    root = tmp_path / "repo"
    ids = make_mine_repo(root)
    (root / "calc" / "escape").symlink_to("/etc/passwd")
    commit(root, "Link out", {})
    commit(root, "Add sub", {"calc/sub.py": "def sub(a, b):\n    return a - b\n",
                             "tests/test_sub.py": "def test_sub():\n    from calc.sub import sub\n    assert sub(2, 1) == 1\n"})  # fmt: skip
    report = mine_repository(
        MineOptions(repo=root, out=tmp_path / "out", since=ids["still-failing"]), grader
    )
    verdicts = [(c.kept, c.reason) for c in report.commits]
    assert verdicts[0] == (False, "no code change (tests or other files only)")
    assert verdicts[1][0] is False
    assert verdicts[1][1].startswith("could not be mined: AbsoluteLinkError")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["benchmark.toml", "mine.json"]


class _FailingBuilds(EnvironmentCache):
    def ensure(self, task: Task) -> Prepared:
        raise EnvironmentBuildError(f"building the environment of task {task.id} failed: boom")


def test_a_candidate_whose_inferred_environment_does_not_build_is_dropped_saying_why(
    tmp_path: Path, grader: PytestGrader
) -> None:
    root = tmp_path / "repo"
    ids = make_mine_repo(root)
    commit(root, "Package it", {"setup.py": "from setuptools import setup\nsetup(name='calc')\n"})
    commit(root, "Add sub", {"calc/sub.py": "def sub(a, b):\n    return a - b\n",
                             "tests/test_sub.py": "def test_sub():\n    from calc.sub import sub\n    assert sub(2, 1) == 1\n"})  # fmt: skip
    options = MineOptions(repo=root, out=tmp_path / "out", since=ids["still-failing"])
    report = mine_repository(options, grader, environments=_FailingBuilds(tmp_path / "envs"))
    last = report.commits[-1]
    assert (last.kept, last.environment) == (
        False,
        "setup.py (its install_requires are installed by pip install -e .)",
    )
    assert last.reason.startswith("environment: building the environment of task add-sub-")
    assert last.reason.endswith("failed: boom")
