"""The run directory seam: where a run lives, how its files are written, what it says it is.

`RunDir` creates a run directory (refusing one that holds something already), writes every
file that must survive a crash through one `atomic_write`, and carries the run's `RunMeta`
(`config.yaml`): a versioned header saying which loopwright, model, benchmark and seed made the
run and whether its model was simulated, around the run kind's own typed settings. `EventLog`
is a typed, versioned JSONL log (`progress.jsonl` of an evolve run): each line is one event of
a pydantic discriminated union, read back through the same union. docs/runs.md describes the
files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from loopwright._caller import Caller, caller, spoken
from loopwright._fs import atomic_write, drop_torn_tail, is_atomic_temp, open_append, write_all
from loopwright._version import __version__
from loopwright.errors import ConfigError, UsageError
from loopwright.store._paths import check_new_dir

__all__ = [
    "META_FILE",
    "RUN_META_VERSION",
    "EventLog",
    "RunDir",
    "RunKind",
    "RunMeta",
    "default_run_path",
    "is_simulated",
    "read_yaml_mapping",
    "source_commit",
]

META_FILE = "config.yaml"
RUN_META_VERSION = 3
"""3 added `caller` (who started the run: a Python program or the CLI). Version 2 files, and
the layouts before it, are upgraded on read (`caller` unknown: None)."""

RunKind = Literal["run", "evolve", "research", "ab"]


def is_simulated(model: str | None) -> bool:
    """Whether a model spec names one of the offline models (`sim`, `scripted:FILE`): results
    made with it say SIMULATED wherever they are shown."""
    if model is None:
        return False
    name = model.partition("?")[0]
    return name == "sim" or name.startswith(("sim:", "scripted:"))


class RunMeta(BaseModel):
    """`<run>/config.yaml`: what made the run (schema version 3).

    The header is the same for every kind: the loopwright version and source commit, when the
    run was created, the agent model and whether it is simulated, the benchmark (name and
    content digest) and the base seed. `config` is the kind's own settings (an evolve run's
    `EvolveConfig`, a `run`'s evaluation settings, tasks and workflows), validated by the
    package that owns the kind (`RunMeta.config` is plain JSON here, typed there). `caller`:
    whether a Python program or the CLI started the run (None in files older than version 3),
    so that its report names settings as that caller set them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = RUN_META_VERSION
    kind: RunKind
    loopwright_version: str = __version__
    git_commit: str | None = None
    created_at: str = ""
    model: str | None = None
    simulated: bool = False
    benchmark: str | None = None
    benchmark_digest: str | None = None
    seed: int | None = None
    caller: Caller | None = None
    config: dict[str, Any] = {}

    @classmethod
    def new(cls, kind: RunKind, *, model: str | None, **fields: Any) -> RunMeta:
        """A header stamped now (with the source commit and the current caller unless
        given), `simulated` derived from `model`."""
        created = datetime.now(UTC).isoformat(timespec="seconds")
        fields.setdefault("git_commit", source_commit())
        fields.setdefault("caller", caller())
        return cls(kind=kind, model=model, simulated=is_simulated(model), created_at=created,
                   **fields)  # fmt: skip


