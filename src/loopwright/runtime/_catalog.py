"""The runtime's registries as one value, and the catalog workflows are validated against."""

from __future__ import annotations

from dataclasses import dataclass

from loopwright.runtime import (  # noqa: F401  (registers the built-ins)
    _builtin_tools,
    _loops_plan,
    _steps,
)
from loopwright.runtime._loops import LOOPS, AgentLoop
from loopwright.runtime._registry import Registry
from loopwright.runtime._steps import CHECKS, FUNCTIONS, Check, Fn
from loopwright.runtime._tools import FINISH, TOOLS, Tool
from loopwright.runtime.external import _agents  # noqa: F401  (registers the adapters)
from loopwright.workflow import Catalog, default_catalog

__all__ = ["Registries", "default_registries", "runtime_catalog"]


@dataclass(frozen=True, slots=True)
class Registries:
    """The implementations a Runner may use: tools, agent loops, functions and checks."""

    tools: Registry[Tool]
    loops: Registry[AgentLoop]
    functions: Registry[Fn]
    checks: Registry[Check]

    def copy(self) -> Registries:
        """Independent copies of every registry (to add implementations without touching these)."""
        return Registries(
            self.tools.copy(), self.loops.copy(), self.functions.copy(), self.checks.copy()
        )

    def with_loop(self, name: str, loop: AgentLoop) -> Registries:
        """These registries with `loop` under `name` in a new loop registry (replacing a loop of
        that name, e.g. `external:claude-code` run with a stand-in executable); the other
        registries are shared, not copied."""
        loops: Registry[AgentLoop] = Registry(self.loops.kind)
        for known in self.loops:
            if known != name:
                loops.add(known, self.loops.get(known))
        loops.add(name, loop)
        return Registries(self.tools, loops, self.functions, self.checks)


def default_registries() -> Registries:
    """The registries the `@tool`, `@agent_loop`, `@fn` and `@check` decorators fill."""
    return Registries(TOOLS, LOOPS, FUNCTIONS, CHECKS)


def runtime_catalog(registries: Registries | None = None) -> Catalog:
    """`default_catalog()` extended with every registered name (finish excepted: it is offered
    to every agent and is not listed in `tools`); closed to external loops: `external:NAME`
    must be a registered adapter's. Validate workflows against this before
    running them; a name in the default catalog that `registries` does not implement passes
    validation and fails at run time as a node error."""
    regs = registries if registries is not None else default_registries()
    return default_catalog().extended(
        tools=[n for n in regs.tools.names() if n != FINISH],
        functions=regs.functions.names(),
        checks=regs.checks.names(),
        loops=regs.loops.names(),
        closed_external=True,  # only the registered adapters' external:NAME loops
    )
