"""The `[environment]` table of task.toml: what it accepts, and what it refuses with a reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.tasks import Environment, load_task
from tests.taskfactory import make_calc_task


def test_a_full_python_environment_is_accepted() -> None:
    env = Environment.model_validate(
        {
            "python": "3.11",
            "requirements": ["attrs==23.2.0"],
            "requirements_files": ["environment/requirements.txt"],
            "install": ["pip install -e ."],
            "env": {"MYPKG_MODE": "test"},
        }
    )
    assert not env.container and env.files == ["environment/requirements.txt"]


def test_an_image_is_a_container_environment() -> None:
    assert Environment(image="img:1").container
    assert Environment(dockerfile="environment/Dockerfile").files == ["environment/Dockerfile"]
    shaped = Environment(image="img:1", workdir="/app/", scratch=["/tests", "/logs"])
    assert shaped.workdir == "/app" and shaped.scratch == ["/tests", "/logs"]


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ({"python": "python3"}, "pattern"),
        ({"env": {"PATH": "/x"}}, "set by loopwright"),
        ({"env": {"PYTHONPATH": "/x"}}, "set by loopwright"),
        ({"env": {"LOOPWRIGHT_X": "1"}}, "set by loopwright"),
        ({"env": {"not a name": "1"}}, "not an environment variable name"),
        ({"requirements_files": ["../outside.txt"]}, "relative to the task directory"),
        ({"requirements_files": ["/etc/passwd"]}, "relative to the task directory"),
        ({"install": ["  "]}, "must not be empty"),
        ({"image": "a", "dockerfile": "environment/Dockerfile"}, "not both"),
        ({"pip": ["x"]}, "Extra inputs"),
        ({"image": "a", "workdir": "app"}, "absolute directory in the container"),
        ({"image": "a", "scratch": ["/"]}, "absolute directory in the container"),
        ({"image": "a", "scratch": ["/x/../etc"]}, "absolute directory in the container"),
        ({"workdir": "/app"}, "for a container image"),
        ({"scratch": ["/tests"]}, "for a container image"),
    ],
)
def test_a_bad_table_is_refused_saying_why(table: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Environment.model_validate(table)
    assert says in str(caught.value)


def _with_environment(tmp_path: Path, table: str) -> Path:
    task = make_calc_task(tmp_path)
    toml = task.root / "task.toml"
    toml.write_text(toml.read_text() + "\n[environment]\n" + table)
    return task.root


def test_a_task_without_the_table_has_no_environment(tmp_path: Path) -> None:
    assert make_calc_task(tmp_path).spec.environment is None


def test_the_loader_reads_the_table(tmp_path: Path) -> None:
    root = _with_environment(tmp_path, 'requirements = ["attrs"]\nenv = { A = "1" }\n')
    env = load_task(root).spec.environment
    assert env is not None and env.requirements == ["attrs"] and env.env == {"A": "1"}


def test_a_requirements_file_that_is_missing_is_a_config_error(tmp_path: Path) -> None:
    root = _with_environment(tmp_path, 'requirements_files = ["environment/reqs.txt"]\n')
    with pytest.raises(ConfigError) as caught:
        load_task(root)
    assert "environment/reqs.txt, which is not a file of the task" in str(caught.value)
    (root / "environment").mkdir()
    (root / "environment" / "reqs.txt").write_text("attrs\n")
    assert load_task(root).spec.environment is not None
