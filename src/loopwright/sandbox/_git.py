"""git, run from loopwright (not from an agent) on workspaces, deaf to every config it did not write.

Git is run with a clean environment (the caller's GIT_DIR, GIT_INDEX_FILE... never leak in), no
system or global config, no hooks, no fsmonitor, no signing. Reading a workspace an agent has
worked in goes through `staged_snapshot`: a private git directory that borrows the workspace's
objects, so the workspace's own `.git/config` (which the agent could have written: filters,
fsmonitor, external diff commands) is never read by a git that runs outside the sandbox, and
the workspace's `.gitattributes` files (which could make a change `binary`, hide it behind
`-diff`, or rewrite it as it is staged: `eol`, `ident`, `working-tree-encoding`) are
overridden by `RESET_ATTRIBUTES`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from loopwright.errors import SandboxError
from loopwright.sandbox._base import host_path

__all__ = [
    "BASE_EXCLUDES",
    "IDENTITY",
    "RESET_ATTRIBUTES",
    "base_problem",
    "git",
    "git_env",
    "private_git_dir",
    "staged_snapshot",
]

IDENTITY = ("loopwright", "loopwright@localhost")
_FIXED_DATE = "2000-01-01T00:00:00+0000"  # fixed so that the same source gives the same commit

BASE_EXCLUDES = "# written by loopwright: never part of a workspace diff\n__pycache__/\n*.py[cod]\n"
"""Written to the workspace's .git/info/exclude; bytecode never belongs in a diff."""

_RESET = (
    "text", "eol", "crlf", "binary", "diff", "merge", "filter", "ident",
    "working-tree-encoding", "whitespace", "conflict-marker-size", "delta", "encoding",
    "export-ignore", "export-subst",
)  # fmt: skip
RESET_ATTRIBUTES = (
    "# written by loopwright: every attribute git acts on is unspecified, whatever the\n"
    "# workspace's .gitattributes say (this file takes precedence over all of them)\n"
    f"* {' '.join('!' + name for name in _RESET)}\n"
)
"""The private snapshot's info/attributes. git reads $GIT_DIR/info/attributes last and, per
attribute, the last matching line wins; `!attr` makes an attribute unspecified, so files are
staged byte for byte and diffed as text unless they hold a NUL byte. A macro the workspace
defines (`[attr]m -diff`) only sets attributes already decided here."""

_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "core.autocrlf=false",
    "core.fsync=none",
    "commit.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.detachedHead=false",
)

GIT_TIMEOUT_S = 600.0
"""How long one git command may take before it is killed (a diff of a huge workspace takes
seconds; a hang is an agent's doing)."""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment git runs with: PATH, identity, fixed dates, no outside config."""
    name, email = IDENTITY
    env = {
        "PATH": host_path(),
        "HOME": os.devnull,
        "LANG": "C",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_AUTHOR_DATE": _FIXED_DATE,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": _FIXED_DATE,
    }
    env.update(extra or {})
    return env


def git(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
) -> bytes:
    """Run `git <args>` in `cwd`, with `stdin` as its input (default: none), and return its
    stdout. Raises SandboxError with git's stderr when git is missing or fails, or when it has
    not finished in `timeout_s` (it reads workspace files an agent wrote: never wait forever)."""
    argv = ["git"]
    for item in _CONFIG:
        argv += ["-c", item]
    argv += args
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=git_env(env),
            capture_output=True,
            input=stdin if stdin is not None else b"",
            check=False,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        raise SandboxError(f"git {args[0]} did not finish in {timeout_s:.0f}s in {cwd}") from None
    except OSError as exc:
        raise SandboxError(f"cannot run git: {exc.strerror or exc} (is git installed?)") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", errors="replace").strip()
        raise SandboxError(f"git {args[0]} failed in {cwd} (exit {done.returncode}): {message}")
    return done.stdout


@contextlib.contextmanager
def staged_snapshot(worktree: Path, base: str) -> Iterator[dict[str, str]]:
    """Yield env vars under which `git diff --cached <base>` compares the working tree, untracked
    files included (files matching .gitignore rules or BASE_EXCLUDES are left out), with base.

    Read-only for the workspace: a private git directory (removed on exit) with its own index
    and config borrows the workspace's objects through `alternates`; new blobs go to it. Its
    info/attributes (`RESET_ATTRIBUTES`) overrides the workspace's .gitattributes files.
    Raises SandboxError when git fails (e.g. the workspace's .git was deleted).
    """
    with private_git_dir(worktree, base) as env:
        git(["read-tree", base], cwd=worktree, env=env)
        git(["add", "--all", "--", "."], cwd=worktree, env=env)
        yield env


def base_problem(worktree: Path, base: str) -> str | None:
    """None when the workspace's repository still holds commit `base` and every object in it
    is intact (`git fsck` on the objects, from a private git directory as above); else what
    is wrong, in one line. Deterministic for the same files."""
    try:
        with private_git_dir(worktree, base) as env:
            git(["fsck", "--no-dangling", "--no-reflogs", "--no-progress", base],
                cwd=worktree, env=env)  # fmt: skip
    except SandboxError as exc:
        return " ".join(str(exc).split())[:500]
    return None


@contextlib.contextmanager
def private_git_dir(worktree: Path, base: str) -> Iterator[dict[str, str]]:
    """Yield env vars for a private git directory (removed on exit) whose HEAD is `base` and
    which borrows the workspace's objects: git reads nothing else of the workspace's .git."""
    objects = worktree / ".git" / "objects"
    if not objects.is_dir():
        raise SandboxError(f"{worktree} is not a workspace: it has no .git/objects")
    with tempfile.TemporaryDirectory(prefix="lw-snapshot-") as tmp:
        gitdir = Path(tmp)
        (gitdir / "objects" / "info").mkdir(parents=True)
        (gitdir / "refs").mkdir()
        (gitdir / "info").mkdir()
        (gitdir / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
        (gitdir / "info" / "exclude").write_text(BASE_EXCLUDES, encoding="utf-8")
        (gitdir / "info" / "attributes").write_text(RESET_ATTRIBUTES, encoding="utf-8")
        (gitdir / "HEAD").write_text(f"{base}\n", encoding="utf-8")
        yield {
            "GIT_DIR": str(gitdir),
            "GIT_WORK_TREE": str(worktree),
            "GIT_INDEX_FILE": str(gitdir / "index"),
        }
