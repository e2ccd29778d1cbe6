"""The runtime's registries (`@tool`, `@agent_loop`, `@fn`, `@check`, external agents) are
instances of the one `loopwright.registry.Registry`, re-exported here."""

from __future__ import annotations

from loopwright.registry import Registry

__all__ = ["Registry"]
