"""One run lifecycle for every loop that owns a run directory (evolve, research, the A/B harness).

A kind of run is described once by a `RunSpec` (its header file, its lock file, the option that
names its directory, how to continue it, which file says it finished); `RunLifecycle` does the
rest the same way for all of them:

- `check_new`: a new run may be made here (nothing is created: what a command checks before it
  prints anything);
- `create`: claim the directory (refusing one that holds another run, or anything else), take
  its lock, check again under the lock (so of two processes started together exactly one
  gets the directory), then the caller writes its header;
- `reopen`: continue the run here (refused, creating nothing, when there is none), under its
  lock;
- `state`: `new` (no header), `partial` (a header, not finished) or `finished`;
- `sweep`: remove the scratch a killed process left (a cut-off step's directories);
- a full disk met inside `create` or `reopen` is one DiskFullError naming the resume command.

The lock is the one `DirLock` (an fcntl lock the OS drops with its holder). docs/runs.md
lists each kind's files.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loopwright._caller import spoken
from loopwright.errors import UsageError
from loopwright.store._faults import out_of_space
from loopwright.store._lock import DirLock, lock_holder
from loopwright.store._rundir import RunDir, RunKind

__all__ = ["RunLifecycle", "RunSpec", "RunStatus"]

RunStatus = Literal["new", "partial", "finished"]


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What tells one kind of run directory from another.

    `header`: the file a run writes first (under its lock); its presence means a run of this
    kind is here. `lock`: the lock file. `flag`: the option that names the directory (for
    messages). `noun`: what the run is called in messages ("evolve run"). `resume`: the command
    that continues it, with `{path}` for the directory. `finished`: the file whose presence
    means the run ended (None: the kind decides, `state` then never says finished).
    `busy_fix`: what to do when another process holds the lock. Messages are in the caller's
    words (`loopwright._caller`): at the command line `flag`, `resume` and `busy_fix`; to a
    Python caller `param` (the argument that names the directory), `api_resume` (the call that
    continues the run, `{path}` as a Python string) and `api_busy_fix`."""

    kind: RunKind
    header: str
    lock: str
    flag: str
    noun: str
    resume: str
    param: str
    api_resume: str
    finished: str | None = None
    busy_fix: str = "wait for it to finish, or stop that process; then continue it"
    api_busy_fix: str = "wait for it to finish, or stop that process; then continue it"

    def at(self, path: str | Path) -> RunLifecycle:
        """The lifecycle of the run directory `path` of this kind."""
        return RunLifecycle(self, Path(path))


class RunLifecycle:
    """One run directory of one kind, through its life (see the module docstring)."""

    def __init__(self, spec: RunSpec, path: Path) -> None:
        self.spec, self.path = spec, path

    def __repr__(self) -> str:
        return f"RunLifecycle({self.spec.kind!r}, {str(self.path)!r})"

    @property
    def lock_path(self) -> Path:
        return self.path / self.spec.lock

    @property
    def resume_command(self) -> str:
        """How the run is continued, in the caller's words: the command, or the call."""
        return spoken(
            self.spec.api_resume.format(path=repr(str(self.path))),
            self.spec.resume.format(path=self.path),
        )

    @property
    def named(self) -> str:
        """What names the directory, in the caller's words: the parameter or the flag."""
        return spoken(self.spec.param, self.spec.flag)

    def lock(self) -> DirLock:
        """The run's lock (a context manager): a second process is refused with a UsageError
        saying which kind of run holds the directory and the holder's pid."""
        return DirLock(
            self.lock_path,
            busy=f"another process is running this {self.spec.noun} ({self.path})",
            fix=spoken(self.spec.api_busy_fix, self.spec.busy_fix),
        )

    def holder(self) -> int | None:
        """The pid of the live process running this run, None when none is (never disturbs it)."""
        return lock_holder(self.lock_path)

    def state(self) -> RunStatus:
        """`new` (no header yet), `partial` (started, not finished) or `finished`."""
        if not (self.path / self.spec.header).is_file():
            return "new"
        done = self.spec.finished
        return "finished" if done is not None and (self.path / done).is_file() else "partial"

    def check_new(self) -> None:
        """`create` would succeed: no run of this kind is here (else a UsageError saying to
        continue it), and the directory is absent or empty (its lock file and a kill's
        atomic-write temporaries aside), under a directory this process can write. Creates
        nothing."""
        if (self.path / self.spec.header).exists():
            raise UsageError(
                f"{self.path} is not empty: it already holds a run ({self.spec.noun})",
                fix=f"continue it ({self.resume_command}), or pass another {self.named}",
            )
        RunDir.check_new(self.path, self.named, ignore=(self.spec.lock,))

    @contextmanager
    def create(self) -> Iterator[RunDir]:
        """Claim a new run directory and hold its lock while the block runs (the caller writes
        the header first). Checked again under the lock: a process that lost a start race is
        refused by the lock, or, when the winner already wrote, by what it wrote."""
        self.check_new()
        with self.faults():
            RunDir.create(self.path, label=self.spec.kind, ignore=(self.spec.lock,))
            with self.lock():
                self.check_new()
                yield RunDir(self.path)

    def require(self) -> RunDir:
        """The run directory, when a run of this kind was started there (its header, or its
        lock file: one killed before its header was written, or starting right now): a
        UsageError otherwise, made before anything (its lock) would be created there."""
        run = RunDir.open(self.path)
        if self.state() == "new" and not self.lock_path.exists():
            raise UsageError(
                f"{self.path} holds no {self.spec.noun} (no {self.spec.header})",
                fix=f"pass the directory of a {self.spec.noun} ({self.named}), or start one there",
            )
        return run

    @contextmanager
    def reopen(self) -> Iterator[RunDir]:
        """Continue the run: `require`, then its lock held while the block runs."""
        run = self.require()
        with self.faults(), self.lock():
            yield run

    @contextmanager
    def faults(self) -> Iterator[None]:
        """A full disk met in the block: one DiskFullError naming the path and the command
        that continues the run, not a traceback."""
        with out_of_space(self.path, resume=self.resume_command):
            yield

    def sweep(self, paths: Iterable[Path]) -> list[Path]:
        """Remove the scratch a killed process left (directories or files inside the run);
        returns what was removed. Call it under the lock, before the run goes on."""
        removed = []
        for path in paths:
            if not path.resolve().is_relative_to(self.path.resolve()):
                raise ValueError(f"{path} is not inside the run directory {self.path}")
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
            else:
                continue
            removed.append(path)
        return removed
