"""A Harbor task folder read (`parse_task`) and its loopwright task.toml written (`task_toml`):
the files it must have, the reward file its verifier must write, the network by Harbor's schema
and defaults (1.3's `network_mode`, the older `allow_internet`), the workspace at the
Dockerfile's last WORKDIR, the `[grading] command` that runs test.sh (docs/importing.md,
"Harbor")."""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopwright.tasks.importers._tb1 import ShapeError, check_one_service

__all__ = [
    "DEFAULT_WORKDIR",
    "HARBOR_TESTS_DIR",
    "NETWORK_MODES",
    "SCRATCH",
    "Parsed",
    "SkipTask",
    "grading_command",
    "parse_task",
    "task_toml",
]

HARBOR_TESTS_DIR = ".harbor-tests"
"""Where the hidden tests land in the workspace at grading (copied to /tests by the command)."""
DEFAULT_WORKDIR = "/app"
SCRATCH = ("/tests", "/logs")
_LEVELS = {"easy": 1, "medium": 2, "hard": 3}


class SkipTask(Exception):
    """This task cannot be converted: the message says why."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """What a Harbor task folder says: its id, task.toml, workspace directory, network and
    notes for the user."""

    task_id: str
    config: dict[str, Any]
    workdir: str
    allow_internet: bool = False
    notes: tuple[str, ...] = ()


def parse_task(task_dir: Path) -> Parsed:
    for rel in ("instruction.md", "task.toml", "tests/test.sh"):
        if not (task_dir / rel).is_file():
            raise SkipTask(f"{rel} is missing")
    if not (task_dir / "instruction.md").read_text(encoding="utf-8").strip():
        raise SkipTask("instruction.md is empty")
    env_dir = task_dir / "environment"
    notes: tuple[str, ...] = ()
    try:
        if check_one_service(env_dir):
            notes = ("a docker-compose environment of one service: its Dockerfile is built; "
                     "the compose file's other settings are not used",)  # fmt: skip
    except ShapeError as exc:
        raise SkipTask(str(exc)) from None
    if not (env_dir / "Dockerfile").is_file():
        raise SkipTask("environment/Dockerfile is missing (prebuilt docker_image tasks: write "
                    "a one-line Dockerfile FROM that image, present locally)")  # fmt: skip
    try:
        config = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SkipTask(f"task.toml is not valid TOML: {exc}") from None
    _check_reward(task_dir / "tests")
    task_id = re.sub(r"[^a-z0-9_-]+", "-", task_dir.name.lower()).strip("-_")
    if not task_id:
        raise SkipTask(f"{task_dir.name!r} gives no usable task id")
    allow, network_notes = _network(config)
    workdir = _workdir(env_dir / "Dockerfile")
    return Parsed(task_id, config, workdir, allow, notes + network_notes)


def _check_reward(tests: Path) -> None:
    """The verifier must write /logs/verifier/reward.txt: test.sh or a file it runs names it.
    Checked here, not first at validate time (where gold and untouched would both be invalid)."""
    texts = [
        p.read_text(encoding="utf-8", errors="replace")
        for p in sorted(tests.rglob("*"))
        if p.is_file() and p.stat().st_size < 1_000_000
    ]
    if any("reward.txt" in t for t in texts):
        return
    if any("reward.json" in t for t in texts):
        raise SkipTask("tests/ writes only reward.json: loopwright reads reward.txt")
    raise SkipTask(
        "tests/test.sh writes no reward: nothing under tests/ names /logs/verifier/reward.txt "
        "(nor reward.json), so the verifier would give no score"
    )


NETWORK_MODES = ("public", "no-network", "allowlist")


def _network(config: dict[str, Any]) -> tuple[bool, tuple[str, ...]]:
    """Whether the task has a network, by Harbor's schema and its defaults: `[environment]
    network_mode` (1.3: public, no-network, allowlist), else the older `allow_internet`, else
    Harbor's default, public. loopwright has no allowlist: such a task gets the network, said
    in a note."""
    environment = config.get("environment") or {}
    mode = environment.get("network_mode")
    if mode is not None:
        if mode not in NETWORK_MODES:
            raise SkipTask(
                f"[environment] network_mode {mode!r} is not one of {', '.join(NETWORK_MODES)}"
            )
        if mode == "allowlist":
            hosts = ", ".join(map(str, environment.get("allowed_hosts") or [])) or "none"
            return True, (f"network_mode allowlist ({hosts}): the task gets the network, "
                          "unrestricted (loopwright has no host allowlist)",)  # fmt: skip
        return mode == "public", ()
    allow = environment.get("allow_internet")
    if allow is not None:
        return allow is True, ()
    return True, ()


def _workdir(dockerfile: Path) -> str:
    """The last absolute `WORKDIR` of the Dockerfile, else /app (Harbor's convention)."""
    text = dockerfile.read_text(encoding="utf-8")
    found: list[str] = re.findall(r"(?im)^\s*WORKDIR\s+(\S+)\s*$", text)
    if not found:
        return DEFAULT_WORKDIR
    last = found[-1].strip("\"'")
    if not last.startswith("/") or "$" in last or last == "/":
        raise SkipTask(f"the Dockerfile's WORKDIR {last!r} is not a fixed absolute directory")
    return last.rstrip("/")


def grading_command(verifier_env: dict[str, str]) -> str:
    """The `[grading] command` of an imported task: empty /tests and /logs (nothing an agent
    left there survives, even read-only), the hidden tests copied to /tests, `test.sh` run with
    bash (sh when the image has none), its reward file copied to `$LOOPWRIGHT_OUTPUT`."""
    exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in sorted(verifier_env.items()))
    return (
        "chmod -R u+rwX /tests /logs 2>/dev/null; "
        "find /tests /logs -mindepth 1 -delete || exit 3; "
        f"cp -R {HARBOR_TESTS_DIR}/. /tests/ && mkdir -p /logs/verifier /logs/agent || exit 3; "
        f"{exports}"
        "if command -v bash >/dev/null 2>&1; then bash /tests/test.sh; else sh /tests/test.sh; fi; "
        "status=$?; "
        'if [ -f /logs/verifier/reward.txt ]; then cp /logs/verifier/reward.txt "$LOOPWRIGHT_OUTPUT/reward.txt"; fi; '
        "exit $status"
    )


def task_toml(parsed: Parsed) -> str:
    cfg = parsed.config
    meta, agent, verifier = (cfg.get(k) or {} for k in ("metadata", "agent", "verifier"))
    level = _LEVELS.get(str(meta.get("difficulty", "medium")).lower(), 2)
    agent_s = float(agent.get("timeout_sec", 900))
    grade_s = float(verifier.get("timeout_sec", 180))
    env = {str(k): str(v) for k, v in (verifier.get("env") or {}).items()}
    lines = [
        "schema_version = 1",
        f"id = {_q(parsed.task_id)}",
        f"level = {level}",
        f"summary = {_q(_summary(cfg))}",
        f"test_dir = {_q(HARBOR_TESTS_DIR)}",
        f"allow_internet = {'true' if parsed.allow_internet else 'false'}",
        "",
        "[timeouts]",
        f"agent = {agent_s}",
        f"grade = {grade_s}",
        f"per_test = {grade_s}",
        "",
        "[environment]",
        'dockerfile = "environment/Dockerfile"',
        f"workdir = {_q(parsed.workdir)}",
        f"scratch = [{', '.join(_q(s) for s in SCRATCH)}]",
        "",
        "[grading]",
        'runner = "command"',
        f"command = {_q(grading_command(env))}",
        'reward = "reward.txt"',
    ]
    return "\n".join(lines) + "\n"


def _summary(cfg: dict[str, Any]) -> str:
    """`[task] description` (schema 1.1+), else its name, else `harbor: <category>`; one line,
    at most 100 characters."""
    task = cfg.get("task") or {}
    meta = cfg.get("metadata") or {}
    text = str(task.get("description") or task.get("name") or "").strip()
    if not text:
        text = "harbor: " + (str(meta.get("category", "")) or "imported from Harbor")
    first = text.splitlines()[0].strip()
    return first if len(first) <= 100 else first[:97] + "..."


def _q(text: str) -> str:
    """A TOML basic string."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
