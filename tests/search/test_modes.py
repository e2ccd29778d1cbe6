"""Ephemeral modes live under the run; cleanup keeps survivors; promote writes the library."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.search._individual import Individual, Lineage
from loopwright.search._modes import EphemeralModeRegistry
from loopwright.workflow import builtin_workflow, load_workflow


def ind(i: str, gen: int = 0) -> Individual:
    return Individual(id=i * 12, generation=gen, workflow=builtin_workflow("builder-only"),
                      lineage=Lineage(operator="seed"))  # fmt: skip


def test_register_cleanup_and_promote(tmp_path: Path) -> None:
    reg = EphemeralModeRegistry(tmp_path / "run")
    a, b = ind("a"), ind("b", 1)
    reg.register(a)
    reg.register(b)
    assert reg.names() == ["evolve-gen0-aaaaaaaa", "evolve-gen1-bbbbbbbb"]
    assert reg.cleanup(keep=[b]) == ["evolve-gen0-aaaaaaaa"]
    path = reg.promote(b.mode, "my-winner", tmp_path / "lib")
    assert load_workflow(path).name == "my-winner"
    with pytest.raises(UsageError):
        reg.promote(b.mode, "my-winner", tmp_path / "lib")
    with pytest.raises(UsageError):
        reg.promote(a.mode, "x", tmp_path / "lib")


def test_promote_refuses_a_builtin_name_and_a_bad_name(tmp_path: Path) -> None:
    from loopwright.errors import ConfigError
    from loopwright.search._modes import _check_new_name

    with pytest.raises(UsageError, match="built-in"):
        _check_new_name("thorough")
    for bad in ("a/b", "x.yaml", "-x", ""):
        with pytest.raises(ConfigError):
            _check_new_name(bad)
