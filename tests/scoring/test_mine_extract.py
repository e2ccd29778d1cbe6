"""`tasks mine` without test runs: the commit window, candidate extraction, instruction drafts,
flawed variants from half the gold hunks, environment inference, task.toml writing."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.scoring._mine_extract import (
    Candidate,
    Skip,
    extract_candidate,
    flawed_drafts,
    infer_environment,
    instruction_draft,
    is_test_path,
    task_id_for,
    task_toml,
)
from loopwright.scoring._mine_git import GitRepo
from loopwright.tasks import Environment, FlawedVariant, TaskSpec
from tests.minerepo import commit, git, make_mine_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, dict[str, str]]:
    root = tmp_path_factory.mktemp("mine") / "repo"
    ids = make_mine_repo(root)
    return GitRepo(root), ids


def candidate(repo: tuple[GitRepo, dict[str, str]], name: str) -> Candidate:
    git_repo, ids = repo
    found = extract_candidate(git_repo, ids[name])
    assert isinstance(found, Candidate), found
    return found


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_x.py", True),
        ("pkg/tests/helpers.py", True),
        ("test/data.json", True),
        ("pkg/test_mod.py", True),
        ("pkg/mod_test.py", True),
        ("conftest.py", True),
        ("pkg/testing.py", False),
        ("pkg/core.py", False),
        ("contest/core.py", False),
    ],
)
def test_test_paths_are_recognised(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def test_window_is_first_parent_oldest_first_without_the_root(
    repo: tuple[GitRepo, dict[str, str]],
) -> None:
    git_repo, ids = repo
    order = ["feature", "tests-only", "code-only", "already-passing", "still-failing"]
    assert git_repo.window(since=None, max_commits=None, paths=None) == [ids[n] for n in order]
    assert git_repo.window(since=None, max_commits=2, paths=None) == [ids[n] for n in order[-2:]]
    assert git_repo.window(since=ids["code-only"], max_commits=None, paths=None) == [
        ids["already-passing"],
        ids["still-failing"],
    ]
    assert git_repo.window(since=None, max_commits=None, paths="tests/test_z*.py") == [
        ids["tests-only"]
    ]


def test_a_since_naming_no_commit_is_a_config_error(repo: tuple[GitRepo, dict[str, str]]) -> None:
    with pytest.raises(ConfigError, match="git rev-parse"):
        repo[0].window(since="no-such-rev", max_commits=None, paths=None)


def test_a_directory_that_is_not_a_repository_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="failed"):
        GitRepo(tmp_path)


def test_commits_without_code_or_test_changes_are_skipped_with_a_reason(
    repo: tuple[GitRepo, dict[str, str]],
) -> None:
    git_repo, ids = repo
    tests_only = extract_candidate(git_repo, ids["tests-only"])
    code_only = extract_candidate(git_repo, ids["code-only"])
    assert isinstance(tests_only, Skip) and "no code change" in tests_only.reason
    assert isinstance(code_only, Skip) and code_only.reason == "no test change"


def test_a_candidate_splits_tests_from_gold(repo: tuple[GitRepo, dict[str, str]]) -> None:
    found = candidate(repo, "feature")
    assert found.base == repo[1]["root"]
    assert list(found.gold) == ["calc/core.py"]
    assert b"def mul" in found.gold["calc/core.py"]
    assert b"def mul" not in found.base_files["calc/core.py"]
    assert found.test_files == ("tests/test_core.py",)
    assert found.test_patch.startswith(b"diff --git a/tests/test_core.py b/tests/test_core.py")
    assert b"calc/core.py" not in found.test_patch
    assert (found.level, found.test_dir) == (1, "tests")
    assert task_id_for(found) == f"add-mul-and-neg-to-calc-{found.sha[:8]}"


def test_the_instruction_is_the_message_without_trailers_and_the_new_signatures(
    repo: tuple[GitRepo, dict[str, str]],
) -> None:
    text = instruction_draft(candidate(repo, "feature"))
    assert text.startswith("Add mul and neg to calc\n\nFixes #7: calc cannot multiply")
    assert "Note: neg too." in text  # a body line that only looks like a trailer stays
    assert "Signed-off-by" not in text
    assert "- `calc/core.py: def neg(a):`" in text
    assert "- `calc/core.py: def mul(a, b):`" in text
    assert "def add" not in text  # unchanged signatures are not listed


def test_flawed_variants_each_keep_one_half_of_the_gold_hunks(
    repo: tuple[GitRepo, dict[str, str]],
) -> None:
    drafts = {
        d.name: d.files["calc/core.py"].decode() for d in flawed_drafts(candidate(repo, "feature"))
    }
    assert list(drafts) == ["first-half", "second-half"]
    assert "def neg" in drafts["first-half"] and "def mul" not in drafts["first-half"]
    assert "def mul" in drafts["second-half"] and "def neg" not in drafts["second-half"]


def test_a_single_hunk_gold_has_no_flawed_variant(repo: tuple[GitRepo, dict[str, str]]) -> None:
    assert flawed_drafts(candidate(repo, "still-failing")) == []


def test_a_merged_pull_request_is_one_candidate_against_the_first_parent(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    ids = make_mine_repo(root)
    git(root, "checkout", "-q", "-b", "pr")
    commit(root, "Add sub", {"calc/sub.py": "def sub(a, b):\n    return a - b\n"})
    commit(root, "Test sub", {"tests/test_sub.py": "from calc.sub import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"})  # fmt: skip
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "pr", "-m", "Merge pull request #9 from t/pr")
    git_repo = GitRepo(root)
    window = git_repo.window(since=ids["still-failing"], max_commits=None, paths=None)
    assert len(window) == 1  # the merge only: the PR's own commits are not first-parent
    found = extract_candidate(git_repo, window[0])
    assert isinstance(found, Candidate)
    assert found.base == ids["still-failing"]
    assert list(found.gold) == ["calc/sub.py"] and found.test_files == ("tests/test_sub.py",)
    text = instruction_draft(found)
    assert "Merge pull request #9" in text
    assert "It brings in these changes:\n- Add sub\n- Test sub" in text


@pytest.mark.parametrize(
    ("files", "install"),
    [
        ({"calc/__init__.py": ""}, None),
        ({"pyproject.toml": '[project]\nname = "x"\nversion = "1"\n', "x/__init__.py": ""}, None),
        ({"pyproject.toml": '[project]\nname = "x"\nversion = "1"\n', "src/x/__init__.py": ""}, ["pip install -e ."]),
        ({"pyproject.toml": '[project]\nname = "x"\nversion = "1"\ndependencies = ["attrs"]\n'}, ["pip install -e ."]),
        ({"setup.py": "from setuptools import setup\nsetup()\n"}, ["pip install -e ."]),
        ({"requirements.txt": "attrs\n"}, ["pip install -r requirements.txt", "pip install -e ."]),
    ],
)  # fmt: skip
def test_the_environment_is_inferred_from_the_repository(
    tmp_path: Path, files: dict[str, str], install: list[str] | None
) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    environment, why = infer_environment(tmp_path)
    assert (environment.install if environment else None) == install
    assert why


def test_task_toml_reads_back_as_the_same_spec() -> None:
    spec = TaskSpec(
        id="t-1", level=2, summary='a "quoted" \\ summary é', hidden_tests_layout="patch",
        fail_to_pass=["tests/test_a.py::test_x[a b-1]"], pass_to_pass=["tests/test_a.py::T::y"],
        environment=Environment(install=["pip install -e ."], env={"MODE": "t"}),
        flawed=[FlawedVariant(name="first-half", kind="partial_feature", description="half")],
    )  # fmt: skip
    assert TaskSpec.model_validate(tomllib.loads(task_toml(spec))) == spec
