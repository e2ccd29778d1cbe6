"""A FeatureBench row's own Dockerfiles as the repository's source: the importer builds the
base image (`base_dockerfile`) and the instance image (`instance_dockerfile`, with
`build_setup_env_sh` and the clone as `project_code/`) with the real container engine, takes the
repository from the image's `/testbed` (as the setup script left it), and the task validates in
that image under the container sandbox. No registry: the base is the locally built test image."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from loopwright.sandbox import DockerSandbox
from loopwright.scoring import grader_for, validate_benchmark
from loopwright.scoring._validate import GOLD, UNTOUCHED
from loopwright.tasks import load_benchmark_dir, load_task
from loopwright.tasks.importers import ImportOptions, import_featurebench
from tests.containers import docker_sandbox_or_skip, image_tag, set_cli_container_env, settings
from tests.tasks.fbfixtures import METADATA, make_feature_fixture
from tests.tasks.importfixtures import write_jsonl

# The harness's instance Dockerfile (featurebench/docker/image_manager.py), for an image with
# `sh` and no bash, sed or conda: the same steps in the same order.
INSTANCE_DOCKERFILE = """\
FROM {base}

# Handle custom instance image build command
# No custom build command

# Copy env pre-setup script & repo code into container
COPY ./setup_env.sh /root/
COPY ./project_code/ /testbed/
RUN chmod +x /root/setup_env.sh
RUN /root/setup_env.sh

# After env setup, create a repo backup my_repo:
RUN cp -r /testbed/ /root/my_repo/

# Set working directory
WORKDIR /testbed/
"""
# What an install step leaves in /testbed (a generated module, as setuptools-scm writes one):
# only the image has it, not the clone.
SETUP_ENV = """\
#!/bin/sh
set -e
cd /testbed
echo "version = '1.0.dev0+built'" > minipkg/_generated.py
echo 'Environment setup complete'
"""


@pytest.mark.docker
def test_the_repository_and_environment_come_from_the_rows_dockerfile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker_sandbox_or_skip()
    set_cli_container_env(monkeypatch)
    fx = make_feature_fixture(tmp_path / "fx")
    suffix = uuid.uuid4().hex[:8]
    base = f"localhost/lw-fb-base-test:{suffix}"  # absent: built from base_dockerfile
    image = f"localhost/lw-fb-instance-test:{suffix}"
    row = fx.row(
        1,
        image_name=image,
        base_dockerfile=f"FROM {image_tag()}\nRUN mkdir -p /opt/featurebench-base\n",
        instance_dockerfile=INSTANCE_DOCKERFILE.format(base=base),
        build_setup_env_sh=SETUP_ENV,
    )
    sandbox = DockerSandbox(settings(image_tag()))
    try:
        source = write_jsonl(tmp_path / "fb.jsonl", [row])
        report = import_featurebench(source, tmp_path / "out", ImportOptions(repos=fx.repos))
        assert not report.skipped, report.skipped
        task = load_task(tmp_path / "out" / report.converted[0].task_id)
        # The repository is the image's /testbed: the setup script's generated file is there.
        generated = task.repo_dir / "minipkg" / "_generated.py"
        assert generated.read_text() == "version = '1.0.dev0+built'\n"
        assert "def parse_email" not in (task.repo_dir / "minipkg" / "metadata.py").read_text()
        assert (task.root / "solution" / "minipkg" / "metadata.py").read_text() == METADATA
        assert task.spec.environment is not None and task.spec.environment.image == image
        assert sandbox.engine.image_exists(base) and sandbox.engine.image_exists(image)
        bench = load_benchmark_dir(tmp_path / "out")
        checks = validate_benchmark(bench, grader_for(bench.tasks[0], sandbox))
        got = {c.variant: (c.grade.score if c.grade else -1.0, c.ok, c.problem) for c in checks}
        assert got[GOLD][:2] == (1.0, True), got
        assert got[UNTOUCHED][0] < 1.0 and got[UNTOUCHED][1], got
    finally:
        for tag in (image, base):
            sandbox.engine.call("rmi", "-f", tag)


@pytest.mark.docker
def test_a_dockerfile_that_does_not_build_leaves_the_clone_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docker_sandbox_or_skip()
    set_cli_container_env(monkeypatch)
    fx = make_feature_fixture(tmp_path / "fx")
    broken = f"FROM {image_tag()}\nRUN exit 3\n"
    rows = [fx.row(1, instance_dockerfile=broken, build_setup_env_sh=SETUP_ENV)]
    report = import_featurebench(
        write_jsonl(tmp_path / "fb.jsonl", rows), tmp_path / "out", ImportOptions(repos=fx.repos)
    )
    assert not report.skipped, report.skipped
    note = "\n".join(report.converted[0].notes)
    assert "not the instance image's /testbed" in note and "failed (exit" in note, note
    task = load_task(tmp_path / "out" / report.converted[0].task_id)
    assert not (task.repo_dir / "minipkg" / "_generated.py").exists()
    # Without a clone there is nothing to fall back on: the row is skipped, saying why.
    rows = [fx.row(1, base_commit="", instance_dockerfile=INSTANCE_DOCKERFILE.format(base="x"))]
    report = import_featurebench(
        write_jsonl(tmp_path / "fb2.jsonl", rows), tmp_path / "out2", ImportOptions(repos=fx.repos)
    )
    assert "no base_dockerfile to build it from (nothing is pulled" in report.skipped[0].reason