class RunDir:
    """One run directory: its path, its metadata and every write into it.

    `create` makes a new one (or takes an empty one); `open` takes an existing one. Writes go
    through `write` (atomic, fsynced, never following a symlink planted at the name).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @classmethod
    def create(
        cls,
        path: Path | None,
        *,
        label: str,
        refuse: str | None = None,
        ignore: Collection[str] = (),
    ) -> RunDir:
        """A new run directory at `path` (default `runs/<UTC stamp>-<label>`).

        UsageError when `path` holds anything already (a run there is resumed, never
        overwritten), or when it holds the file `refuse` names (then the message says which
        kind of run is there), or when it cannot be created (the fix names the cause). Names in
        `ignore` do not count (a run's lock file, taken before anything is written: calling
        `create` again under the lock tells the loser of a start race that it lost)."""
        path = path if path is not None else default_run_path(label)
        cls.check_new(path, refuse=refuse, ignore=ignore)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"cannot create run directory {path}: {exc.strerror or exc}",
                fix=f"give a run directory ({spoken('run_dir', '--run-dir')}) under a "
                "directory you can write",
            ) from None
        return cls(path)

    @staticmethod
    def check_new(
        path: Path,
        flag: str | None = None,
        *,
        refuse: str | None = None,
        ignore: Collection[str] = (),
    ) -> None:
        """`create` would succeed at `path`: absent or an empty directory (names in `ignore`
        and the temporary files of an atomic write a kill cut off do not count), under a
        directory this process can write. UsageError naming the path
        and the fix otherwise (see `create` for `refuse`); creates nothing (what a command
        checks before it writes). `flag` names the directory in messages (default: `run_dir`
        to a Python caller, `--run-dir` at the command line)."""
        flag = flag or spoken("run_dir", "--run-dir")
        if refuse is not None and (path / refuse).exists():
            raise UsageError(
                f"run directory {path} already holds a run",
                fix=f"resume it instead ({spoken('loopwright.resume', '--resume')}), or give "
                f"another run directory ({flag})",
            )
        check_new_dir(path, flag)
        if path.is_dir() and any(_counts(p.name, ignore) for p in path.iterdir()):
            raise UsageError(
                f"run directory {path} already exists and is not empty",
                fix=f"give another run directory ({flag}), or remove that one",
            )

    @classmethod
    def open(cls, path: Path) -> RunDir:
        """An existing run directory. UsageError when there is none at `path`."""
        if not path.is_dir():
            raise UsageError(
                f"no run directory at {path}",
                fix="pass the directory a loopwright run, evolve or research wrote",
            )
        return cls(path)

    def file(self, name: str | Path) -> Path:
        return self.path / name

    def write(self, name: str | Path, data: str | bytes) -> Path:
        """Write the file `name` (relative to the run) atomically; parents are created."""
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data)
        return target

    def write_json(self, name: str | Path, data: BaseModel | dict[str, Any]) -> Path:
        """A pydantic model or a mapping as indented JSON with a final newline."""
        if isinstance(data, BaseModel):
            return self.write(name, data.model_dump_json(indent=2) + "\n")
        return self.write(name, json.dumps(data, indent=2) + "\n")

    def write_meta(self, meta: RunMeta) -> Path:
        text = yaml.safe_dump(meta.model_dump(mode="json"), sort_keys=False, width=100)
        return self.write(META_FILE, text)

    def meta(self) -> RunMeta | None:
        """`config.yaml` as a RunMeta (older layouts upgraded on read); None when absent.
        ConfigError when it is not YAML, or not a run header this loopwright reads."""
        data = read_yaml_mapping(self.path / META_FILE)
        if data is None:
            return None
        try:
            return RunMeta.model_validate(_upgrade(data))
        except ValidationError as exc:
            raise ConfigError(
                f"{self.path / META_FILE} is not a run header this loopwright reads",
                got=str(exc.errors()[0])[:300],
                fix=f"it reads schema_version {RUN_META_VERSION} and the layouts before it",
            ) from None


def default_run_path(label: str) -> Path:
    """`runs/<UTC stamp>-<label>`, the label reduced to file-name characters."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{stamp}-{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}"


def read_yaml_mapping(path: Path) -> dict[str, Any] | None:
    """A YAML file holding a mapping; None when the file is absent. ConfigError otherwise."""
    if not path.is_file():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid YAML", got=str(exc)[:300]) from None
    if data is None:
        raise ConfigError(f"{path} is empty", got="a file with no YAML in it",
                          fix="restore it from a copy, or remove the directory and start again")  # fmt: skip
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a mapping", got=type(data).__name__)
    return data


def read_json_mapping(path: Path, *, what: str, fix: str | None = None) -> dict[str, Any]:
    """A JSON file loopwright wrote, holding an object. ConfigError, naming `what` (e.g. "the
    evolve checkpoint") and the path, when the file is missing, not UTF-8, not JSON (truncated
    by a crash or a full disk, or edited) or not an object: never a traceback. `fix` replaces
    the default advice (restore a copy, or start a new run)."""
    damaged = fix or "restore it from a copy, or start a new run in another directory"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{what} is missing", got=str(path), fix=damaged) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} is not text", got=f"{path}: binary bytes", fix=damaged) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{what} is not valid JSON (truncated or edited?)", got=f"{path}: {exc}", fix=damaged
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{what} is not a JSON object", got=f"{path}: {type(data).__name__}",
                          fix=damaged)  # fmt: skip
    return data


# The header fields every kind shares; what else an older config.yaml held is the kind's config.
_HEADER = ("kind", "loopwright_version", "git_commit", "created_at")


