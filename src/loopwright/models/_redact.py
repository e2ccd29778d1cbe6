"""Redaction: remove API keys and tokens from text before it reaches an error, event or ledger.

Two passes, both on every call:
1. the values of environment variables whose names end in `_API_KEY`, `_TOKEN`, `_SECRET` or
   `_KEY` (values of 8 characters or more, so that `FOO_KEY=1` cannot blank every "1");
2. key-shaped strings: `sk-...` (OpenAI, Anthropic `sk-ant-...`, OpenRouter `sk-or-...`),
   `Bearer <token>` and `x-api-key: <token>` headers, Google `AIza...` keys.

Deterministic for a given text and environment. Never raises.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

__all__ = ["REDACTED", "redact", "secret_env_names", "secret_values"]

REDACTED = "[REDACTED]"

_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_KEY")
_MIN_SECRET_CHARS = 8
_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-.=]{8,}"),
    re.compile(r"(?i)(x-api-key['\"]?\s*[:=]\s*['\"]?)[A-Za-z0-9_\-.=]{8,}"),
)


def secret_env_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """Sorted names of the environment variables treated as secrets (never their values)."""
    env = os.environ if environ is None else environ
    return sorted(n for n in env if n.upper().endswith(_SECRET_SUFFIXES))


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of secret-named environment variables long enough to redact safely,
    longest first (so that a key containing another key is removed whole)."""
    env = os.environ if environ is None else environ
    values = {env[n].strip() for n in secret_env_names(env)}
    return sorted((v for v in values if len(v) >= _MIN_SECRET_CHARS), key=len, reverse=True)


def redact(
    text: str, *, extra: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> str:
    """`text` with every known secret replaced by REDACTED: the values of secret-named
    environment variables, the strings in `extra` (e.g. an api_key passed explicitly), and
    key-shaped patterns."""
    for value in (*sorted((e for e in extra if e), key=len, reverse=True), *secret_values(environ)):
        text = text.replace(value, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(_keep_prefix, text)
    return text


def _keep_prefix(match: re.Match[str]) -> str:
    prefix = match.group(1) if match.re.groups else ""
    return f"{prefix}{REDACTED}"
