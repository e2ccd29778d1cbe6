"""A FeatureBench instance's image, as the repository's source: present locally (`image_name`),
or built here from the row's own Dockerfiles (docs/importing.md, "FeatureBench").

A row records the recipe of its instance image: `instance_dockerfile` (`FROM <base image>`,
`COPY ./setup_env.sh /root/`, `COPY ./project_code/ /testbed/`, `RUN .../setup_env.sh`, ...),
`build_setup_env_sh` (that setup_env.sh) and `base_dockerfile` (the base image's recipe). The
image is built as the harness builds it: a build context holding `setup_env.sh` and
`project_code/` (the clone at `base_commit`), the base image built first from `base_dockerfile`
when it is not present, the instance image tagged `image_name` (else a tag made from the
recipe's digest). Its `/testbed` is then the repository the agent starts from: the clone as the
setup script left it (generated files, build outputs), as in the harness.

The container CLI and its global flags are the container sandbox's (LOOPWRIGHT_CONTAINER_CLI /
_GLOBAL_FLAGS, else docker or podman on PATH).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from loopwright.tasks.importers._gitrepo import SkipInstance
from loopwright.tasks.importers._source import Instance

__all__ = ["IMAGE_WORKDIR", "build_instance_image", "copy_testbed", "engine", "image_id"]

IMAGE_WORKDIR = "/testbed"
BUILT_TAG = "localhost/loopwright-featurebench"  # + ":<recipe digest>" without image_name
_BUILD_TIMEOUT_S = 3600  # one image build (a real base image installs a conda environment)
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE | re.MULTILINE)


def engine() -> list[str] | None:
    """The container CLI with its global flags, or None when there is none."""
    name = os.environ.get("LOOPWRIGHT_CONTAINER_CLI", "auto")
    found = next(
        (shutil.which(n) for n in (["docker", "podman"] if name == "auto" else [name])
         if shutil.which(n)),
        None,
    )  # fmt: skip
    if found is None:
        return None
    return [found, *shlex.split(os.environ.get("LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS", ""))]


def _call(cli: list[str], *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*cli, *args], capture_output=True, text=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, 124, "", f"timed out after {timeout:g} s")
    except OSError as exc:
        return subprocess.CompletedProcess(args, 127, "", str(exc))


def image_id(cli: list[str], image: str) -> str | None:
    """The image's id when the engine has it (`""` when it does not say), else None."""
    done = _call(cli, "image", "inspect", "--format", "{{.Id}}", image)
    return done.stdout.strip() if done.returncode == 0 else None


def copy_testbed(cli: list[str], image: str, tree: Path) -> None:
    """`/testbed` of `image` copied to `tree` (without the image's own `.git`)."""
    container = _call(cli, "create", image, "true").stdout.strip()
    if not container:
        raise SkipInstance(f"cannot create a container of {image} to copy its repository from")
    try:
        if _call(cli, "cp", f"{container}:{IMAGE_WORKDIR}/.", str(tree)).returncode != 0:
            raise SkipInstance(f"cannot copy {IMAGE_WORKDIR} out of the image {image}")
    finally:
        _call(cli, "rm", "-f", container)
    nested = tree / ".git"
    if nested.is_dir():  # the image's own history: the tree as it stands is what counts
        shutil.rmtree(nested, ignore_errors=True)
    elif nested.exists():
        nested.unlink()


def build_instance_image(cli: list[str], inst: Instance, clone: Path | None) -> str:
    """Build the instance image from the row's Dockerfiles; its tag. `clone` (at
    `inst.base_commit`) is the build context's `project_code/`. Raises SkipInstance saying
    what is missing or how the build failed."""
    dockerfile = inst.instance_dockerfile or ""
    setup = inst.build_setup_env_sh or ""
    recipe = "\0".join((dockerfile, setup, inst.base_dockerfile or "", inst.base_commit))
    tag = inst.image_name or f"{BUILT_TAG}:{hashlib.sha256(recipe.encode()).hexdigest()[:16]}"
    base = _FROM.search(dockerfile)
    if base is None:
        raise SkipInstance("instance_dockerfile has no FROM line: it is not a Dockerfile")
    if image_id(cli, base.group(1)) is None:
        _build_base(cli, inst, base.group(1))
    with tempfile.TemporaryDirectory(prefix="lw-fb-build-") as scratch:
        context = Path(scratch)
        (context / "Dockerfile").write_text(dockerfile, encoding="utf-8")
        (context / "setup_env.sh").write_text(setup, encoding="utf-8")
        if "project_code" in dockerfile:
            if clone is None:
                raise SkipInstance(
                    "instance_dockerfile copies ./project_code/ (the repository at "
                    "base_commit), and there is no clone at base_commit to give it"
                )
            _export(clone, inst.base_commit, context / "project_code")
        _build(cli, tag, context, "the instance image (instance_dockerfile)")
    return tag


def _build_base(cli: list[str], inst: Instance, base: str) -> None:
    if not inst.base_dockerfile:
        raise SkipInstance(
            f"instance_dockerfile is built FROM {base}, which is not present here, and the "
            f"row has no base_dockerfile to build it from (nothing is pulled: "
            f"`{Path(cli[0]).name} pull {base}` first)"
        )
    with tempfile.TemporaryDirectory(prefix="lw-fb-base-") as scratch:
        context = Path(scratch)
        (context / "Dockerfile").write_text(inst.base_dockerfile, encoding="utf-8")
        _build(cli, base, context, f"the base image {base} (base_dockerfile)")


def _build(cli: list[str], tag: str, context: Path, what: str) -> None:
    done = _call(
        cli, "build", "-t", tag, "-f", str(context / "Dockerfile"), str(context),
        timeout=_BUILD_TIMEOUT_S,
    )  # fmt: skip
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise SkipInstance(f"building {what} failed (exit {done.returncode}): {tail}")


def _export(clone: Path, commit: str, target: Path) -> None:
    """The tree of `commit` written to `target` (git archive, extracted by tar)."""
    target.mkdir()
    archive = target.parent / "project_code.tar"
    with archive.open("wb") as out:
        made = subprocess.run(
            ["git", "-C", str(clone), "archive", "--format=tar", commit],
            stdout=out, stderr=subprocess.PIPE, check=False, timeout=600,
        )  # fmt: skip
    if made.returncode != 0:
        raise SkipInstance(f"cannot export {commit} of {clone}: {made.stderr.decode()[-300:]}")
    unpacked = subprocess.run(
        ["tar", "-xf", str(archive), "-C", str(target)], capture_output=True, check=False,
        timeout=600,
    )  # fmt: skip
    archive.unlink()
    if unpacked.returncode != 0:
        raise SkipInstance(f"cannot unpack {commit} of {clone}: {unpacked.stderr.decode()[-300:]}")
