"""Terminal-Bench 1 tasks (`task.yaml`) laid out as Harbor tasks, which the Harbor importer then
converts (docs/importing.md, "Terminal-Bench 1").

A Terminal-Bench 1 task is `task.yaml` (the instruction, difficulty, category, timeouts, the
output parser), a `Dockerfile` (its build context: the task folder) with a `docker-compose.yaml`
that starts one service from it, `run-tests.sh` (run in the container with the tests copied to
`$TEST_DIR`), `tests/`, and `solution.sh` (or a `solution.yaml` of commands). Its harness judges
the run by the test output (pytest's, by default): all tests passed or not. Here the verifier
runs `run-tests.sh` the same way and writes reward 1 when it exits 0, else 0.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

__all__ = ["TB1_FILE", "TB1_NOTE", "ShapeError", "check_one_service", "harbor_shape"]

TB1_FILE = "task.yaml"
TB1_NOTE = "Terminal-Bench 1 task: graded by run-tests.sh's exit code (reward 1 or 0)"
_NOT_CONTEXT = {
    TB1_FILE, "tests", "run-tests.sh", "solution.sh", "solution.yaml", "docker-compose.yaml",
    "docker-compose.yml",
}  # fmt: skip
_VERIFIER = """#!/bin/bash
# Written by loopwright's Terminal-Bench 1 import: run-tests.sh's exit code as the reward.
export TEST_DIR=/tests
bash /tests/run-tests.sh
status=$?
mkdir -p /logs/verifier
if [ "$status" -eq 0 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
exit "$status"
"""


class ShapeError(Exception):
    """The Terminal-Bench 1 task cannot be laid out as a Harbor task: the message says why."""


def harbor_shape(task_dir: Path, dest: Path) -> Path:
    """Write the Terminal-Bench 1 task at `task_dir` as a Harbor task folder `dest`; return it.
    Raises ShapeError saying what is missing or unsupported."""
    meta = _task_yaml(task_dir)
    for rel in ("Dockerfile", "run-tests.sh"):
        if not (task_dir / rel).is_file():
            raise ShapeError(f"{rel} is missing (a Terminal-Bench 1 task has {rel})")
    check_one_service(task_dir)
    if (task_dir / "tests" / "test.sh").exists():
        raise ShapeError("tests/test.sh exists: the verifier loopwright writes would replace it")
    dest.mkdir(parents=True)
    (dest / "instruction.md").write_text(_instruction(meta).rstrip() + "\n", encoding="utf-8")
    (dest / "task.toml").write_text(_task_toml(meta), encoding="utf-8")
    environment = dest / "environment"
    environment.mkdir()
    for entry in sorted(task_dir.iterdir()):
        if entry.name not in _NOT_CONTEXT:
            _copy(entry, environment / entry.name)
    tests = dest / "tests"
    if (task_dir / "tests").is_dir():
        shutil.copytree(task_dir / "tests", tests, symlinks=True)
    tests.mkdir(exist_ok=True)
    shutil.copy2(task_dir / "run-tests.sh", tests / "run-tests.sh")
    (tests / "test.sh").write_text(_VERIFIER, encoding="utf-8")
    if (task_dir / "solution.sh").is_file():
        (dest / "solution").mkdir()
        shutil.copy2(task_dir / "solution.sh", dest / "solution" / "solve.sh")
    return dest


def _task_yaml(task_dir: Path) -> dict[str, Any]:
    try:
        meta = yaml.safe_load((task_dir / TB1_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ShapeError(f"{TB1_FILE} is not readable YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise ShapeError(f"{TB1_FILE} is not a mapping")
    return meta


def _instruction(meta: dict[str, Any]) -> str:
    """`instruction`, else the `base` entry of the older `descriptions` list."""
    text = meta.get("instruction")
    if not text:
        described = meta.get("descriptions") or []
        found = [d for d in described if isinstance(d, dict) and d.get("key") == "base"]
        text = (found or [{}])[0].get("description")
    if not isinstance(text, str) or not text.strip():
        raise ShapeError(f"{TB1_FILE} has no instruction")
    return text


def check_one_service(task_dir: Path) -> bool:
    """True when `task_dir` has a compose file of one service (its Dockerfile is then the
    environment); ShapeError for one of several services, which cannot be one workspace
    container."""
    for name in ("docker-compose.yaml", "docker-compose.yml"):
        path = task_dir / name
        if not path.is_file():
            continue
        try:
            compose = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ShapeError(f"{name} is not readable YAML: {exc}") from None
        services = compose.get("services") if isinstance(compose, dict) else None
        if isinstance(services, dict) and len(services) > 1:
            raise ShapeError(
                f"{name} starts {len(services)} services ({', '.join(map(str, services))}): "
                "loopwright runs one container per workspace (docs/importing.md, 'Compose')"
            )
        return True
    return False


def _task_toml(meta: dict[str, Any]) -> str:
    lines = ['schema_version = "1.0"', "", "[metadata]"]
    for key in ("difficulty", "category"):
        if isinstance(meta.get(key), str):
            lines.append(f"{key} = {_q(meta[key])}")
    for table, key in (("agent", "max_agent_timeout_sec"), ("verifier", "max_test_timeout_sec")):
        value = meta.get(key)
        if isinstance(value, int | float) and value > 0:
            lines += ["", f"[{table}]", f"timeout_sec = {float(value)}"]
    return "\n".join(lines) + "\n"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _copy(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)
