"""The model gateway interface and the offline models (ScriptedModel, sim), prices and specs."""

from __future__ import annotations

from loopwright.models._errors import ModelError, ScriptExhaustedError
from loopwright.models._pricing import DEFAULT_PRICES, Price, PriceTable, cost_usd
from loopwright.models._registry import MODEL_SPECS, ModelFactory, model_factory
from loopwright.models._script_file import ScriptFile, load_script_file
from loopwright.models._scripted import Reply, ScriptedModel, ScriptFn
from loopwright.models._sim import SIM_MODEL_NAME, SimDecision, SimModel
from loopwright.models._sim_policy import GUIDANCE_KEYWORDS, SimParams
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
from loopwright.models._usage import count_tokens, response_usage

__all__ = [
    "DEFAULT_PRICES",
    "GUIDANCE_KEYWORDS",
    "MODEL_SPECS",
    "SIM_MODEL_NAME",
    "ChatModel",
    "JsonValue",
    "Message",
    "ModelError",
    "ModelFactory",
    "ModelResponse",
    "Price",
    "PriceTable",
    "Reply",
    "ScriptExhaustedError",
    "ScriptFile",
    "ScriptFn",
    "ScriptedModel",
    "SimDecision",
    "SimModel",
    "SimParams",
    "ToolCall",
    "ToolCallError",
    "ToolSpec",
    "Usage",
    "cost_usd",
    "count_tokens",
    "load_script_file",
    "model_factory",
    "response_usage",
]
