"""`loopwright tasks import harbor`: a Harbor task built in the test (its Dockerfile FROM the local
test image) is imported, registered, and passes `bench validate --sandbox docker`; tasks that
cannot be converted are listed with the reason; an agent cannot plant a reward."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.sandbox import DockerSandbox, TaskContainers, create_workspace, remove_workspace
from loopwright.sandbox._images import attach_task_container
from loopwright.scoring import CommandGrader
from loopwright.tasks import load_benchmark, load_task, user_benchmarks
from loopwright.tasks.importers.harbor import grading_command, harbor_task_dirs, import_harbor
from tests.containers import docker_sandbox_or_skip, image_tag, settings

GREET_BUGGY = 'def greet(name):\n    return "hi"\n'
GREET_GOLD = 'def greet(name):\n    return "hello, " + name\n'


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def harbor_task(parent: Path, name: str = "greet-task", **overrides: str | None) -> Path:
    """A Harbor task: /app/greet.py copied into the image, test.sh writing a reward of 0, 0.5 or
    1 (two checks), solve.sh fixing greet.py. `overrides` replace (None: remove) files."""
    files: dict[str, str | None] = {
        "instruction.md": "Make `greet(name)` in /app/greet.py return `hello, <name>`.\n",
        "task.toml": """
            version = "1.0"

            [metadata]
            difficulty = "easy"
            category = "programming"

            [verifier]
            timeout_sec = 60.0

            [agent]
            timeout_sec = 120.0

            [environment]
            build_timeout_sec = 600.0
            cpus = 1
            memory_mb = 2048
        """,
        "environment/Dockerfile": f"FROM {image_tag()}\nWORKDIR /app\nCOPY greet.py /app/greet.py\n",
        "environment/greet.py": GREET_BUGGY,
        "tests/test.sh": """
            #!/bin/bash
            mkdir -p /logs/verifier
            python3 /tests/check.py > /logs/verifier/reward.txt
        """,
        "tests/check.py": """
            import sys

            sys.path.insert(0, "/app")
            from greet import greet

            checks = [greet("bob") == "hello, bob", greet("") == "hello, "]
            print(sum(checks) / len(checks))
        """,
        "solution/solve.sh": f"""
            #!/bin/bash
            cd /app
            cat > greet.py <<'EOF'
            {GREET_GOLD.replace(chr(10), chr(10) + " " * 12)}
            EOF
        """,
    }
    files.update(overrides)
    root = parent / name
    write(root, {k: v for k, v in files.items() if v is not None})
    return root


@pytest.fixture
def engine_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """LOOPWRIGHT_CONTAINER_* as CI sets them, for the CLI (skipped, saying why, without an
    engine: in CI there is one)."""
    docker_sandbox_or_skip()
    chosen = settings(image_tag())
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_IMAGE", chosen.image)
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS", " ".join(chosen.global_flags))
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_RUN_FLAGS", " ".join(chosen.run_flags))
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "envs"))  # the build locks' home
    yield


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_grading_command_exports_the_verifier_env_quoted() -> None:
    command = grading_command({"A": "x y", "B": "it's"})
    assert "export A='x y'; export B='it'\"'\"'s';" in command
    assert command.index("find /tests /logs -mindepth 1 -delete") < command.index("test.sh")


def test_a_folder_without_harbor_tasks_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds no Harbor task"):
        harbor_task_dirs(tmp_path)


@pytest.mark.docker
def test_a_harbor_task_imports_registers_and_validates_under_docker(
    tmp_path: Path, engine_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    harbor_task(tmp_path / "harbor")
    out = tmp_path / "imported"
    code, stdout, err = run(
        capsys, "tasks", "import", "harbor", str(tmp_path / "harbor"), "--out", str(out),
        "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(stdout)
    assert [t["task"] for t in report["imported"]] == ["greet-task"] and not report["skipped"]
    assert report["imported"][0]["gold"] and report["registered_as"] == "imported"
    task = load_task(out / "greet-task")
    assert (task.repo_dir / "greet.py").read_text() == GREET_BUGGY  # the image's WORKDIR
    assert (out / "greet-task" / "solution" / "greet.py").read_text().strip() == GREET_GOLD.strip()
    table = task.spec.environment
    assert table is not None and table.dockerfile == "environment/Dockerfile"
    assert table.workdir == "/app" and task.spec.grading.runner == "command"
    assert task.level == 1 and task.spec.timeouts.agent == 120.0
    entry = user_benchmarks().find("imported")
    assert entry is not None and entry.source == "harbor"

    code, stdout, err = run(
        capsys, "bench", "validate", "imported", "--sandbox", "docker", "--json"
    )
    assert code == 0, stdout + err
    rows = {r["variant"]: r for r in json.loads(stdout)}
    assert rows["gold"]["score"] == 1.0 and rows["gold"]["resolved"]
    assert rows["untouched"]["score"] == 0.0 and not rows["untouched"]["invalid"]


@pytest.mark.docker
def test_tasks_that_cannot_be_converted_are_listed_with_the_reason(
    tmp_path: Path, engine_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "harbor"
    harbor_task(source, "good")
    harbor_task(source, "no-tests", **{"tests/test.sh": None})
    compose = "services:\n  main:\n    build: .\n  db:\n    image: postgres\n"
    harbor_task(source, "compose", **{"environment/docker-compose.yaml": compose})
    harbor_task(source, "bad-solve", **{"solution/solve.sh": "echo cannot-solve >&2\nexit 4\n"})
    harbor_task(source, "bad-build", **{"environment/Dockerfile": "FROM localhost/absent:x\n"})
    code, stdout, _ = run(
        capsys, "tasks", "import", "harbor", str(source), "--out", str(tmp_path / "out"), "--json"
    )
    assert code == 1
    report = json.loads(stdout)
    assert [t["task"] for t in report["imported"]] == ["good"]
    reasons = {Path(s["source"]).name: s["reason"] for s in report["skipped"]}
    assert "tests/test.sh is missing" in reasons["no-tests"]
    assert "docker-compose.yaml starts 2 services" in reasons["compose"]
    assert (
        "solve.sh failed (exit 4)" in reasons["bad-solve"]
        and "cannot-solve" in reasons["bad-solve"]
    )
    assert "image build failed" in reasons["bad-build"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["good"]  # no half-written task
    assert load_benchmark("out").tasks[0].id == "good"


@pytest.mark.docker
def test_a_reward_an_agent_planted_in_logs_or_tests_is_wiped_before_grading(
    tmp_path: Path, engine_env: None
) -> None:
    result = import_harbor(
        harbor_task(tmp_path / "harbor"), tmp_path / "out", TaskContainers(settings(image_tag()))
    )
    task = load_task(result.out / "greet-task")
    sandbox = DockerSandbox(settings(image_tag()))
    workspace = create_workspace(task.repo_dir, tmp_path / "ws")
    try:
        attach_task_container(sandbox, task, workspace.path)
        # The hostile agent: a full reward, read-only, in a read-only verifier directory, and a
        # test.sh of its own in /tests, before the grader runs (same container).
        hostile = (
            "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && "
            "chmod 444 /logs/verifier/reward.txt && chmod 555 /logs/verifier && "
            "echo 'exit 0' > /tests/test.sh && echo 'print(1)' > /tests/planted.py"
        )
        planted = sandbox.run(["sh", "-c", hostile], cwd=workspace.path, timeout_s=30)
        assert planted.exit_code == 0, planted.stderr
        grade = CommandGrader(sandbox).grade(workspace.path, task)
        assert grade.score == 0.0 and not grade.invalid, grade.invalid_reason
    finally:
        sandbox.release(workspace.path)
        sandbox.close()
        remove_workspace(workspace)
        shutil.rmtree(tmp_path / "ws", ignore_errors=True)
