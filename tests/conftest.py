"""Session-wide test settings: no test reads or writes the user's own benchmark registry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_benchmark_registry(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`~/.loopwright/benchmarks.json` stays untouched: each test gets its own registry file
    (importers and `tasks mine` register their output there)."""
    if "LOOPWRIGHT_BENCHMARKS" not in os.environ:
        path = Path(tmp_path_factory.mktemp("registry")) / "benchmarks.json"
        monkeypatch.setenv("LOOPWRIGHT_BENCHMARKS", str(path))
