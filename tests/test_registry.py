"""The one Registry shape: unknown and duplicate names say what is known and how to fix it,
order, copies and removal; every registry of the package is one."""

from __future__ import annotations

import pytest

from loopwright.errors import ConfigError, UsageError
from loopwright.registry import Registry
from loopwright.runtime import CHECKS, EXTERNAL_AGENTS, FUNCTIONS, LOOPS, TOOLS
from loopwright.search import MUTATIONS
from loopwright.tasks._registry import BENCHMARKS


def colours() -> Registry[int]:
    reg: Registry[int] = Registry("colour")
    reg.add("red", 1)
    reg.register("blue")(2)
    return reg


def test_an_unknown_name_is_a_config_error_listing_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown colour 'green'") as info:
        colours().get("green")
    assert info.value.got == "green"
    assert info.value.fix == "use one of: blue, red"
    with pytest.raises(ConfigError, match="none registered"):
        Registry[int]("colour")["green"]


def test_a_taken_name_is_a_usage_error_with_the_fix() -> None:
    reg = colours()
    with pytest.raises(UsageError, match="colour named 'red' is already registered") as info:
        reg.add("red", 3)
    assert "blue, red" in (info.value.got or "")
    assert "another name" in (info.value.fix or "")
    assert reg["red"] == 1  # the first registration stands


def test_names_are_sorted_or_in_registration_order() -> None:
    assert colours().names() == ("blue", "red")
    ordered: Registry[int] = Registry("colour", in_registration_order=True)
    ordered.add("red", 1)
    ordered.add("blue", 2)
    assert ordered.names() == ("red", "blue") and list(ordered) == ["red", "blue"]
    assert ordered.items() == (("red", 1), ("blue", 2))


def test_copy_is_independent_and_remove_unregisters() -> None:
    reg = colours()
    clone = reg.copy()
    clone.add("green", 3)
    assert "green" in clone and "green" not in reg and len(reg) == 2
    assert clone.remove("green") == 3 and "green" not in clone
    with pytest.raises(ConfigError, match="unknown colour"):
        clone.remove("green")


@pytest.mark.parametrize(
    "registry",
    [TOOLS, LOOPS, FUNCTIONS, CHECKS, EXTERNAL_AGENTS, MUTATIONS, BENCHMARKS],
    ids=lambda r: r.kind,
)
def test_every_registry_of_the_package_is_the_one_shape(registry: Registry[object]) -> None:
    assert isinstance(registry, Registry) and len(registry) > 0
    first = registry.names()[0]
    with pytest.raises(ConfigError, match=f"unknown {registry.kind} 'no-such-name'") as info:
        registry.get("no-such-name")
    assert first in (info.value.fix or "")
    with pytest.raises(UsageError, match="already registered"):
        registry.add(first, registry.get(first))
