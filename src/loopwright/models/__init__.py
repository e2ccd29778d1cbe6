"""The model gateway interface, the one structured ask (`ask_structured`), the LiteLLM gateway
for real providers, the offline models (ScriptedModel, sim), prices, the cost ledger, tiers and
roles (and the ModelRouter that applies them in a run), redaction and model specs."""

from __future__ import annotations

from loopwright.models._choice import (
    DESIGNER_RULES,
    OFFLINE_RULES,
    ModelChoice,
    is_gateway_spec,
    is_offline_spec,
    meta_chat_model,
    model_choice,
    require_prices,
)
from loopwright.models._errors import ModelError, ScriptExhaustedError
from loopwright.models._gateway import (
    LITELLM_PIP_HINT,
    ROLE_HEADER,
    CompletionFn,
    GatewayError,
    GatewaySettings,
    LiteLLMGateway,
    ProviderLimits,
    import_litellm,
    provider_of,
)
from loopwright.models._ledger import (
    INTERRUPTED,
    LEDGER_FILE,
    META_ROLES,
    CallLabels,
    CostLedger,
    LedgerRecord,
    LedgerTotals,
    current_labels,
    group_totals,
    label_scope,
    read_ledger,
    role_kind,
)
from loopwright.models._pricing import DEFAULT_PRICES, Price, PriceTable, cost_usd
from loopwright.models._redact import redact, secret_env_names
from loopwright.models._registry import MODEL_SPECS, ModelFactory, check_provider, model_factory
from loopwright.models._router import ModelRouter, routed_factory
from loopwright.models._script_file import ScriptFile, load_script_file
from loopwright.models._scripted import Reply, ScriptedModel, ScriptFn
from loopwright.models._sim import SIM_MODEL_NAME, SimDecision, SimModel
from loopwright.models._sim_policy import GUIDANCE_KEYWORDS, SimParams
from loopwright.models._structured import (
    Answer,
    AskAttempt,
    ReplyError,
    ask_structured,
    extract_json,
    parse_structured,
    strip_fence,
)
from loopwright.models._tiers import (
    ROLES,
    TIERS,
    ModelsConfig,
    load_models_config,
    parse_tier_override,
    resolve_model,
)
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
    "DESIGNER_RULES",
    "GUIDANCE_KEYWORDS",
    "INTERRUPTED",
    "LEDGER_FILE",
    "LITELLM_PIP_HINT",
    "META_ROLES",
    "MODEL_SPECS",
    "OFFLINE_RULES",
    "ROLES",
    "ROLE_HEADER",
    "SIM_MODEL_NAME",
    "TIERS",
    "Answer",
    "AskAttempt",
    "CallLabels",
    "ChatModel",
    "CompletionFn",
    "CostLedger",
    "GatewayError",
    "GatewaySettings",
    "JsonValue",
    "LedgerRecord",
    "LedgerTotals",
    "LiteLLMGateway",
    "Message",
    "ModelChoice",
    "ModelError",
    "ModelFactory",
    "ModelResponse",
    "ModelRouter",
    "ModelsConfig",
    "Price",
    "PriceTable",
    "ProviderLimits",
    "Reply",
    "ReplyError",
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
    "ask_structured",
    "check_provider",
    "cost_usd",
    "count_tokens",
    "current_labels",
    "extract_json",
    "group_totals",
    "import_litellm",
    "is_gateway_spec",
    "is_offline_spec",
    "label_scope",
    "load_models_config",
    "load_script_file",
    "meta_chat_model",
    "model_choice",
    "model_factory",
    "parse_structured",
    "parse_tier_override",
    "provider_of",
    "read_ledger",
    "redact",
    "require_prices",
    "resolve_model",
    "response_usage",
    "role_kind",
    "routed_factory",
    "secret_env_names",
    "strip_fence",
]
