"""The registry of named benchmarks (a `loopwright.registry.Registry`): the bundled ones and any
a plugin registers in code; and the user's, registered by path in a file
(`tasks/_user_registry.py`: `loopwright bench add`, the importers, `tasks mine`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.registry import Registry
from loopwright.tasks._loader import load_benchmark_dir
from loopwright.tasks._model import Benchmark
from loopwright.tasks._user_registry import RegisteredBenchmark, add_user_benchmark, user_benchmarks

__all__ = [
    "BENCHMARKS",
    "benchmark_names",
    "load_benchmark",
    "register_benchmark",
    "register_benchmark_dir",
]

BENCHMARKS: Registry[Callable[[], Path]] = Registry("benchmark")
"""Benchmark name -> a function returning its folder (called lazily, on load)."""


def register_benchmark(name: str, locate: Callable[[], Path]) -> None:
    """Register `name` as a benchmark whose folder `locate()` returns (called lazily, on load).
    UsageError when the name is taken."""
    BENCHMARKS.add(name, locate)


def register_benchmark_dir(
    path: Path, *, name: str | None = None, source: str = "manual", replace: bool = False
) -> RegisteredBenchmark:
    """Register the folder of tasks at `path` in the user's registry (`~/.loopwright/
    benchmarks.json`, or `$LOOPWRIGHT_BENCHMARKS`) under `name` (default: the folder's name),
    so every command takes it by name. What importers and `tasks mine` call on their output
    (with `replace=True`). ConfigError when the folder is not a valid benchmark, or the name is
    a bundled one, or names another folder and `replace` is False."""
    return add_user_benchmark(
        path, name=name, source=source, replace=replace, reserved=frozenset(BENCHMARKS.names())
    )


def benchmark_names() -> list[str]:
    """The benchmark names: bundled and plugin ones, and the user's registered ones, sorted."""
    return sorted({*BENCHMARKS.names(), *(b.name for b in user_benchmarks().benchmarks)})


def load_benchmark(name_or_path: str | Path) -> Benchmark:
    """Load a benchmark by name (bundled, plugin, or registered by the user), or any folder of
    tasks by path.

    Raises ConfigError when the name is not registered and no such folder exists, listing the
    registered names; when a registered folder is gone; or when a task in the folder is invalid.
    """
    key = str(name_or_path)
    if key in BENCHMARKS:
        return load_benchmark_dir(BENCHMARKS.get(key)(), name=key)
    entry = user_benchmarks().find(key)
    if entry is not None:
        if not Path(entry.path).is_dir():
            raise ConfigError(
                f"the registered benchmark {key!r} is gone",
                got=f"no folder at {entry.path}",
                fix=f"restore it, or `loopwright bench remove {key}`",
            )
        return load_benchmark_dir(Path(entry.path), name=key)
    path = Path(name_or_path).expanduser()
    if path.exists():
        return load_benchmark_dir(path)
    raise ConfigError(
        f"unknown benchmark {key!r}",
        got=f"no registered benchmark by that name and no folder at {path}",
        fix=f"use one of: {', '.join(benchmark_names())}; or the path to a folder of tasks",
    )


def _bundled(name: str) -> Callable[[], Path]:
    def locate() -> Path:
        return Path(str(resources.files("loopwright.tasks") / "bundled" / name))

    return locate


register_benchmark("mini", _bundled("mini"))
register_benchmark("forge", _bundled("forge"))
