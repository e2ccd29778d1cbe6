"""Grading in the container sandbox: a mini task validates there (gold 1.0, flawed below), the
grader's anti-tamper kit works inside the container, and scripted hostile agents whose
commands run in the same container as the grader gain nothing: no network, no hidden tests or
solution in sight, no process of theirs alive at grading, no forged result."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, Reply, ScriptedModel, ToolCall
from loopwright.sandbox import DockerSandbox, create_workspace, remove_workspace
from loopwright.scoring import PytestGrader
from loopwright.tasks import Task, load_benchmark
from loopwright.workflow import workflow_from_text
from tests.containers import docker_sandbox_or_skip, image_tag, settings
from tests.sandbox.conftest import processes_with, sleep_marker
from tests.scoring.hostile import WORKFLOW, copy_task, gold_steps, run_agent, shell, write
from tests.scoring.test_hostile import TRICKS
from tests.taskfactory import PARTIAL, make_calc_task, write_files

TASK = "l1-slugify"


pytestmark = pytest.mark.docker


@pytest.fixture
def docker() -> DockerSandbox:
    return docker_sandbox_or_skip()


@pytest.fixture
def task(tmp_path: Path, docker: DockerSandbox) -> Task:
    return copy_task(TASK, tmp_path / "bench")


def test_bench_validate_with_the_docker_sandbox_passes_a_mini_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    docker_sandbox_or_skip()
    chosen = settings(image_tag())
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_IMAGE", chosen.image)
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS", " ".join(chosen.global_flags))
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_RUN_FLAGS", " ".join(chosen.run_flags))
    copy_task(TASK, tmp_path / "bench")
    code = main(["bench", "validate", str(tmp_path / "bench"), "--sandbox", "docker"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "tests sandboxed with docker" in out
    flawed = len(load_benchmark(str(tmp_path / "bench")).tasks[0].spec.flawed)
    assert out.count(" ok") == flawed + 2  # gold, each flawed variant, the untouched repo


def test_the_gold_written_by_an_agent_in_the_container_scores_one(
    task: Task, docker: DockerSandbox, tmp_path: Path
) -> None:
    _, grade = run_agent(task, gold_steps(task), docker, tmp_path / "run")
    assert grade.sandbox == "docker"
    assert (grade.score, grade.resolved, grade.invalid) == (1.0, True, False)


def test_an_agent_reaching_for_the_network_gets_nowhere(
    task: Task, docker: DockerSandbox, tmp_path: Path
) -> None:
    probe = (
        "python3 -c \"import socket\ntry:\n socket.create_connection(('10.255.255.1', 80), "
        "timeout=5); print('CONNECTED')\nexcept OSError as e: print('NO NETWORK', e)\" > net.txt"
    )
    run_agent(task, [shell(probe)], docker, tmp_path / "run")
    diff = (tmp_path / "run" / "diff.patch").read_text()
    assert "+NO NETWORK" in diff and "unreachable" in diff and "CONNECTED" not in diff


def test_an_agent_searching_the_machine_finds_no_hidden_test_or_solution(
    task: Task, docker: DockerSandbox, tmp_path: Path
) -> None:
    marker = "lw_hidden_marker_" + sleep_marker().replace(".", "")
    for place in (task.root / "tests", task.solution_dir):
        assert place is not None
        for path in place.rglob("*.py"):
            path.write_text(path.read_text() + f"\n# {marker}\n")
    search = (
        f"echo {marker} > /tmp/mine.txt; grep -rl --exclude-dir=proc --exclude-dir=sys "
        f"--exclude-dir=testbed {marker} / > /tmp/found.txt; cp /tmp/found.txt found.txt"
    )
    run_agent(task, [shell(search)], docker, tmp_path / "run")
    diff = (tmp_path / "run" / "diff.patch").read_text()
    found = [line[1:] for line in diff.splitlines() if line.startswith("+/")]
    assert found == ["/tmp/mine.txt"]  # the search ran, and found only the agent's own file


def test_a_daemon_left_by_the_agent_is_dead_before_grading(
    task: Task, docker: DockerSandbox, tmp_path: Path
) -> None:
    hidden = sorted({t.split("::")[0] for t in task.spec.fail_to_pass})
    fake = "\n".join(f"def {t.split('::')[1]}():\n    pass\n" for t in task.spec.fail_to_pass)
    write_fake = "; ".join(f"cp /tmp/fake.py {path}" for path in hidden)
    marker = sleep_marker()
    daemon = (
        f"setsid sh -c 'while :; do {write_fake}; sleep 0.02; done' >/dev/null 2>&1 & "
        f"(setsid sleep {marker} &); echo started"
    )
    steps = [write("fake.py", fake), shell("cp fake.py /tmp/fake.py && rm fake.py"), shell(daemon)]
    _, grade = run_agent(task, steps, docker, tmp_path / "run")
    assert processes_with(marker) == []
    assert not grade.invalid and grade.f2p_passed == 0  # the real hidden tests ran and failed
    assert grade.score == 0.0


@pytest.fixture
def calc_grade(tmp_path: Path, docker: DockerSandbox) -> Iterator[object]:
    task = make_calc_task(tmp_path / "bench")
    grader = PytestGrader(docker)
    made = []

    def grade(files: dict[str, str]) -> tuple[float, str | None]:
        ws = create_workspace(task.repo_dir, tmp_path / "ws")
        made.append(ws)
        write_files(ws.path, {"calc/core.py": PARTIAL, **files})
        result = grader.grade(ws.path, task)
        docker.release(ws.path)
        return result.score, result.invalid_reason

    yield grade
    for ws in made:
        remove_workspace(ws)


@pytest.mark.parametrize("files", list(TRICKS.values()), ids=list(TRICKS))
def test_a_forged_result_does_not_raise_the_score(
    calc_grade: object, files: dict[str, str]
) -> None:
    assert callable(calc_grade)
    honest, _ = calc_grade({})
    forged, reason = calc_grade(files)
    assert honest == pytest.approx(3 / 6)
    assert forged <= honest, reason


def test_the_guard_catches_pytest_patched_by_the_code_under_test(calc_grade: object) -> None:
    assert callable(calc_grade)
    plant = (
        "import _pytest.runner\n"
        "real = _pytest.runner.call_and_report\n"
        "def forged(item, when, log=True, **kw):\n"
        "    report = real(item, when, log=False, **kw)\n"
        "    report.outcome = 'passed'\n"
        "    item.ihook.pytest_runtest_logreport(report=report)\n"
        "    return report\n"
        "_pytest.runner.call_and_report = forged\n"
        "from calc.core import add\n"
    )
    score, reason = calc_grade({"calc/__init__.py": plant})
    assert score == 0.0 and reason is not None and re.match("tamper:", reason), reason
    assert "call_and_report was replaced" in reason


def test_the_kit_is_read_only_to_the_code_under_test(calc_grade: object) -> None:
    assert callable(calc_grade)
    escape = (
        "import sys, pathlib\n"
        "kit = pathlib.Path(sys.path[0])\n"
        "try:\n"
        "    (kit / 'xml_forged.py').write_text('x = 1')\n"
        "    raise SystemExit('the kit was writable')\n"
        "except OSError:\n"
        "    pass\n"
        "from calc.core import add\n"
    )
    score, reason = calc_grade({"calc/__init__.py": escape})
    assert score == pytest.approx(3 / 6) and reason is None


def test_no_container_outlives_a_grade(tmp_path: Path, docker: DockerSandbox) -> None:
    task = make_calc_task(tmp_path / "bench")
    ws = create_workspace(task.repo_dir, tmp_path / "ws")
    PytestGrader(docker).grade(ws.path, task)
    docker.release(ws.path)
    remove_workspace(ws)
    out = docker.engine.call("ps", "-a", "-q", "--filter", f"label=loopwright.workspace={ws.path}")
    assert out.split() == []
    assert shutil.which(docker.engine.cli)


def test_the_agents_test_tool_runs_the_containers_python(
    task: Task, docker: DockerSandbox, tmp_path: Path
) -> None:
    workflow = workflow_from_text(
        WORKFLOW.replace("[write_file, run_command]", "[write_file, run_command, run_tests]"),
        "yaml",
    )
    replies: list[Reply] = [
        ToolCall.make("t", "run_tests", path="tests"),
        ToolCall.make("done", "finish", summary="done"),
    ]
    run_dir = tmp_path / "run"
    spec = TaskRunSpec(
        workflow=workflow,
        task=task,
        model=ScriptedModel(replies),
        sandbox=docker,
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="run",
        seed=0,
    )
    run_task(spec)
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    (call,) = [e for e in events if e["type"] == "tool_call" and e["tool"] == "run_tests"]
    assert call["ok"] and call["error"] is None and call["output_chars"] > 0
