"""`tasks mine --sandbox docker`: the mining runs, and then `bench validate`, happen in containers.

The repository (tests/minerepo.py, wcalc) imports a distribution the test builds as a wheel; the
`--env-spec` file installs it with `--no-index --find-links wheels` and sets a variable, so a
FAIL_TO_PASS list (and the PASS_TO_PASS test reading the variable) can only come out right when
the mining runs use that environment, built into a derived image of the test image."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.sandbox import DockerSandbox, EnvImageBuilder, ImageBuilder
from loopwright.tasks import load_benchmark
from tests.containers import docker_sandbox_or_skip, image_tag, set_cli_container_env
from tests.minerepo import WCALC_F2P, WCALC_P2P, make_env_spec, make_wcalc_repo

pytestmark = pytest.mark.docker


@pytest.fixture
def docker() -> DockerSandbox:
    return docker_sandbox_or_skip()


@pytest.fixture
def dropped(docker: DockerSandbox) -> Iterator[list[str]]:
    """Image tags to remove from the engine when the test ends."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        if docker.engine.image_exists(tag):
            docker.engine.call("rmi", "-f", tag)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, object]:
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def test_a_repository_mined_under_docker_with_an_env_spec_validates_under_docker(
    tmp_path: Path,
    docker: DockerSandbox,
    dropped: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_cli_container_env(monkeypatch)
    make_wcalc_repo(tmp_path / "repo")
    spec = make_env_spec(tmp_path / "spec")
    # A fresh image each run (the tag is content-addressed over environment/).
    (tmp_path / "spec" / "environment" / "nonce.txt").write_text(secrets.token_hex(8))
    out, cache = tmp_path / "out", str(tmp_path / "cache")
    code, report = _json(capsys, [
        "tasks", "mine", str(tmp_path / "repo"), "--out", str(out), "--env-spec", str(spec),
        "--sandbox", "docker", "--env-cache", cache, "--jobs", "1", "--no-register", "--json",
    ])  # fmt: skip
    assert code == 0 and isinstance(report, dict)
    (row,) = report["commits"]
    task = load_benchmark(out).task(row["task_id"]) if row["kept"] else None
    if task is not None:
        dropped.append(EnvImageBuilder.for_sandbox(docker).tag(task))
        assert docker.engine.image_exists(dropped[-1]), "the image mining built is the task's"
    assert row["kept"], row["reason"]
    assert row["fail_to_pass"] == WCALC_F2P
    assert row["pass_to_pass"] == len(WCALC_P2P)  # WCALC_MODE reached the container
    assert row["flawed"] == ["first-half", "second-half"]
    assert task is not None and (task.root / "environment" / "nonce.txt").is_file()
    assert not (tmp_path / "cache").exists() or not any(
        p.is_dir() and p.name != "images" for p in (tmp_path / "cache").iterdir()
    ), "under --sandbox docker no environment is built on this machine"

    code, checks = _json(capsys, [
        "bench", "validate", str(out), "--sandbox", "docker", "--env-cache", cache, "--json",
    ])  # fmt: skip
    assert isinstance(checks, list)
    by_variant = {c["variant"]: c for c in checks}
    assert code == 0, checks
    gold = by_variant["gold"]
    assert (gold["score"], gold["resolved"], gold["invalid"]) == (1.0, True, False), gold
    for name in ("first-half", "second-half", "untouched"):
        flawed = by_variant[name]
        assert flawed["score"] < 1.0 and not flawed["invalid"], flawed


def test_a_spec_naming_a_dockerfile_mines_in_containers_of_that_image(
    tmp_path: Path,
    docker: DockerSandbox,
    dropped: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The image, not a virtualenv, holds the dependency and the variable: FAIL_TO_PASS comes out
    # right only when every mining run's container starts from it.
    set_cli_container_env(monkeypatch)
    make_wcalc_repo(tmp_path / "repo")
    spec = make_env_spec(
        tmp_path / "spec", '[environment]\ndockerfile = "environment/Dockerfile"\n'
    )
    env_dir = tmp_path / "spec" / "environment"
    (env_dir / "units.py").write_text(
        f"FACTOR = 10\nOFFSET = 7\nNONCE = {secrets.token_hex(8)!r}\n"
    )
    (env_dir / "Dockerfile").write_text(
        f"FROM {image_tag()}\nCOPY units.py /usr/lib/python3/dist-packages/units.py\n"
        "ENV WCALC_MODE=mined\n"
    )
    out = tmp_path / "out"
    code, report = _json(capsys, [
        "tasks", "mine", str(tmp_path / "repo"), "--out", str(out), "--env-spec", str(spec),
        "--sandbox", "docker", "--env-cache", str(tmp_path / "cache"), "--jobs", "1",
        "--no-register", "--json",
    ])  # fmt: skip
    assert code == 0 and isinstance(report, dict)
    (row,) = report["commits"]
    if row["kept"]:
        task = load_benchmark(out).task(row["task_id"])
        dropped.append(ImageBuilder(docker.engine).tag(task))
        assert docker.engine.image_exists(dropped[-1]), "the image mining built is the task's"
    assert row["kept"], row["reason"]
    assert row["fail_to_pass"] == WCALC_F2P
    assert row["pass_to_pass"] == len(WCALC_P2P)
