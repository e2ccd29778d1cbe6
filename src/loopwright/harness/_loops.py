"""The live loop registry as the harness sees it.

The harness treats loops generically: the names are the runtime's registered loops, native
(`react`, `plan_execute`, `hybrid`) and external (`external:NAME`, one per adapter). A loop
that cannot run here says so when run (`unavailable: ...`, see `_cell`).
"""

from __future__ import annotations

from loopwright.runtime import Registries, default_registries

__all__ = ["live_loops", "loop_unavailable"]


def live_loops(registries: Registries | None = None) -> tuple[str, ...]:
    """Every registered loop name, sorted: what a manifest is validated against."""
    regs = registries if registries is not None else default_registries()
    return regs.loops.names()


def loop_unavailable(loop: str, registries: Registries | None = None) -> str | None:
    """Why `loop` cannot run here before trying it (it is not registered), or None."""
    regs = registries if registries is not None else default_registries()
    if loop not in regs.loops:
        return f"unavailable: no runtime is registered for loop {loop!r}"
    return None
