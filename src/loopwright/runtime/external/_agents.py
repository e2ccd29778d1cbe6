"""The four external agents loopwright ships adapters for, registered on import as the loops
`external:claude-code`, `external:codex`, `external:mini-swe-agent` and `external:openhands`."""

from __future__ import annotations

from loopwright.runtime.external._claude import ClaudeCode
from loopwright.runtime.external._codex import Codex
from loopwright.runtime.external._loop import external_agent
from loopwright.runtime.external._mini import MiniSweAgent
from loopwright.runtime.external._openhands import OpenHands

__all__ = ["CLAUDE_CODE", "CODEX", "MINI_SWE_AGENT", "OPENHANDS"]

CLAUDE_CODE = external_agent(ClaudeCode())
CODEX = external_agent(Codex())
MINI_SWE_AGENT = external_agent(MiniSweAgent())
OPENHANDS = external_agent(OpenHands())
