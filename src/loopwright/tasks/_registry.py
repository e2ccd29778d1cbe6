"""The registry of named benchmarks (a `loopwright.registry.Registry`): the bundled ones, and
any a user or plugin registers."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from loopwright.errors import ConfigError
from loopwright.registry import Registry
from loopwright.tasks._loader import load_benchmark_dir
from loopwright.tasks._model import Benchmark

__all__ = ["BENCHMARKS", "benchmark_names", "load_benchmark", "register_benchmark"]

BENCHMARKS: Registry[Callable[[], Path]] = Registry("benchmark")
"""Benchmark name -> a function returning its folder (called lazily, on load)."""


def register_benchmark(name: str, locate: Callable[[], Path]) -> None:
    """Register `name` as a benchmark whose folder `locate()` returns (called lazily, on load).
    UsageError when the name is taken."""
    BENCHMARKS.add(name, locate)


def benchmark_names() -> list[str]:
    """The registered benchmark names, sorted."""
    return list(BENCHMARKS.names())


def load_benchmark(name_or_path: str | Path) -> Benchmark:
    """Load a registered benchmark by name, or any folder of tasks by path.

    Raises ConfigError when the name is not registered and no such folder exists, listing the
    registered names; or when a task in the folder is invalid.
    """
    key = str(name_or_path)
    if key in BENCHMARKS:
        return load_benchmark_dir(BENCHMARKS.get(key)(), name=key)
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
