"""Errors raised by models."""

from __future__ import annotations

from loopwright.errors import LoopwrightError

__all__ = ["ModelError", "ScriptExhaustedError"]


class ModelError(LoopwrightError):
    """A model call failed (provider error, a script that does not cover the call...).
    The runtime records it as the agent's error; it never kills a generation."""


class ScriptExhaustedError(ModelError):
    """A ScriptedModel was called in a way its script does not cover."""