def _upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """An older config.yaml in the version-3 shape.

    Version 1 (`run`, to 2026-12): settings, benchmark {name, digest}, tasks and workflows at
    the top. Unversioned (`evolve`, to 2026-12): the EvolveConfig fields at the top beside the
    stamp. A research directory's config.yaml is its own versioned ResearchConfig: its header
    fields are lifted out, the whole file is its config."""
    if data.get("schema_version") in (2, RUN_META_VERSION) and "config" in data:
        return {**data, "schema_version": RUN_META_VERSION}  # 2 -> 3: the caller is unknown
    kind = data.get("kind")
    head = {k: data[k] for k in _HEADER if k in data}
    if kind == "run":
        settings = data.get("settings") or {}
        bench = data.get("benchmark") or {}
        model = settings.get("model")
        rest = {k: v for k, v in data.items() if k in ("settings", "tasks", "workflows")}
        return {**head, "model": model, "simulated": is_simulated(model),
                "benchmark": bench.get("name"), "benchmark_digest": bench.get("digest"),
                "seed": settings.get("seed"), "config": rest}  # fmt: skip
    model = data.get("model")
    if kind == "research":
        evaluation = data.get("eval") or {}
        model = evaluation.get("model")
        return {**head, "model": model, "simulated": is_simulated(model),
                "benchmark": evaluation.get("bench"), "seed": data.get("seed"),
                "benchmark_digest": data.get("benchmark_digest"), "config": data}  # fmt: skip
    rest = {k: v for k, v in data.items() if k not in (*_HEADER, "benchmark_digest")}
    return {**head, "model": model, "simulated": is_simulated(model),
            "benchmark": data.get("bench"), "benchmark_digest": data.get("benchmark_digest"),
            "seed": data.get("seed"), "config": rest}  # fmt: skip


E = TypeVar("E", bound=BaseModel)


class EventLog(Generic[E]):
    """A JSONL log of typed events, one per line, each `{"v": VERSION, "event": ..., ...}`.

    `events` is a TypeAdapter of a discriminated union on `event`. A line is written with one
    `write` and fsync-free (a log, not a checkpoint); a line cut off by a kill is dropped before
    the next append (`drop_torn_tail`: it held no whole event), so the next event starts on a
    line of its own; on read, a line that does not parse, of an unknown event or of another
    version is skipped (counted in `skipped`). `listener`, when given, sees every event appended.
    """

    def __init__(
        self,
        path: Path,
        events: TypeAdapter[E],
        version: int,
        listener: Callable[[E], None] | None = None,
    ) -> None:
        self.path, self.events, self.version, self.listener = path, events, version, listener
        self.skipped = 0

    def append(self, event: E) -> None:
        payload = {"v": self.version, **event.model_dump(mode="json")}
        line = json.dumps(payload, sort_keys=False) + "\n"
        fd = open_append(self.path)
        try:
            drop_torn_tail(fd)
            write_all(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
        if self.listener is not None:
            self.listener(event)

    def read(self) -> list[E]:
        """Every well-formed event of this version, in order ([] when there is no log)."""
        return list(self._parse())

    def _parse(self) -> Iterator[E]:
        self.skipped = 0
        if not self.path.is_file():
            return
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                self.skipped += 1  # a line cut off by a kill
                continue
            if not isinstance(obj, dict) or obj.pop("v", self.version) != self.version:
                self.skipped += 1
                continue
            try:
                yield self.events.validate_python(obj)
            except ValidationError:
                self.skipped += 1


def source_commit() -> str | None:
    """The git commit of the loopwright source in use: 40 hex digits, with `+dirty` when
    tracked files differ from it. None when loopwright is not run from a git checkout or git
    is not installed. Runs `git` twice (read-only); for stamping run directories."""
    git = shutil.which("git")
    root = _checkout_root(Path(__file__).resolve())
    if git is None or root is None:
        return None
    try:
        head = subprocess.run(
            [git, "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if head.returncode != 0:
            return None
        status = subprocess.run(
            [git, "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None  # a stamp without the commit still says so; never worth failing a run
    sha = head.stdout.strip()
    return sha + ("+dirty" if status.returncode == 0 and status.stdout.strip() else "")


def _checkout_root(start: Path) -> Path | None:
    for parent in start.parents:
        if (parent / ".git").exists():
            return parent
        if (parent / "site-packages").exists() or parent.name == "site-packages":
            return None  # an installed wheel: not a checkout
    return None


def _counts(name: str, ignore: Collection[str]) -> bool:
    """Whether a file named `name` makes a would-be run directory non-empty."""
    return name not in ignore and not is_atomic_temp(name)
