"""Reflection on the exhaust: a generation's CycleRecords digested into facts, read by a meta
model (or by offline rules with `sim`; or read run by run with tools by the reflector agent,
`AgentReflector`) into a validated ReflectionReport whose suggestions guide
the next generation's mutations. See docs/reflection.md.

This package does not import `loopwright.search` (search imports it): the search side hands in
`Candidate`s and the `Vocabulary` of its operators and roles.
"""

from __future__ import annotations

from loopwright.reflection._agent import DEFAULT_AGENT_TURNS, AgentReflector
from loopwright.reflection._cap import digest_chars, fit_digest
from loopwright.reflection._digest import (
    DIGEST_SCHEMA_VERSION,
    Candidate,
    CandidateDigest,
    Contrast,
    ErrorGroup,
    ExhaustDigest,
    FeedbackRow,
    NodeDigest,
    ReloopDigest,
    TaskDigest,
    TaskOutcome,
    TestRow,
    build_digest,
)
from loopwright.reflection._exhaust import EXHAUST_TOOLS, ExhaustTools, RunRef
from loopwright.reflection._features import (
    note_takers,
    structure_line,
    workflow_features,
    writers,
)
from loopwright.reflection._reflector import (
    DEFAULT_DIGEST_CHARS,
    ModelReflector,
    OfflineReflector,
    Reflector,
    empty_report,
    prompt_template,
    render_prompt,
)
from loopwright.reflection._render import describe_report
from loopwright.reflection._report import (
    REFLECTION_SCHEMA_VERSION,
    Attempt,
    Dropped,
    Evidence,
    MutationSuggestion,
    Pattern,
    PromptImprovement,
    ReflectionBody,
    ReflectionReport,
    ReflectionSource,
    StructuralRecommendation,
    ToolUse,
    load_reflection,
    reflection_path,
    write_reflection,
)
from loopwright.reflection._rules import offline_body
from loopwright.reflection._taxonomy import (
    FAILURE_KINDS,
    KIND_PHRASES,
    lesson_head,
    message_kind,
    normalise_message,
    write_lesson,
)
from loopwright.reflection._validate import (
    ACTION_OPERATORS,
    ReplyError,
    Vocabulary,
    check_body,
    parse_reply,
)

__all__ = [
    "ACTION_OPERATORS",
    "DEFAULT_AGENT_TURNS",
    "DEFAULT_DIGEST_CHARS",
    "DIGEST_SCHEMA_VERSION",
    "EXHAUST_TOOLS",
    "FAILURE_KINDS",
    "KIND_PHRASES",
    "REFLECTION_SCHEMA_VERSION",
    "AgentReflector",
    "Attempt",
    "Candidate",
    "CandidateDigest",
    "Contrast",
    "Dropped",
    "ErrorGroup",
    "Evidence",
    "ExhaustDigest",
    "ExhaustTools",
    "FeedbackRow",
    "ModelReflector",
    "MutationSuggestion",
    "NodeDigest",
    "OfflineReflector",
    "Pattern",
    "PromptImprovement",
    "ReflectionBody",
    "ReflectionReport",
    "ReflectionSource",
    "Reflector",
    "ReloopDigest",
    "ReplyError",
    "RunRef",
    "StructuralRecommendation",
    "TaskDigest",
    "TaskOutcome",
    "TestRow",
    "ToolUse",
    "Vocabulary",
    "build_digest",
    "check_body",
    "describe_report",
    "digest_chars",
    "empty_report",
    "fit_digest",
    "lesson_head",
    "load_reflection",
    "message_kind",
    "normalise_message",
    "note_takers",
    "offline_body",
    "parse_reply",
    "prompt_template",
    "reflection_path",
    "render_prompt",
    "structure_line",
    "workflow_features",
    "write_lesson",
    "write_reflection",
    "writers",
]
