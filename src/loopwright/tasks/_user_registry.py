"""The user's benchmarks registered by path: imported, mined or hand-made folders of tasks that
`run`, `evolve`, `research` and `bench` then take by name, like the bundled `mini`.

Stored in `$LOOPWRIGHT_BENCHMARKS` when set, else `~/.loopwright/benchmarks.json`: a versioned
JSON file (`UserBenchmarks`), replaced atomically under a file lock (`<file>.lock`), so
importers running at once do not lose each other's entries. See docs/importing.md,
"Registered benchmarks".
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError
from loopwright.tasks._loader import load_benchmark_dir

__all__ = [
    "BENCHMARKS_FILE_VARIABLE",
    "RegisteredBenchmark",
    "UserBenchmarks",
    "add_user_benchmark",
    "remove_user_benchmark",
    "user_benchmarks",
    "user_benchmarks_path",
]

BENCHMARKS_FILE_VARIABLE = "LOOPWRIGHT_BENCHMARKS"
USER_REGISTRY_VERSION: Literal[1] = 1
_NAME = r"^[a-z0-9][a-z0-9_.-]*$"


class RegisteredBenchmark(BaseModel):
    """One registered benchmark: its name, its folder (absolute), what made it (`manual`,
    `harbor`, `swebench`, `featurebench`, `mined`...), and when it was registered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=_NAME)
    path: str
    source: str = "manual"
    added_at: str


class UserBenchmarks(BaseModel):
    """The registry file: `schema_version` and the benchmarks, sorted by name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = USER_REGISTRY_VERSION
    benchmarks: list[RegisteredBenchmark] = Field(default_factory=list)

    def find(self, name: str) -> RegisteredBenchmark | None:
        """The entry named `name`, or None."""
        return next((b for b in self.benchmarks if b.name == name), None)


def user_benchmarks_path() -> Path:
    """`$LOOPWRIGHT_BENCHMARKS` when set and non-empty, else `~/.loopwright/benchmarks.json`
    (read at call time)."""
    explicit = os.environ.get(BENCHMARKS_FILE_VARIABLE, "").strip()
    return (
        Path(explicit).expanduser() if explicit else Path.home() / ".loopwright" / "benchmarks.json"
    )


def user_benchmarks() -> UserBenchmarks:
    """The registered benchmarks (none when the file does not exist). ConfigError naming the
    file when it is unreadable or not a registry of a version this loopwright reads."""
    path = user_benchmarks_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return UserBenchmarks()
    except OSError as exc:
        raise ConfigError(f"cannot read the benchmark registry {path}", got=str(exc)) from exc
    try:
        return UserBenchmarks.model_validate_json(raw)
    except ValidationError as exc:
        raise ConfigError(
            f"the benchmark registry {path} is not valid",
            got=str(exc).splitlines()[0],
            fix=f"repair or delete it (set {BENCHMARKS_FILE_VARIABLE} to use another file)",
        ) from exc


def default_name(path: Path) -> str:
    """A registry name from a folder name: lower case, other characters as `-`."""
    name = re.sub(r"[^a-z0-9_.-]+", "-", path.resolve().name.lower()).strip("-.")
    return name or "benchmark"


def add_user_benchmark(
    path: Path,
    *,
    name: str | None = None,
    source: str = "manual",
    replace: bool = False,
    reserved: frozenset[str] = frozenset(),
) -> RegisteredBenchmark:
    """Register the folder of tasks at `path` as `name` (default: from the folder's name) and
    return the entry. The folder must load as a benchmark (ConfigError naming its problems).
    Registering the same name and path again refreshes the entry. ConfigError when `name` is
    in `reserved` (the bundled and plugin names) or names another folder and `replace` is
    False. Importers and `tasks mine` call this with `replace=True` for their `--out` folder."""
    folder = path.expanduser().resolve()
    load_benchmark_dir(folder)  # raises, naming every invalid task
    chosen = name or default_name(folder)
    if not re.match(_NAME, chosen):
        raise ConfigError(
            f"{chosen!r} is not a benchmark name",
            fix="use lower-case letters, digits, '-', '_' or '.', starting with a letter or digit",
        )
    if chosen in reserved:
        raise ConfigError(
            f"the benchmark name {chosen!r} is taken by a bundled benchmark",
            fix="choose another with --name",
        )
    entry = RegisteredBenchmark(
        name=chosen,
        path=str(folder),
        source=source,
        added_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    with _locked():
        current = user_benchmarks()
        known = current.find(chosen)
        if known is not None and known.path != entry.path and not replace:
            raise ConfigError(
                f"a benchmark named {chosen!r} is already registered",
                got=f"{known.path} (asked to register {entry.path})",
                fix="choose another with --name, or `loopwright bench add PATH --replace`",
            )
        _write([b for b in current.benchmarks if b.name != chosen] + [entry])
    return entry


def remove_user_benchmark(name: str) -> RegisteredBenchmark:
    """Forget the registered benchmark `name` (its folder is left alone) and return its entry.
    ConfigError listing the registered names when there is none."""
    with _locked():
        current = user_benchmarks()
        known = current.find(name)
        if known is None:
            names = ", ".join(b.name for b in current.benchmarks) or "none"
            raise ConfigError(f"no registered benchmark named {name!r}", got=f"registered: {names}")
        _write([b for b in current.benchmarks if b.name != name])
    return known


def _write(entries: list[RegisteredBenchmark]) -> None:
    path = user_benchmarks_path()
    data = UserBenchmarks(benchmarks=sorted(entries, key=lambda b: b.name))
    try:
        atomic_write(path, data.model_dump_json(indent=2) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write the benchmark registry {path}", got=str(exc)) from exc


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """An exclusive flock on `<registry>.lock`, held while the registry is read and replaced."""
    path = user_benchmarks_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ConfigError(f"cannot write the benchmark registry {path}", got=str(exc)) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
