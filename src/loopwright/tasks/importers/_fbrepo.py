"""Where a FeatureBench instance's original repository is read from, as the harness starts from
it (docs/importing.md, "FeatureBench"): `/testbed` of the instance's image when that image is
present locally (`image_name`) or can be built here from the row's `instance_dockerfile`
(`_fbimage`); else the local clone at `base_commit`.

The image's tree is copied out with the container CLI (`create` + `cp`; nothing is pulled) and
committed into a private git repository under `--repos/.loopwright-images/` (one per image id),
so the rest of the importer reads it as it reads a clone. An image that cannot be built leaves
the clone as the source, with a note saying why.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loopwright.tasks.importers._fbimage import (
    build_instance_image,
    copy_testbed,
    engine,
    image_id,
)
from loopwright.tasks.importers._gitrepo import (
    SkipInstance,
    exists_at,
    find_clone,
    read_at,
    require_commit,
)
from loopwright.tasks.importers._source import Instance

__all__ = ["IMAGE_REPO_DIR", "OriginalRepo", "original_repo"]

IMAGE_REPO_DIR = ".loopwright-images"
_GIT = ("git", "-c", "user.name=loopwright", "-c", "user.email=loopwright@localhost")


@dataclass(frozen=True)
class OriginalRepo:
    """The repository the harness starts from: `commit` of the git repository `clone`; `image`
    the instance image it was copied out of (None for a clone); `notes` what the user should
    know about the choice."""

    clone: Path
    commit: str
    image: str | None = None
    notes: tuple[str, ...] = ()

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
    """`/testbed` of the instance's image when it is present or can be built from the row's
    Dockerfile; else the clone at `base_commit`. Raises SkipInstance saying what is missing."""
    clone, clone_problem = _clone(inst, repos)
    cli = engine()
    image = inst.image_name or inst.image or ""
    if cli is not None and image and image_id(cli, image) is not None:
        return _from_image(cli, image, repos)
    notes: tuple[str, ...] = ()
    if cli is not None and inst.instance_dockerfile:
        try:
            built = build_instance_image(cli, inst, clone)
            return _from_image(cli, built, repos)
        except SkipInstance as exc:
            if clone is None:
                raise
            notes = (f"the repository is the clone at base_commit, not the instance image's "
                     f"/testbed: {exc.reason}",)  # fmt: skip
    if clone is not None:
        return OriginalRepo(clone, inst.base_commit, notes=notes)
    why = f" ({clone_problem})" if clone_problem else ""
    if not image:
        raise SkipInstance(
            (clone_problem + "; " if clone_problem else "base_commit is missing; ")
            + "and the instance names no image_name to take the repository from"
        )
    if cli is None:
        raise SkipInstance(
            f"no clone to take the repository from{why}, and no container CLI (docker or "
            f"podman) to read the image {image} with"
        )
    raise SkipInstance(
        f"no clone to take the repository from{why}, and the image {image} is not present "
        f"here (nothing is pulled: `{Path(cli[0]).name} pull {image}` first)"
    )


def _clone(inst: Instance, repos: Path) -> tuple[Path | None, str]:
    """The clone holding `base_commit`, or None and why not."""
    if not inst.base_commit:
        return None, ""
    try:
        clone = find_clone(repos, inst.repo)
        require_commit(clone, inst.base_commit)
    except SkipInstance as exc:
        return None, exc.reason
    return clone, ""


def _from_image(cli: list[str], image: str, repos: Path) -> OriginalRepo:
    key = image_id(cli, image) or image
    target = repos / IMAGE_REPO_DIR / hashlib.sha256(key.encode()).hexdigest()[:16]
    if not (target / ".git").is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".copy-", dir=target.parent) as scratch:
            tree = Path(scratch) / "repo"
            copy_testbed(cli, image, tree)
            for step in (("init", "-q"), ("add", "-A", "-f"), ("commit", "-q", "-m", image)):
                _run([*_GIT, "-C", str(tree), *step], f"commit the tree of {image}")
            tree.rename(target)
    head = _run([*_GIT, "-C", str(target), "rev-parse", "HEAD"], "read the copied image")
    return OriginalRepo(target, head.strip(), image=image)


def _run(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0:
        raise SkipInstance(f"could not {what}: {(done.stderr or done.stdout).strip()[-300:]}")
    return done.stdout
