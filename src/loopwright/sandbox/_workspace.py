"""Workspaces: a task's repo/ copied into a fresh git repository with one reproducible commit."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import ConfigError, SandboxError, UsageError
from loopwright.sandbox._git import (
    BASE_EXCLUDES,
    IDENTITY,
    base_problem,
    git,
    private_git_dir,
    staged_snapshot,
)
from loopwright.sandbox._template import cached_template, read_template, signature

__all__ = [
    "BASE_MESSAGE",
    "BINARY_SIZES",
    "NO_DIFF",
    "DiffEvidence",
    "Workspace",
    "create_workspace",
    "remove_workspace",
]

BASE_MESSAGE = "loopwright: task base"

BINARY_SIZES = "Binary sizes: "
"""Starts the line that follows git's `Binary files a/x and b/x differ` in a diff: the file's
size in bytes before and after, `none` for a side where it does not exist
(`Binary sizes: none -> 1024 bytes`)."""

NO_DIFF = "loopwright: no diff: "
"""Starts the note `Workspace.evidence()` gives instead of a patch when the diff failed."""

# Appended to the workspace's .git/config so that an agent's own `git commit` works inside the
# sandbox (where no global config is visible) and cannot try to sign or run hooks.
_REPO_CONFIG = f"""[user]
\tname = {IDENTITY[0]}
\temail = {IDENTITY[1]}
[commit]
\tgpgSign = false
[gc]
\tauto = 0
"""


@dataclass(frozen=True, slots=True)
class Workspace:
    """A directory an agent works in: a git repository whose only commit, `base_commit`, holds
    the task's starting files. `diff()` and `changed_files()` read what changed since; they run
    git outside the sandbox but never read the workspace's own git config or hooks.
    """

    path: Path
    base_commit: str

    def diff(self) -> str:
        """The working tree against `base_commit` as a text git patch, untracked files
        included, ignored ones (.gitignore, bytecode) left out. The workspace's .gitattributes
        are ignored: every file is staged byte for byte and diffed as text, except files git
        finds binary (a NUL byte in their first 8,000 bytes), which appear as git's `Binary
        files a/x and b/x differ` line followed by a `BINARY_SIZES` line, never their content.
        Index lines carry full object ids. Non-ASCII paths are quoted by git; file content that
        is not UTF-8 is decoded with replacement (`diff_bytes()` gives git's bytes). Empty when
        nothing changed. Raises SandboxError when git fails. Deterministic."""
        return self.diff_bytes().decode("utf-8", errors="replace")

    def diff_bytes(self) -> bytes:
        """`diff()` as bytes, file content exactly as in the files."""
        with staged_snapshot(self.path, self.base_commit) as env:
            patch = git(
                ["diff", "--cached", "--full-index", "--no-color", "--no-ext-diff",
                 "--no-textconv", self.base_commit],
                cwd=self.path,
                env=env,
            )  # fmt: skip
            return _with_binary_sizes(patch, self.path, env)

    def evidence(self) -> DiffEvidence:
        """What a run keeps as diff.patch: `diff()`, or when git fails a note saying why (see
        DiffEvidence). Never raises; deterministic for the same files."""
        try:
            return DiffEvidence(self.diff(), None, None)
        except (SandboxError, OSError) as exc:
            error = f"the workspace diff could not be taken: {type(exc).__name__}: {exc}"
        problem = base_problem(self.path, self.base_commit)
        tamper = None
        if problem is not None:
            tamper = (
                "the workspace's git repository was removed or corrupted; its diff cannot be "
                f"taken ({problem})"
            )
        else:
            special = self._special_tracked()
            if special:
                tamper = (
                    "files of the task's repository were replaced by special files (FIFO, "
                    f"socket or device) that hide the diff: {', '.join(special[:5])}"
                )
        return DiffEvidence(f"{NO_DIFF}{error}\n", error, tamper)

    def _special_tracked(self) -> list[str]:
        """The paths of base_commit's files that are now a FIFO, socket or device (lstat only:
        never opened), sorted. Empty when git cannot list them."""
        try:
            with private_git_dir(self.path, self.base_commit) as env:
                listed = git(
                    ["ls-tree", "-r", "-z", "--name-only", self.base_commit], cwd=self.path, env=env
                )
        except SandboxError:
            return []
        found = []
        for rel in sorted(os.fsdecode(p) for p in listed.split(b"\0") if p):
            try:
                mode = os.lstat(self.path / rel).st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                found.append(rel)
        return found

    def changed_files(self) -> list[str]:
        """Paths (relative, '/'-separated, sorted) added, modified or deleted since base; a
        rename counts as a deletion and an addition. Raises SandboxError when git fails."""
        with staged_snapshot(self.path, self.base_commit) as env:
            out = git(
                ["diff", "--cached", "--name-only", "--no-renames", "-z", self.base_commit],
                cwd=self.path,
                env=env,
            )
        return sorted(os.fsdecode(p) for p in out.split(b"\0") if p)


@dataclass(frozen=True, slots=True)
class DiffEvidence:
    """A workspace's change as a run keeps it. `text` is the patch (`Workspace.diff()`) or,
    when the diff could not be taken, one line starting with `NO_DIFF` that says why; `error`
    is that reason (None when the diff was taken). `tamper` is set when the reason is the
    workspace's own repository: its `.git` removed, or `base_commit` or an object missing or
    corrupted (`git fsck`), which only the agent could have done; it says so, without the
    `tamper:` prefix the grade adds."""

    text: str
    error: str | None
    tamper: str | None


def create_workspace(
    source: Path, parent: Path | None = None, *, name: str | None = None
) -> Workspace:
    """Copy `source` (a task's repo/) into a new directory and commit it to a fresh repository.

    The directory is `parent/name` when `name` is given (it must not exist yet), else a new
    unique directory in `parent` (default: the system temp dir). Files are copied, never
    hardlinked (an agent editing in place must not change the task); symlinks stay symlinks;
    every `.git` and `__pycache__` in source is skipped. Every file is committed, even ones the source's
    .gitignore matches, on branch main by "loopwright" at a fixed date, so the same source
    gives the same `base_commit`. The first workspace of a source is kept in memory and later
    ones are written from it while the source's files are unchanged (sandbox/_template.py), with
    no git process. Raises ConfigError when `source` is not a directory,
    UsageError when `parent/name` exists, SandboxError when git fails.
    """
    source = Path(source)
    if not source.is_dir():
        raise ConfigError(
            "cannot create a workspace: the source directory does not exist",
            got=str(source),
            fix="point to a task's repo/ directory",
        )
    dest = _new_directory(parent, name)
    try:
        source, sig = source.resolve(), signature(source)
        template = cached_template.get(source, sig)
        if template is not None:  # this source was committed before: write that out again
            template.write(dest)
            return Workspace(dest, template.base_commit)
        shutil.copytree(
            source,
            dest,
            symlinks=True,
            ignore=_skip_git,
            copy_function=_copy_file,
            dirs_exist_ok=True,
        )
        commit = _commit_base(dest)
        # One pack instead of a directory and a file per object: later workspaces of this source
        # are written from the template, and fewer files are much faster to write (for the same
        # reason no server info for dumb transports, `-n`, and no reflog of the base commit).
        git(["repack", "-a", "-d", "-q", "-n"], cwd=dest)
        kept = read_template(dest, sig, commit)
        if kept is not None:
            cached_template.put(source, kept)
        return Workspace(dest, commit)
    except BaseException:
        _rmtree(dest)
        raise


def remove_workspace(ws: Workspace | Path) -> None:
    """Delete the workspace directory, including files an agent made read-only. A missing
    directory is fine (idempotent)."""
    _rmtree(ws.path if isinstance(ws, Workspace) else Path(ws))


def _new_directory(parent: Path | None, name: str | None) -> Path:
    if parent is None:
        return Path(tempfile.mkdtemp(prefix=f"lw-{name or 'ws'}-")).resolve()
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    if name is None:
        return Path(tempfile.mkdtemp(prefix="ws-", dir=parent)).resolve()
    if Path(name).name != name or name in (".", ".."):
        raise UsageError("a workspace name must be a plain directory name", got=repr(name))
    dest = parent / name
    try:
        dest.mkdir()
    except FileExistsError:
        raise UsageError(
            "cannot create a workspace: the directory already exists",
            got=str(dest),
            fix="remove it, or pass another name (or none, for a unique one)",
        ) from None
    return dest.resolve()


_NOT_COPIED = frozenset({".git", "__pycache__"})


def _skip_git(directory: str, names: list[str]) -> set[str]:
    return set(_NOT_COPIED.intersection(names))


def _copy_file(src: str, dst: str) -> str:
    """Copy content and permission bits. copy_file_range lets the kernel copy without a trip
    through user space, and share extents (reflink) on filesystems that can; never a hardlink."""
    if not stat.S_ISREG(os.lstat(src).st_mode):  # a FIFO would block the open: never copied
        raise OSError(f"{src} is not a regular file (a FIFO, socket or device); remove it")
    try:
        with Path(src).open("rb") as fsrc, Path(dst).open("wb") as fdst:
            while os.copy_file_range(fsrc.fileno(), fdst.fileno(), 1 << 30):
                pass
    except OSError:  # EXDEV/ENOSYS/EINVAL on older kernels and some filesystems
        shutil.copyfile(src, dst)
    shutil.copymode(src, dst)
    return dst


def _commit_base(dest: Path) -> str:
    """Create the repository in `dest`, commit everything, return the commit id."""
    git(["init", "--quiet", "--template=", "--initial-branch=main"], cwd=dest)
    dotgit = dest / ".git"
    with (dotgit / "config").open("a", encoding="utf-8") as config:
        config.write(_REPO_CONFIG)
    (dotgit / "info").mkdir(exist_ok=True)
    (dotgit / "info" / "exclude").write_text(BASE_EXCLUDES, encoding="utf-8")
    git(["add", "--all", "--force", "--", "."], cwd=dest)
    git(["-c", "core.logAllRefUpdates=false", "commit", "--quiet", "--no-verify", "--allow-empty",
         "-m", BASE_MESSAGE], cwd=dest)  # fmt: skip
    (dotgit / "COMMIT_EDITMSG").unlink(missing_ok=True)
    return (dotgit / "refs" / "heads" / "main").read_text(encoding="ascii").strip()


def _with_binary_sizes(patch: bytes, cwd: Path, env: dict[str, str]) -> bytes:
    """`patch` with a `BINARY_SIZES` line after each `Binary files ... differ` line. The sizes
    are read from the blobs its `index <old>..<new>` line names (all zeros: no such side)."""
    lines = patch.splitlines(keepends=True)
    found: list[tuple[int, list[bytes]]] = []
    ids: list[bytes] = []
    for number, line in enumerate(lines):
        # Content lines start with ' ', '+', '-' or a backslash: these can only be headers.
        if line.startswith(b"diff --git "):
            ids = []
        elif line.startswith(b"index "):
            ids = line[len(b"index ") :].split()[0].split(b"..")
        elif line.startswith(b"Binary files ") and line.rstrip(b"\n").endswith(b" differ"):
            found.append((number, ids))
    if not found:
        return patch
    wanted = sorted({i for _, pair in found for i in pair if i.strip(b"0")})
    out = git(["cat-file", "--batch-check"], cwd=cwd, env=env, stdin=b"\n".join(wanted) + b"\n")
    sizes = {}
    for row in out.splitlines():
        name, _, rest = row.partition(b" ")
        kind, _, size = rest.partition(b" ")
        sizes[name] = size.decode() if kind == b"blob" else "unknown"
    for number, pair in reversed(found):
        old, new = (
            (sizes.get(i, "unknown") if i.strip(b"0") else "none" for i in pair)
            if len(pair) == 2
            else ("unknown", "unknown")
        )
        lines.insert(number + 1, f"{BINARY_SIZES}{old} -> {new} bytes\n".encode())
    return b"".join(lines)


def _rmtree(path: Path) -> None:
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except PermissionError:
        # An agent may have removed write permission from directories: restore it and retry.
        with contextlib.suppress(OSError):
            path.chmod(stat.S_IRWXU)
        for root, dirs, _ in os.walk(path):  # top-down: each level is fixed before it is listed
            for name in dirs:
                directory = Path(root) / name
                if directory.is_symlink():  # chmod would follow it out of the workspace
                    continue
                with contextlib.suppress(OSError):
                    directory.chmod(stat.S_IRWXU)
        shutil.rmtree(path, ignore_errors=True)
