"""The model gateway interface and the offline models (ScriptedModel, sim)."""

from __future__ import annotations

from loopwright.models._errors import ModelError, ScriptExhaustedError
from loopwright.models._types import (
    ChatModel,
    JsonValue,
    Message,
    ModelResponse,
    ToolCall,
    ToolCallError,
    ToolSpec,
    Usage,
)

__all__ = [
    "ChatModel",
    "JsonValue",
    "Message",
    "ModelError",
    "ModelResponse",
    "ScriptExhaustedError",
    "ToolCall",
    "ToolCallError",
    "ToolSpec",
    "Usage",
]
