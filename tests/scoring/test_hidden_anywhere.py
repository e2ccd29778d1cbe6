"""Hidden tests anywhere in the tree (`hidden_tests_layout = "tree"` or `"patch"`): they modify
an existing visible test file and add one in another directory; the task validates, the agent
never sees them, and planting hooks next to them or editing them gains nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.sandbox import LocalSandbox, create_workspace, default_sandbox, remove_workspace
from loopwright.scoring import (
    GradeResult,
    PytestGrader,
    TaskTests,
    grade_variant,
    validate_benchmark,
)
from loopwright.tasks import Task, load_benchmark_dir, load_task
from loopwright.tasks._hidden import apply_test_patch
from tests.containers import docker_sandbox_or_skip
from tests.scoring.hostile import gold_steps, run_agent, shell, write
from tests.scoring.test_hostile import PASS_EVERYTHING_CONFTEST
from tests.taskfactory import GOLD, PARTIAL, anywhere_hidden, make_anywhere_task

LAYOUTS = ["tree", "patch"]
ONLY_MUL = 1 / 3  # the baseline: mul right, div missing
FAKE_DIV_TESTS = "def test_div():\n    pass\n\n\ndef test_div_by_zero():\n    pass\n"
FAKE_ADD_TESTS = "def test_add():\n    pass\n\n\ndef test_mul():\n    pass\n"


@pytest.fixture(scope="module")
def grader() -> PytestGrader:
    return PytestGrader(default_sandbox("auto"))


@pytest.fixture(params=LAYOUTS)
def task(request: pytest.FixtureRequest, tmp_path: Path) -> Task:
    return make_anywhere_task(tmp_path / "bench", request.param)


def test_the_task_validates_gold_one_flawed_below(task: Task, grader: PytestGrader) -> None:
    checks = validate_benchmark(load_benchmark_dir(task.root.parent), grader)
    assert all(c.ok for c in checks), [(c.variant, c.problem) for c in checks]
    scores = {c.variant: c.grade.score for c in checks if c.grade is not None}
    assert scores == {"gold": 1.0, "only-mul": ONLY_MUL, "untouched": 0.0}


@pytest.mark.docker
def test_the_task_validates_in_the_container_sandbox_too(task: Task) -> None:
    """Both layouts place their hidden tests (an edited visible file, a new directory) in the
    workspace the container mounts, and grade the same there."""
    docker = PytestGrader(docker_sandbox_or_skip())
    checks = validate_benchmark(load_benchmark_dir(task.root.parent), docker)
    assert all(c.ok for c in checks), [(c.variant, c.problem) for c in checks]
    scores = {c.variant: c.grade.score for c in checks if c.grade is not None}
    assert scores == {"gold": 1.0, "only-mul": ONLY_MUL, "untouched": 0.0}
    assert all(c.grade.sandbox == "docker" for c in checks if c.grade is not None)


def test_the_hidden_tests_are_never_in_the_workspace(task: Task, tmp_path: Path) -> None:
    ws = create_workspace(task.repo_dir, tmp_path / "ws")
    try:
        assert not (ws.path / "calc" / "tests").exists()
        assert "test_mul" not in (ws.path / "tests" / "test_add.py").read_text()
        assert not list(ws.path.rglob("*.patch"))
    finally:
        remove_workspace(ws)


def _grade(task: Task, grader: PytestGrader, tmp_path: Path, files: dict[str, str]) -> GradeResult:
    """Grade the only-mul solution with `files` written over the workspace."""
    ws = create_workspace(task.repo_dir, tmp_path / "ws")
    try:
        (ws.path / "calc" / "core.py").write_text(PARTIAL)
        for rel, text in files.items():
            (ws.path / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws.path / rel).write_text(text)
        return grader.grade(ws.path, task)
    finally:
        remove_workspace(ws)


TRICKS = {
    "conftest next to the hidden test in another directory": {
        "calc/tests/conftest.py": PASS_EVERYTHING_CONFTEST
    },
    "the modified test file edited to pass": {"tests/test_add.py": FAKE_ADD_TESTS},
    "the added hidden test file forged at its path": {"calc/tests/test_div.py": FAKE_DIV_TESTS},
    "conftest in the package above the hidden test": {"calc/conftest.py": PASS_EVERYTHING_CONFTEST},
}


@pytest.mark.parametrize("files", list(TRICKS.values()), ids=list(TRICKS))
def test_a_trick_on_the_hidden_paths_leaves_the_score_unchanged(
    task: Task, grader: PytestGrader, tmp_path: Path, files: dict[str, str]
) -> None:
    grade = _grade(task, grader, tmp_path, files)
    assert (grade.score, grade.resolved, grade.invalid) == (ONLY_MUL, False, False), (
        grade.invalid_reason
    )
    assert grade.restored  # reported as evidence


def test_what_restoration_undid_is_reported(
    task: Task, grader: PytestGrader, tmp_path: Path
) -> None:
    grade = _grade(
        task,
        grader,
        tmp_path,
        {"calc/tests/conftest.py": PASS_EVERYTHING_CONFTEST, "calc/tests/test_div.py": "x = 1\n"},
    )
    assert "removed calc/tests/conftest.py (added by the agent)" in grade.restored
    assert "reset calc/tests/test_div.py (changed by the agent)" in grade.restored


def test_an_untouched_workspace_reports_no_restoration(
    task: Task, grader: PytestGrader, tmp_path: Path
) -> None:
    grade = _grade(task, grader, tmp_path, {})
    assert grade.restored == [] and grade.score == ONLY_MUL


def test_a_symlinked_hidden_directory_is_replaced_not_written_through(
    task: Task, grader: PytestGrader, tmp_path: Path
) -> None:
    """The agent points calc/tests at a directory outside the workspace holding forged tests:
    restoration writes inside the workspace and leaves the outside untouched."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_div.py").write_text(FAKE_DIV_TESTS)
    ws = create_workspace(task.repo_dir, tmp_path / "ws")
    try:
        (ws.path / "calc" / "core.py").write_text(PARTIAL)
        (ws.path / "calc" / "tests").symlink_to(outside, target_is_directory=True)
        grade = grader.grade(ws.path, task)
        assert not (ws.path / "calc" / "tests").is_symlink()
    finally:
        remove_workspace(ws)
    assert (grade.score, grade.invalid) == (ONLY_MUL, False), grade.invalid_reason
    assert [p.name for p in outside.iterdir()] == ["test_div.py"]
    assert (outside / "test_div.py").read_text() == FAKE_DIV_TESTS


