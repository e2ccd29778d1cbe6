"""Harbor's current task.toml schema, Terminal-Bench 1's task.yaml, and the import's bookkeeping,
with a stand-in for the container engine (the image's WORKDIR and solve.sh's effect written by
hand): what is decided from the task's files alone, without building anything."""

from __future__ import annotations

import shutil
import textwrap
import tomllib
from pathlib import Path

import pytest

from loopwright.tasks import Task, load_task
from loopwright.tasks.importers.harbor import UNVALIDATED_NOTE, import_harbor

GREET_BUGGY = 'def greet(name):\n    return "hi"\n'
GREET_GOLD = 'def greet(name):\n    return "hello, " + name\n'
TEST_SH = (
    "#!/bin/bash\nmkdir -p /logs/verifier\npython3 /tests/check.py > /logs/verifier/reward.txt\n"
)
CURRENT_TOML = """
schema_version = "1.3"

[task]
name = "acme/greet"
description = "Make greet() say hello"
keywords = ["python"]

[metadata]
category = "programming"

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 120.0

[environment]
network_mode = "{mode}"
cpus = 1
"""


class _Outcome:
    exit_code = 0
    timed_out = False
    stdout = ""
    stderr = ""


class FakeContainers:
    """The image's WORKDIR holds greet.py (as the Dockerfile copies it); solve.sh writes the
    gold greet.py."""

    def image(self, task: Task) -> str:
        return "fake:image"

    def copy_out(self, task: Task, inside: str, dest: Path) -> bool:
        (dest / "greet.py").write_text(GREET_BUGGY)
        return True

    def run_script(
        self, task: Task, scripts: Path, entry: str, mount: str, solved: Path
    ) -> _Outcome:
        shutil.copytree(task.repo_dir, solved)
        (solved / "greet.py").write_text(GREET_GOLD)
        return _Outcome()


def write(root: Path, files: dict[str, str | None]) -> Path:
    for rel, text in files.items():
        if text is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def harbor_task(parent: Path, name: str = "greet", **files: str | None) -> Path:
    base: dict[str, str | None] = {
        "instruction.md": "Make greet(name) return 'hello, <name>'.\n",
        "task.toml": CURRENT_TOML.format(mode="public"),
        "environment/Dockerfile": "FROM base\nWORKDIR /app\nCOPY greet.py /app/greet.py\n",
        "environment/greet.py": GREET_BUGGY,
        "tests/test.sh": TEST_SH,
        "tests/check.py": "print(1.0)\n",
        "solution/solve.sh": "#!/bin/bash\necho fixed\n",
    }
    base.update(files)
    return write(parent / name, base)


def _toml(task: Path) -> dict[str, object]:
    return tomllib.loads((task / "task.toml").read_text())


@pytest.mark.parametrize(
    ("environment", "allowed"),
    [
        ('network_mode = "public"', True),
        ('network_mode = "no-network"', False),
        ("allow_internet = false", False),
        ("allow_internet = true", True),
        ("gpus = 0", True),  # neither: Harbor's default is a public network
    ],
)
def test_the_network_follows_the_schema_and_its_default(
    tmp_path: Path, environment: str, allowed: bool
) -> None:
    toml = CURRENT_TOML.replace('network_mode = "{mode}"', environment)
    harbor_task(tmp_path / "src", **{"task.toml": toml})
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    assert not done.skipped, done.skipped
    assert load_task(tmp_path / "out" / "greet").spec.allow_internet is allowed


def test_a_current_schema_task_keeps_its_description_and_network(tmp_path: Path) -> None:
    harbor_task(tmp_path / "src")
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    task = load_task(tmp_path / "out" / "greet")
    assert task.spec.summary == "Make greet() say hello" and task.spec.allow_internet
    assert done.imported[0].gold and (task.root / "solution" / "greet.py").read_text() == GREET_GOLD


def test_an_allowlist_gets_the_network_with_a_note(tmp_path: Path) -> None:
    toml = CURRENT_TOML.format(mode="allowlist") + 'allowed_hosts = ["pypi.org"]\n'
    harbor_task(tmp_path / "src", **{"task.toml": toml})
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    assert load_task(tmp_path / "out" / "greet").spec.allow_internet
    assert any("allowlist (pypi.org)" in n for n in done.imported[0].notes)


