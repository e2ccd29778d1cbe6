"""Where a FeatureBench instance's original repository is read from: a local clone at
`base_commit`, or the instance's image (`image_name`), whose `/testbed` holds the repository as
the harness starts from it (docs/importing.md, "FeatureBench").

The image's tree is copied out with the container CLI (`create` + `cp`; nothing is pulled: the
image must be present locally; the CLI and its global flags as the container sandbox takes them,
LOOPWRIGHT_CONTAINER_CLI / _GLOBAL_FLAGS, else docker or podman on PATH) and committed into a private git repository under
`--repos/.loopwright-images/`, so the rest of the importer reads it as it reads a clone.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loopwright.tasks.importers._common import (
    SkipInstance,
    exists_at,
    find_clone,
    read_at,
    require_commit,
)
from loopwright.tasks.importers._source import Instance

__all__ = ["IMAGE_REPO_DIR", "IMAGE_WORKDIR", "OriginalRepo", "original_repo"]

IMAGE_WORKDIR = "/testbed"
IMAGE_REPO_DIR = ".loopwright-images"
_GIT = ("git", "-c", "user.name=loopwright", "-c", "user.email=loopwright@localhost")


@dataclass(frozen=True)
class OriginalRepo:
    """The repository the harness starts from: `commit` of the git repository `clone`."""

    clone: Path
    commit: str

    def read(self, paths: set[str] | list[str]) -> dict[str, bytes]:
        return read_at(self.clone, self.commit, paths)

    def exists(self, rel: str) -> bool:
        return exists_at(self.clone, self.commit, rel)

    def all_files(self) -> dict[str, bytes]:
        """Every file of the commit (path -> content)."""
        listed = subprocess.run(
            ["git", "-C", str(self.clone), "ls-tree", "-r", "-z", "--name-only", self.commit],
            capture_output=True, check=False, timeout=300,
        )  # fmt: skip
        if listed.returncode != 0:
            raise SkipInstance(f"cannot list the files of {self.commit} in {self.clone}")
        names = [n.decode() for n in listed.stdout.split(b"\0") if n]
        return self.read(names)


def original_repo(inst: Instance, repos: Path) -> OriginalRepo:
    """The clone at `base_commit` when there is one; else the repository in the instance's
    image. Raises SkipInstance saying what is missing."""
    clone_problem = ""
    if inst.base_commit:
        try:
            clone = find_clone(repos, inst.repo)
            require_commit(clone, inst.base_commit)
            return OriginalRepo(clone, inst.base_commit)
        except SkipInstance as exc:
            clone_problem = exc.reason
    if inst.image_name or inst.image:
        return _from_image(inst.image_name or inst.image or "", repos, clone_problem)
    raise SkipInstance(
        (clone_problem + "; " if clone_problem else "base_commit is missing; ")
        + "and the instance names no image_name to take the repository from"
    )


def _from_image(image: str, repos: Path, clone_problem: str) -> OriginalRepo:
    digest = hashlib.sha256(image.encode()).hexdigest()[:16]
    target = repos / IMAGE_REPO_DIR / digest
    if (target / ".git").is_dir():
        head = _run([*_GIT, "-C", str(target), "rev-parse", "HEAD"], "read the copied image")
        return OriginalRepo(target, head.strip())
    why = f" ({clone_problem})" if clone_problem else ""
    engine = _engine()
    if engine is None:
        raise SkipInstance(
            f"no clone to take the repository from{why}, and no container CLI (docker or "
            f"podman) to read the image {image} with"
        )
    if _call(engine, "image", "inspect", image) is None:
        raise SkipInstance(
            f"no clone to take the repository from{why}, and the image {image} is not present "
            f"here (nothing is pulled: `{Path(engine[0]).name} pull {image}` first)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".copy-", dir=target.parent) as scratch:
        tree = Path(scratch) / "repo"
        _copy_out(engine, image, tree)
        for step in (("init", "-q"), ("add", "-A", "-f"), ("commit", "-q", "-m", image)):
            _run([*_GIT, "-C", str(tree), *step], f"commit the tree of {image}")
        tree.rename(target)
    head = _run([*_GIT, "-C", str(target), "rev-parse", "HEAD"], "read the copied image")
    return OriginalRepo(target, head.strip())


def _engine() -> list[str] | None:
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


def _call(engine: list[str], *args: str) -> str | None:
    """The CLI's stdout, or None when it fails."""
    try:
        done = subprocess.run(
            [*engine, *args], capture_output=True, text=True, check=False, timeout=600
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _copy_out(engine: list[str], image: str, tree: Path) -> None:
    container = (_call(engine, "create", image, "true") or "").strip()
    if not container:
        raise SkipInstance(f"cannot create a container of {image} to copy its repository from")
    try:
        if _call(engine, "cp", f"{container}:{IMAGE_WORKDIR}/.", str(tree)) is None:
            raise SkipInstance(f"cannot copy {IMAGE_WORKDIR} out of the image {image}")
    finally:
        _call(engine, "rm", "-f", container)
    nested = tree / ".git"
    if nested.is_dir():  # the image's own history: the tree as it stands is what counts
        shutil.rmtree(nested, ignore_errors=True)
    elif nested.exists():
        nested.unlink()


def _run(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise SkipInstance(f"could not {what}: {(done.stderr or done.stdout).strip()[-300:]}")
    return done.stdout
