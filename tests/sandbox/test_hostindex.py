"""The host's package index and container builds: a task whose environment installs from an
index, on a host whose pip or uv is set to an index at a loopback address or a local path (which
a container cannot see), is told so before its image is built, with the two ways out; an
offline install (`--no-index`) or an index given for containers (LOOPWRIGHT_CONTAINER_INDEX_URL,
passed to the build) needs no notice. No container here (see test_envimages.py for a build)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.sandbox import _envimages
from loopwright.sandbox._hostindex import (
    INDEX_URL_ENV,
    build_index_variables,
    host_indexes,
    index_notice,
    say_index_notice,
)
from loopwright.tasks import Task, load_task
from tests.sandbox.envfactory import make_env_task

LOOPBACK = "http://127.0.0.1:3141/root/pypi/+simple/"


def inferred_task(parent: Path) -> Task:
    """The envcalc task with an inferred `pip install -e .` (what an importer writes), which
    needs an index for its build dependencies."""
    return load_task(make_env_task(parent, install=("pip install -e .",)).root)


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment with no pip configuration but what the test gives (HOME is empty)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), **extra}


@pytest.mark.parametrize(
    "url",
    [LOOPBACK, "http://localhost:8080/simple", "http://[::1]:3141/simple", "/srv/wheels",
     "file:///srv/simple"],
)  # fmt: skip
def test_an_index_a_container_cannot_see_is_named_before_the_build(
    tmp_path: Path, url: str
) -> None:
    task = inferred_task(tmp_path / "bench")
    notice = index_notice(task, clean_env(tmp_path, PIP_INDEX_URL=url))
    assert notice is not None
    assert f"package index {url} (set by PIP_INDEX_URL" in notice
    assert "`pip install -e .`" in notice and "--no-index --find-links wheels" in notice
    assert f"export {INDEX_URL_ENV}=" in notice


def test_pip_configuration_files_count_too(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    conf = Path(env["XDG_CONFIG_HOME"]) / "pip" / "pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"[global]\nindex-url = {LOOPBACK}\n", encoding="utf-8")
    assert (f"{conf} [global] index-url", LOOPBACK) in host_indexes(env)
    notice = index_notice(inferred_task(tmp_path / "bench"), env)
    assert notice is not None and f"set by {conf} [global] index-url" in notice


def test_no_notice_for_a_reachable_index_an_offline_install_or_a_container_index(
    tmp_path: Path,
) -> None:
    task = inferred_task(tmp_path / "bench")
    assert index_notice(task, clean_env(tmp_path, PIP_INDEX_URL="https://pypi.org/simple")) is None
    assert index_notice(task, clean_env(tmp_path)) is None
    given = clean_env(tmp_path, PIP_INDEX_URL=LOOPBACK, **{INDEX_URL_ENV: "http://10.0.0.2/s/"})
    assert index_notice(task, given) is None
    offline = load_task(make_env_task(tmp_path / "offline").root)  # --no-index, setup.py develop
    assert index_notice(offline, clean_env(tmp_path, PIP_INDEX_URL=LOOPBACK)) is None


def test_the_container_index_is_passed_to_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert build_index_variables({}) == {}
    url = "http://10.0.0.2:3141/simple/"
    assert build_index_variables({INDEX_URL_ENV: url}) == {
        "PIP_INDEX_URL": url, "UV_DEFAULT_INDEX": url,
    }  # fmt: skip
    monkeypatch.setenv(INDEX_URL_ENV, url)
    builder = _envimages.EnvImageBuilder(object(), base="img")  # type: ignore[arg-type]
    script = builder._script(inferred_task(tmp_path / "bench"))
    assert f"export PIP_INDEX_URL={url}" in script and f"export UV_DEFAULT_INDEX={url}" in script


def test_the_notice_is_printed_once_per_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in clean_env(tmp_path, PIP_INDEX_URL="http://127.0.0.1:4999/once/").items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(INDEX_URL_ENV, raising=False)
    task = inferred_task(tmp_path / "bench")
    assert say_index_notice(task) is not None and say_index_notice(task) is not None
    err = capsys.readouterr().err
    assert err.count("notice: task envcalc's environment is built in a container") == 1
