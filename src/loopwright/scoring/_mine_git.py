"""Read a local git repository's history for `tasks mine`: the first-parent commit window, what a
commit changed, files and trees at a revision. Read-only: nothing in the repository is written.

Every git command runs with the user's and the system's git configuration ignored, so settings
such as `diff.noprefix` or an external diff driver cannot change the patches written into tasks.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigError, MissingDependencyError

__all__ = ["Change", "GitRepo"]

_TIMEOUT_S = 300


@dataclass(frozen=True, slots=True)
class Change:
    """One file a commit changed against its base: `status` is git's letter (A, M, D, T)."""

    status: str
    path: str


class GitRepo:
    """A local git repository, read through the `git` command. Raises ConfigError when `root`
    is not a git repository, MissingDependencyError when git is not installed."""

    def __init__(self, root: Path) -> None:
        self.root = root.expanduser().resolve()
        if not self.root.is_dir():
            raise ConfigError(f"{root} is not a directory", fix="give the path of a git repository")
        top = self._run("rev-parse", "--show-toplevel").decode().strip()
        self.root = Path(top)

    def _run(self, *args: str) -> bytes:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LANG": "C",
        }
        try:
            done = subprocess.run(
                ["git", "-c", "core.quotepath=off", *args],
                cwd=self.root, env=env, capture_output=True, timeout=_TIMEOUT_S, check=False,
            )  # fmt: skip
        except FileNotFoundError:
            raise MissingDependencyError(
                "git is not installed", fix="install git (apt-get install git)"
            ) from None
        if done.returncode != 0:
            raise ConfigError(
                f"git {' '.join(args[:3])} failed in {self.root}",
                got=done.stderr.decode(errors="replace").strip()[-500:],
                fix="give the path of a git repository with at least one commit "
                "(and a --since revision that exists in it)",
            )
        return done.stdout

    def resolve(self, rev: str) -> str:
        """The full commit id of `rev` (ConfigError when it names no commit)."""
        return self._run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()

    def window(self, *, since: str | None, max_commits: int | None, paths: str | None) -> list[str]:
        """The first-parent commits of HEAD after `since` (all when None) that touch `paths` (a
        glob; all when None), the newest `max_commits` of them, oldest first. A root commit
        (no parent to diff against) is left out."""
        args = ["rev-list", "--first-parent"]
        if max_commits is not None:
            args.append(f"--max-count={max_commits}")
        args.append(f"{self.resolve(since)}..HEAD" if since else "HEAD")
        if paths:
            args += ["--", f":(glob){paths}"]
        shas = self._run(*args).decode().split()
        roots = set(self._run("rev-list", "--max-parents=0", "HEAD").decode().split())
        return [sha for sha in reversed(shas) if sha not in roots]

    def parents(self, rev: str) -> list[str]:
        """`rev`'s parents, first parent first."""
        return self._run("rev-list", "--parents", "-n", "1", rev).decode().split()[1:]

    def message(self, rev: str) -> str:
        """The commit message of `rev`, as written."""
        return self._run("log", "-1", "--format=%B", rev).decode(errors="replace").strip()

    def merged_subjects(self, merge: str) -> list[str]:
        """The subjects of the commits a merge brought in (its second parent's side), oldest first."""
        parents = self.parents(merge)
        if len(parents) < 2:
            return []
        out = self._run("log", "--reverse", "--format=%s", f"{parents[0]}..{parents[1]}")
        return [s for s in out.decode(errors="replace").split("\n") if s.strip()]

    def changes(self, base: str, rev: str) -> list[Change]:
        """The files `rev` changed against `base` (renames as a delete and an add)."""
        out = self._run("diff", "--name-status", "--no-renames", "-z", base, rev).split(b"\0")
        fields = [f.decode(errors="surrogateescape") for f in out if f]
        return [Change(fields[i][0], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]

    def diff(self, base: str, rev: str, paths: list[str]) -> bytes:
        """A unified diff (`git apply` input, `a/` `b/` prefixes) of `paths` from `base` to `rev`."""
        return self._run(
            "diff", "--no-renames", "--no-color", "--no-ext-diff", "--binary", "--src-prefix=a/",
            "--dst-prefix=b/", base, rev, "--", *paths,
        )  # fmt: skip

    def show(self, rev: str, path: str) -> bytes:
        """The content of `path` at `rev`."""
        return self._run("show", f"{rev}:{path}")

    def export(self, rev: str, dest: Path) -> None:
        """Write the tree of `rev` into `dest` (created), as `git archive` gives it."""
        dest.mkdir(parents=True, exist_ok=True)
        data = self._run("archive", "--format=tar", rev)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, filter="data")