def test_a_verifier_that_writes_no_reward_is_refused_at_import(tmp_path: Path) -> None:
    harbor_task(tmp_path / "src", **{"tests/test.sh": "#!/bin/bash\npytest /tests\n",
                                     "tests/check.py": "print(1)\n"})  # fmt: skip
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    assert "writes no reward" in done.skipped[0].reason
    assert done.skipped[0].seconds >= 0.0
    assert not (tmp_path / "out").exists()  # a failed import leaves no empty --out


def test_a_task_without_a_solution_is_imported_unvalidated(tmp_path: Path) -> None:
    harbor_task(tmp_path / "src", **{"solution/solve.sh": None})
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    assert [t.gold for t in done.imported] == [False]
    assert UNVALIDATED_NOTE in done.imported[0].notes
    assert load_task(tmp_path / "out" / "greet").gold is None


def test_a_relative_out_is_taken_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    harbor_task(tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    done = import_harbor(Path("src"), Path("rel/out"), FakeContainers())
    assert done.out == tmp_path / "rel" / "out" and (done.out / "greet" / "task.toml").is_file()


def test_compose_of_one_service_uses_its_dockerfile_several_are_refused(tmp_path: Path) -> None:
    one = "services:\n  main:\n    build: .\n"
    two = one + "  db:\n    image: postgres\n"
    harbor_task(tmp_path / "src", "one", **{"environment/docker-compose.yaml": one})
    harbor_task(tmp_path / "src", "two", **{"environment/docker-compose.yaml": two})
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    assert [t.task_id for t in done.imported] == ["one"]
    assert "starts 2 services (main, db)" in done.skipped[0].reason


TB1_YAML = """
instruction: |-
  Make greet(name) in /app/greet.py return "hello, <name>".
author_email: someone@example.com
difficulty: easy
category: software-engineering
tags: [python]
parser_name: pytest
max_agent_timeout_sec: 240.0
max_test_timeout_sec: 45.0
run_tests_in_same_shell: false
"""


def tb1_task(parent: Path, name: str = "greet-tb1", **files: str | None) -> Path:
    base: dict[str, str | None] = {
        "task.yaml": TB1_YAML,
        "Dockerfile": "FROM base\nWORKDIR /app\nCOPY greet.py /app/greet.py\n",
        "greet.py": GREET_BUGGY,
        "docker-compose.yaml": "services:\n  client:\n    build:\n      dockerfile: Dockerfile\n",
        "run-tests.sh": "#!/bin/bash\ncd /app && python3 -m pytest $TEST_DIR/test_outputs.py\n",
        "tests/test_outputs.py": "def test_greet():\n    assert True\n",
        "solution.sh": "#!/bin/bash\necho fixed\n",
    }
    base.update(files)
    return write(parent / name, base)


def test_a_terminal_bench_1_task_imports(tmp_path: Path) -> None:
    tb1_task(tmp_path / "src")
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    assert not done.skipped, done.skipped
    task = load_task(tmp_path / "out" / "greet-tb1")
    assert task.instruction.startswith("Make greet(name) in /app/greet.py")
    assert (task.spec.timeouts.agent, task.spec.timeouts.grade, task.spec.level) == (240, 45, 1)
    assert (task.root / "environment" / "greet.py").is_file()
    assert not (task.root / "environment" / "task.yaml").exists()
    verifier = (task.root / "tests" / "test.sh").read_text()
    assert "bash /tests/run-tests.sh" in verifier and "reward.txt" in verifier
    assert (task.root / "tests" / "run-tests.sh").is_file()
    assert (task.root / "solution" / "greet.py").read_text() == GREET_GOLD
    assert any("Terminal-Bench 1" in n for n in done.imported[0].notes)


def test_a_terminal_bench_1_task_without_run_tests_says_so(tmp_path: Path) -> None:
    tb1_task(tmp_path / "src", **{"run-tests.sh": None})
    done = import_harbor(tmp_path / "src", tmp_path / "out", FakeContainers())
    assert "run-tests.sh is missing" in done.skipped[0].reason