def test_a_hostile_agent_planting_and_editing_around_hidden_tests_gains_nothing(
    task: Task, tmp_path: Path
) -> None:
    """End to end through run_task: the scripted agent writes the partial solution, plants a
    conftest next to where the hidden test will land, and edits the test file the hidden tests
    modify."""
    steps = [
        write("calc/core.py", PARTIAL),
        write("calc/tests/conftest.py", PASS_EVERYTHING_CONFTEST),
        write("tests/test_add.py", FAKE_ADD_TESTS),
        write("calc/tests/test_div.py", FAKE_DIV_TESTS),
    ]
    _, grade = run_agent(task, steps, default_sandbox("auto"), tmp_path / "runs" / "hostile")
    assert (grade.score, grade.resolved, grade.invalid) == (ONLY_MUL, False, False), (
        grade.invalid_reason
    )
    _, honest = run_agent(task, gold_steps(task), default_sandbox("auto"), tmp_path / "runs" / "g")
    assert (honest.score, honest.resolved, honest.invalid) == (1.0, True, False)


def test_rewriting_the_tasks_hidden_tests_on_disk_is_tamper_and_repaired(
    task: Task, tmp_path: Path
) -> None:
    """Unsandboxed, the agent can reach the task directory: its tests.patch or tests/ tree."""
    target = task.root / (
        "tests.patch"
        if task.spec.hidden_tests_layout == "patch"
        else "tests/calc/tests/test_div.py"
    )
    original = target.read_bytes()
    poison = shell(f"printf 'garbage' > {target}")
    _, grade = run_agent(task, [poison], LocalSandbox(), tmp_path / "runs" / "poison")
    assert grade.tampered and target.name in (grade.invalid_reason or "")
    assert target.read_bytes() == original


