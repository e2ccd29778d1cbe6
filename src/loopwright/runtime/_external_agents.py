"""The four external agents loopwright ships adapters for, registered on import as the loops
`external:claude-code`, `external:codex`, `external:mini-swe-agent` and `external:openhands`."""

from __future__ import annotations

from loopwright.runtime._external import external_agent
from loopwright.runtime._external_claude import ClaudeCode
from loopwright.runtime._external_codex import Codex
from loopwright.runtime._external_mini import MiniSweAgent
from loopwright.runtime._external_openhands import OpenHands

__all__ = ["CLAUDE_CODE", "CODEX", "MINI_SWE_AGENT", "OPENHANDS"]

CLAUDE_CODE = external_agent(ClaudeCode())
CODEX = external_agent(Codex())
MINI_SWE_AGENT = external_agent(MiniSweAgent())
OPENHANDS = external_agent(OpenHands())
