"""How the graded process ends: once pytest has returned, the kit's bootstrap runs the `atexit`
handlers and leaves with `os._exit` (scoring/_kit.py, BOOT), skipping the interpreter's teardown.

A hostile agent gained from that teardown: a thread its code leaves running (not a daemon) was
waited for at exit, so a failing run never ended and was given up at the grade timeout: an
*invalid* grade, left out of every mean, instead of the zero it is (docs/grading.md, "What
remains possible": an agent gains by making exactly its failing runs hang). Now the run ends
when pytest does, and is graded. Runs in every sandbox.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.sandbox import BubblewrapSandbox, LocalSandbox, Sandbox, bubblewrap_available
from loopwright.scoring import GradeResult
from loopwright.tasks import Task, load_task
from tests.containers import docker_sandbox_or_skip
from tests.scoring.hostile import copy_task, gold_steps, run_agent, write

GRADE_TIMEOUT_S = 30  # the copied task's: a run that hangs is given up after this

# Does nothing for the task (slugify is missing: every fail_to_pass test fails) and leaves a
# thread running forever as the package is imported by the tests.
HANGING_THREAD = '''"""textkit: small, dependency-free text utilities."""

import threading
import time

__version__ = "0.4.1"


def _forever():
    while True:
        time.sleep(0.05)


threading.Thread(target=_forever, name="keeps-the-process", daemon=False).start()
'''

KINDS = [
    pytest.param("local", id="local"),
    pytest.param(
        "bubblewrap",
        id="bubblewrap",
        marks=pytest.mark.skipif(
            not bubblewrap_available(),
            reason="bubblewrap does not work here (bubblewrap_available() is False)",
        ),
    ),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


@pytest.fixture(scope="module", params=KINDS)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    kind = request.param
    if kind == "docker":
        chosen: Sandbox = docker_sandbox_or_skip()
    else:
        chosen = BubblewrapSandbox() if kind == "bubblewrap" else LocalSandbox()
    yield chosen
    chosen.close()


@pytest.fixture
def slugify(tmp_path: Path) -> Task:
    """l1-slugify with a short grade timeout, so that a hanging run is given up quickly."""
    task = copy_task("l1-slugify", tmp_path / "bench")
    toml = task.root / "task.toml"
    text = toml.read_text(encoding="utf-8")
    start = text.index("\ngrade = ") + 1
    end = text.index("\n", start)
    toml.write_text(f"{text[:start]}grade = {GRADE_TIMEOUT_S}{text[end:]}", encoding="utf-8")
    return load_task(task.root)


def _grade(task: Task, files: dict[str, str], sandbox: Sandbox, tmp_path: Path) -> GradeResult:
    run_dir = tmp_path / "runs" / f"run-{secrets.token_hex(4)}"
    steps = [write(path, content) for path, content in files.items()]
    return run_agent(task, steps, sandbox, run_dir)[1]


def test_a_thread_left_running_by_failing_code_is_a_zero_not_an_invalid_timeout(
    slugify: Task, sandbox: Sandbox, tmp_path: Path
) -> None:
    grade = _grade(slugify, {"textkit/__init__.py": HANGING_THREAD}, sandbox, tmp_path)
    assert not grade.timed_out, grade.invalid_reason
    assert not grade.invalid, grade.invalid_reason
    assert (grade.score, grade.resolved, grade.exit_code) == (0.0, False, 1)
    assert grade.pytest_duration_s < GRADE_TIMEOUT_S


def test_the_gold_with_a_thread_left_running_still_scores_one(
    slugify: Task, sandbox: Sandbox, tmp_path: Path
) -> None:
    files = {args["path"]: args["content"] for _, args in gold_steps(slugify)}
    files["textkit/__init__.py"] = HANGING_THREAD
    grade = _grade(slugify, files, sandbox, tmp_path)
    assert (grade.score, grade.resolved, grade.invalid) == (1.0, True, False), grade.invalid_reason