def test_an_overlay_touching_a_hidden_test_path_is_rejected(tmp_path: Path) -> None:
    task = make_anywhere_task(tmp_path / "bench", "patch")
    (task.root / "solution" / "calc" / "tests").mkdir()
    (task.root / "solution" / "calc" / "tests" / "test_div.py").write_text(FAKE_DIV_TESTS)
    with pytest.raises(ConfigError, match="changes a test file"):
        load_task(task.root)


def test_a_test_id_outside_the_restored_paths_is_rejected(tmp_path: Path) -> None:
    task = make_anywhere_task(tmp_path / "bench", "tree")
    toml = task.root / "task.toml"
    toml.write_text(
        toml.read_text().replace("calc/tests/test_div.py::test_div'", "calc/test_x.py::t'")
    )
    with pytest.raises(ConfigError, match="outside test_dir"):
        load_task(task.root)


def test_a_patch_that_does_not_apply_is_rejected_at_load(tmp_path: Path) -> None:
    task = make_anywhere_task(tmp_path / "bench", "patch")
    (task.root / "repo" / "tests" / "test_add.py").write_text("def test_other():\n    pass\n")
    with pytest.raises(ConfigError, match="does not apply"):
        load_task(task.root)


def test_a_patch_may_delete_a_file(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("x = 1\n")
    patch = (
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n"
        "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n"
    )
    assert apply_test_patch(patch.encode(), {"old.py": b"x = 1\n"}) == {"old.py": None}


@pytest.mark.parametrize("path", ["../escape.py", "/etc/passwd", ".git/config"])
def test_a_patch_reaching_outside_the_repo_is_refused(path: str) -> None:
    patch = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n".replace("b//", "/")
    with pytest.raises(ValueError, match="inside the repo"):
        apply_test_patch(patch.encode(), {})


def test_tree_and_patch_place_the_same_files(tmp_path: Path) -> None:
    tree = TaskTests.capture(make_anywhere_task(tmp_path / "a", "tree"))
    patch = TaskTests.capture(make_anywhere_task(tmp_path / "b", "patch"))
    want = {rel: text.encode() for rel, text in anywhere_hidden().items()}
    assert tree.placed == patch.placed == want


def test_grade_variant_applies_the_overlay_and_the_hidden_tests(
    task: Task, grader: PytestGrader, tmp_path: Path
) -> None:
    assert task.solution_dir is not None
    grade = grade_variant(task, task.solution_dir, grader, tmp_path)
    assert (grade.score, grade.resolved) == (1.0, True)


KEEP_TEST = "from calc.core import add\n\n\ndef test_add_three():\n    assert add(1, 2) == 3\n"


def test_a_listed_visible_test_outside_test_dir_is_restored(
    grader: PytestGrader, tmp_path: Path
) -> None:
    """A pass_to_pass test in a repo file outside test_dir that no hidden test touches: the
    agent breaks the regression and edits that file to pass; the file is reset, the regression
    counts."""
    task = make_anywhere_task(tmp_path / "bench", "patch")
    (task.root / "repo" / "calc" / "more").mkdir()
    (task.root / "repo" / "calc" / "more" / "test_keep.py").write_text(KEEP_TEST)
    toml = task.root / "task.toml"
    toml.write_text(
        toml.read_text().replace(
            'pass_to_pass = ["tests/test_add.py::test_add"]',
            'pass_to_pass = ["tests/test_add.py::test_add", "calc/more/test_keep.py::test_add_three"]',
        )
    )
    task = load_task(task.root)
    broken = GOLD.replace("return a + b", "return 0 if (a, b) == (1, 2) else a + b")
    ws = create_workspace(task.repo_dir, tmp_path / "ws")
    try:
        (ws.path / "calc" / "core.py").write_text(broken)
        (ws.path / "calc" / "more" / "test_keep.py").write_text("def test_add_three():\n    pass\n")
        grade = grader.grade(ws.path, task)
    finally:
        remove_workspace(ws)
    assert (grade.score, grade.resolved, grade.p2p_passed, grade.invalid) == (1.0, False, 1, False)
    assert "reset calc/more/test_keep.py (changed by the agent)" in grade.restored
