"""A task's `dockerfile` is built once per content into a content-addressed tag, reused after,
built once by concurrent builders, and a failed build is an error that is not cached."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.evaluation._task_run import GRADE_FILE
from loopwright.models import DEFAULT_PRICES, ScriptedModel
from loopwright.sandbox import (
    IMAGE_REPOSITORY,
    BuiltImage,
    DockerSandbox,
    EnvironmentBuildError,
    ImageBuilder,
    LocalSandbox,
    Sandbox,
    image_key,
)
from loopwright.scoring import GradeResult, PytestGrader, grade_variant
from loopwright.tasks import Task, load_task
from loopwright.workflow import builtin_workflow
from tests.containers import docker_sandbox_or_skip, image_tag, settings
from tests.scoring.test_task_image import IMAGE_CHECK
from tests.taskfactory import make_calc_task


def dockerfile_task(parent: Path, body: str, task_id: str = "calc-ops") -> Task:
    """The calc task with `[environment] dockerfile`, its context holding a nonce (every test
    run builds afresh: the tag is content-addressed)."""
    task = make_calc_task(
        parent,
        task_id,
        extra_hidden=IMAGE_CHECK,
        extra_f2p=["tests/test_image.py::test_runs_in_the_task_image"],
    )
    env = task.root / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text(body)
    (env / "nonce.txt").write_text(secrets.token_hex(8))
    toml = task.root / "task.toml"
    toml.write_text(toml.read_text() + '\n[environment]\ndockerfile = "environment/Dockerfile"\n')
    return load_task(task.root)


@pytest.fixture
def builder(tmp_path: Path) -> Iterator[ImageBuilder]:
    shared = docker_sandbox_or_skip()
    made = ImageBuilder(shared.engine, locks=tmp_path / "locks")
    yield made


def _drop(builder: ImageBuilder, *tags: str) -> None:
    for tag in tags:
        if builder.engine.image_exists(tag):
            builder.engine.call("rmi", "-f", tag)


def test_the_image_key_follows_the_build_context(tmp_path: Path) -> None:
    task = dockerfile_task(tmp_path / "a", "FROM scratch\n")
    same = load_task(task.root)
    first = image_key(task)
    assert image_key(same) == first
    (task.root / "environment" / "extra.txt").write_text("x")
    assert image_key(load_task(task.root)) != first
    (task.root / "repo" / "calc" / "other.py").write_text("")  # not in the build context
    second = image_key(load_task(task.root))
    (task.root / "repo" / "calc" / "more.py").write_text("")
    assert image_key(load_task(task.root)) == second


@pytest.mark.docker
def test_a_dockerfile_is_built_once_then_reused(tmp_path: Path, builder: ImageBuilder) -> None:
    body = f"FROM {image_tag()}\nENV LW_TASK_IMAGE=yes\n"
    task = dockerfile_task(tmp_path / "bench", body)
    try:
        first = builder.ensure(task)
        assert first.built and first.tag.startswith(f"{IMAGE_REPOSITORY}:")
        again = builder.ensure(load_task(task.root))
        assert again == BuiltImage(first.tag, built=False)
        assert builder.engine.image_exists(first.tag)
    finally:
        _drop(builder, builder.tag(task))


@pytest.mark.docker
def test_a_failed_build_names_the_command_and_output_and_is_not_cached(
    tmp_path: Path, builder: ImageBuilder
) -> None:
    body = f"FROM {image_tag()}\nRUN echo the-build-went-wrong && false\n"
    task = dockerfile_task(tmp_path / "bench", body)
    for _ in range(2):  # the second attempt builds again: the failure was not cached
        with pytest.raises(EnvironmentBuildError) as err:
            builder.ensure(task)
        message = str(err.value)
        assert "build" in message and "Dockerfile" in message and "calc-ops" in message
        assert "the-build-went-wrong" in message
        assert not builder.engine.image_exists(builder.tag(task))


@pytest.mark.docker
def test_a_missing_base_image_is_not_pulled(tmp_path: Path, builder: ImageBuilder) -> None:
    task = dockerfile_task(tmp_path / "bench", "FROM localhost/no-such-image-lw:none\n")
    with pytest.raises(EnvironmentBuildError) as err:
        builder.ensure(task)
    assert "present locally" in str(err.value)


@pytest.mark.docker
def test_concurrent_builders_of_one_tag_build_it_once(
    tmp_path: Path, builder: ImageBuilder
) -> None:
    body = f"FROM {image_tag()}\nENV LW_TASK_IMAGE=yes\n"
    task = dockerfile_task(tmp_path / "bench", body)
    results: list[BuiltImage] = []
    errors: list[BaseException] = []

    def build() -> None:
        other = ImageBuilder(builder.engine, locks=builder.locks)  # another builder, one lock dir
        try:
            results.append(other.ensure(load_task(task.root)))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert sorted(r.built for r in results) == [False, False, True]
        assert len({r.tag for r in results}) == 1
    finally:
        _drop(builder, builder.tag(task))


@pytest.mark.docker
def test_validate_grades_a_dockerfile_task_in_its_built_image(
    tmp_path: Path, builder: ImageBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "envs"))  # the build lock's home
    body = f"FROM {image_tag()}\nENV LW_TASK_IMAGE=yes\n"
    task = dockerfile_task(tmp_path / "bench", body)
    sandbox = DockerSandbox(settings(image_tag()))  # its own image lacks the variable
    try:
        assert task.solution_dir is not None
        grade = grade_variant(task, task.solution_dir, PytestGrader(sandbox), tmp_path / "ws")
        assert grade.score == 1.0 and grade.resolved, grade.invalid_reason
        untouched = grade_variant(task, None, PytestGrader(sandbox), tmp_path / "ws")
        assert untouched.score < 1.0 and not untouched.invalid
    finally:
        sandbox.close()
        _drop(builder, builder.tag(task))


def _spec(task: Task, sandbox: Sandbox, run_dir: Path) -> TaskRunSpec:
    return TaskRunSpec(
        workflow=builtin_workflow("builder-only"),
        task=task,
        model=ScriptedModel([]),
        sandbox=sandbox,
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="r",
        seed=0,
    )


def test_a_dockerfile_task_outside_the_container_sandbox_says_what_to_use(tmp_path: Path) -> None:
    task = dockerfile_task(tmp_path / "bench", "FROM scratch\n")
    record = run_task(_spec(task, LocalSandbox(), tmp_path / "run"))
    assert record.run_status == "error"
    events = (tmp_path / "run" / "events.jsonl").read_text()
    assert "use sandbox='docker'" in events and "environment/Dockerfile" in events


@pytest.mark.docker
def test_run_task_runs_and_grades_a_dockerfile_task_in_its_built_image(
    tmp_path: Path, builder: ImageBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "envs"))  # the build lock's home
    body = f"FROM {image_tag()}\nENV LW_TASK_IMAGE=yes\n"
    task = dockerfile_task(tmp_path / "bench", body)
    sandbox = DockerSandbox(settings(image_tag()))  # its own image lacks the variable
    try:
        run_task(_spec(task, sandbox, tmp_path / "run"))
        grade = GradeResult.model_validate_json((tmp_path / "run" / GRADE_FILE).read_text())
        # Untouched: only the image check passes, and it passes only in the task's image.
        assert not grade.invalid and grade.f2p_passed == 1, grade.invalid_reason
        assert builder.engine.image_exists(builder.tag(task))
    finally:
        sandbox.close()
        _drop(builder, builder.tag(task))


@pytest.mark.docker
def test_bench_prepare_builds_the_dockerfile_images_then_reuses_them(
    tmp_path: Path,
    builder: ImageBuilder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    chosen = settings(image_tag())
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS", " ".join(chosen.global_flags))
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_RUN_FLAGS", " ".join(chosen.run_flags))
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "envs"))
    task = dockerfile_task(tmp_path / "bench", f"FROM {image_tag()}\nENV LW_TASK_IMAGE=yes\n")
    try:
        built = []
        for _ in range(2):
            assert main(["bench", "prepare", str(tmp_path / "bench"), "--json"]) == 0
            rows = json.loads(capsys.readouterr().out)
            assert [r["image"] for r in rows] == [builder.tag(task)]
            built.append(rows[0]["built"])
        assert built == [True, False]
    finally:
        _drop(builder, builder.tag(task))
