"""A task whose `[environment]` names a container `image` runs and is graded in that image under
the container sandbox; under another sandbox its run says to use the container sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, ScriptedModel
from loopwright.sandbox import DockerSandbox, LocalSandbox
from loopwright.scoring import PytestGrader, grade_variant
from loopwright.tasks import Task, load_task
from loopwright.workflow import builtin_workflow
from tests.containers import docker_sandbox_or_skip, image_tag, settings
from tests.taskfactory import make_calc_task

TASK_TAG = "localhost/loopwright-task-image:test"


IMAGE_CHECK = {
    "test_image.py": """
        import os


        def test_runs_in_the_task_image():
            assert os.environ.get("LW_TASK_IMAGE") == "yes"
    """
}


def image_task(parent: Path, image: str) -> Task:
    task = make_calc_task(
        parent,
        extra_hidden=IMAGE_CHECK,
        extra_f2p=["tests/test_image.py::test_runs_in_the_task_image"],
    )
    toml = task.root / "task.toml"
    toml.write_text(toml.read_text() + f'\n[environment]\nimage = "{image}"\n')
    return load_task(task.root)


@pytest.mark.docker
def test_the_task_image_is_the_one_its_workspace_runs_in(tmp_path: Path) -> None:
    shared = docker_sandbox_or_skip()
    # The task's image: the test image plus a variable (an ENV-only build runs no container).
    context = tmp_path / "image"
    context.mkdir()
    (context / "Containerfile").write_text(f"FROM {image_tag()}\nENV LW_TASK_IMAGE=yes\n")
    shared.engine.call("build", "-t", TASK_TAG, "-f", str(context / "Containerfile"),
                       str(context), timeout_s=300)  # fmt: skip
    # The sandbox's own image lacks the variable: only the task's image makes gold score 1.0.
    sandbox = DockerSandbox(settings(image_tag()))
    try:
        task = image_task(tmp_path / "bench", TASK_TAG)
        assert task.solution_dir is not None
        grade = grade_variant(task, task.solution_dir, PytestGrader(sandbox), tmp_path / "ws")
        assert grade.score == 1.0 and grade.resolved, grade.invalid_reason
        untouched = grade_variant(task, None, PytestGrader(sandbox), tmp_path / "ws")
        assert untouched.score < 1.0 and not untouched.invalid
    finally:
        sandbox.close()


def test_an_image_task_outside_the_container_sandbox_says_what_to_use(tmp_path: Path) -> None:
    task = image_task(tmp_path / "bench", "example.org/some/image:1")
    spec = TaskRunSpec(
        workflow=builtin_workflow("builder-only"),
        task=task,
        model=ScriptedModel([]),
        sandbox=LocalSandbox(),
        prices=DEFAULT_PRICES,
        run_dir=tmp_path / "run",
        run_id="r",
        seed=0,
    )
    record = run_task(spec)
    assert record.run_status == "error"
    events = (tmp_path / "run" / "events.jsonl").read_text()
    assert "use sandbox='docker'" in events and "example.org/some/image:1" in events
