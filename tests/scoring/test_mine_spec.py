"""`load_mine_env_spec`: an `--env-spec` file is checked whole before anything is mined; each
mistake is one ConfigError saying what, what was got and how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.scoring._mine_spec import load_mine_env_spec
from loopwright.tasks import Environment
from tests.minerepo import make_env_spec


def test_a_spec_reads_as_its_environment_table_and_the_folder_beside_it(tmp_path: Path) -> None:
    path = make_env_spec(tmp_path)
    spec = load_mine_env_spec(path)
    assert spec.environment == Environment(
        requirements_files=["environment/requirements.txt"], env={"WCALC_MODE": "mined"}
    )
    assert spec.directory == (tmp_path / "environment").resolve()
    task = tmp_path / "task"
    spec.copy_into(task)
    assert (task / "environment" / "wheels" / "units-1.0-py3-none-any.whl").is_file()


def test_a_spec_without_files_needs_no_folder(tmp_path: Path) -> None:
    path = tmp_path / "env.toml"
    path.write_text('[environment]\nrequirements = ["attrs"]\ninstall = ["pip install -e ."]\n')
    spec = load_mine_env_spec(path)
    assert spec.directory is None and spec.environment.install == ["pip install -e ."]


def test_a_file_of_the_repository_is_not_checked_up_front(tmp_path: Path) -> None:
    path = tmp_path / "env.toml"
    path.write_text('[environment]\nrequirements_files = ["repo/requirements-dev.txt"]\n')
    assert load_mine_env_spec(path).environment.requirements_files == ["repo/requirements-dev.txt"]


@pytest.mark.parametrize(
    ("text", "what", "got", "fix"),
    [
        ("[environment\n", "is not valid TOML", "line 1", "[environment]"),
        ("", "must hold one [environment] table", "an empty file", "keys of task.toml"),
        (
            '[environment]\ninstall = ["true"]\n[repos."a/b".environment]\n',
            "must hold one [environment] table and nothing else",
            "top-level keys ['environment', 'repos']",
            "[environment]",
        ),
        (
            '[environment]\npackages = ["attrs"]\n',
            "has an invalid [environment] table",
            "environment.packages: Extra inputs are not permitted",
            "requirements_files",
        ),
        (
            '[environment]\nenv = { PATH = "/x" }\n',
            "has an invalid [environment] table",
            "PATH is set by loopwright",
            "docs/task-format.md",
        ),
        (
            '[environment]\nrequirements_files = ["reqs.txt"]\n',
            "names 'reqs.txt', which would not be inside the mined tasks",
            "outside environment/ and repo/",
            "write environment/reqs.txt",
        ),
        (
            '[environment]\nrequirements_files = ["environment/missing.txt"]\n',
            "names 'environment/missing.txt', which does not exist",
            "missing.txt",
            "correct the path",
        ),
        (
            '[environment]\ndockerfile = "environment/Dockerfile"\n',
            "names 'environment/Dockerfile', which does not exist",
            "Dockerfile",
            "correct the path",
        ),
    ],
)
def test_each_mistake_in_a_spec_is_one_config_error(
    tmp_path: Path, text: str, what: str, got: str, fix: str
) -> None:
    path = tmp_path / "env.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_mine_env_spec(path)
    err = caught.value
    assert what in err.what and str(path) in err.what
    assert err.got is not None and got in err.got
    assert err.fix is not None and fix in err.fix


@pytest.mark.parametrize(
    ("requirements", "problem"),
    [
        ("--no-index\n--find-links wheelz\nunits\n", "refers to 'wheelz', which does not exist"),
        (
            "-f=../../outside\nunits\n",
            "refers to '../../outside', which is not inside environment/",
        ),
        ("-r more.txt\n", "refers to 'more.txt', which does not exist"),
        ("-rnested.txt\n", "nested.txt refers to 'gone', which does not exist"),
    ],
)
def test_a_requirements_file_naming_a_missing_or_outside_path_is_refused(
    tmp_path: Path, requirements: str, problem: str
) -> None:
    path = make_env_spec(tmp_path / "spec")
    (tmp_path / "outside").mkdir()
    (tmp_path / "spec" / "environment" / "nested.txt").write_text("-r nested.txt\n-c gone\n")
    (tmp_path / "spec" / "environment" / "requirements.txt").write_text(requirements)
    with pytest.raises(ConfigError, match="only environment/ is copied") as caught:
        load_mine_env_spec(path)
    assert problem in caught.value.what


def test_a_spec_that_cannot_be_read_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be read") as caught:
        load_mine_env_spec(tmp_path / "absent.toml")
    assert caught.value.got is not None and "FileNotFoundError" in caught.value.got
