"""Reflectors: a generation's (candidate, CycleRecords) pairs in, a validated ReflectionReport out.

`ModelReflector` asks the meta model (through `models.ask_structured`) with the package's prompt
template (`prompts/reflect.md`) holding the capped digest; a reply that fails validation is sent
back with the error (`prompts/retry.md`) up to `max_retries` times, then the report is built
from the digest by the offline rules and recorded as `digest_fallback` with every attempt.
`OfflineReflector` applies the offline rules directly (the `sim` path: there is no meta model
to ask). Both return an `empty` report, without any call, when the generation has no training
records.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Protocol

from loopwright.models import ChatModel, ask_structured
from loopwright.reflection._cap import digest_chars, fit_digest
from loopwright.reflection._digest import Candidate, ExhaustDigest, build_digest
from loopwright.reflection._report import (
    Attempt,
    ReflectionBody,
    ReflectionReport,
    ReflectionSource,
)
from loopwright.reflection._rules import offline_body
from loopwright.reflection._validate import ReplyError, Vocabulary, check_body

__all__ = [
    "DEFAULT_DIGEST_CHARS",
    "ModelReflector",
    "OfflineReflector",
    "Reflector",
    "empty_report",
    "prompt_template",
    "render_prompt",
]

DEFAULT_DIGEST_CHARS = 16_000


class Reflector(Protocol):
    """One verb: reflect on a generation. Never raises for what the model replies."""

    def reflect(self, generation: int, candidates: Sequence[Candidate]) -> ReflectionReport: ...


def prompt_template(name: str = "reflect.md") -> Template:
    """A prompt template shipped in `loopwright/reflection/prompts/` (string.Template, `$name`)."""
    text = resources.files("loopwright.reflection").joinpath("prompts", name).read_text("utf-8")
    return Template(text)


def render_prompt(digest: ExhaustDigest, vocab: Vocabulary) -> str:
    """The reflection prompt for `digest`: the template with the digest as JSON, the operators
    and the roles filled in."""
    return prompt_template().substitute(
        generation=digest.generation,
        digest=json.dumps(digest.model_dump(mode="json"), indent=1),
        operators=", ".join(vocab.operators),
        roles=", ".join(vocab.roles),
    )


def empty_report(generation: int, candidates: Sequence[Candidate]) -> ReflectionReport:
    """The record of a generation with nothing to reflect on (no model call is made)."""
    return ReflectionReport(
        generation=generation,
        source="empty",
        simulated=False,
        candidates=[c.id for c in candidates],
        note=f"generation {generation} has no evaluated training runs "
        f"({len(candidates)} candidates, 0 records): nothing to reflect on, no model call made",
    )


def _report(
    source: ReflectionSource,
    body: ReflectionBody,
    digest: ExhaustDigest,
    candidates: Sequence[Candidate],
    **extra: object,
) -> ReflectionReport:
    return ReflectionReport.model_validate(
        {
            **body.model_dump(),
            "generation": digest.generation,
            "source": source,
            "simulated": digest.simulated,
            "candidates": [c.id for c in candidates],
            "digest_chars": digest_chars(digest),
            "digest_omitted": digest.omitted,
            **extra,
        }
    )


def _malformed(
    body: ReflectionBody, candidates: Sequence[Candidate], vocab: Vocabulary
) -> str | None:
    """Why `body` is malformed for this generation (sent back on retry), or None."""
    try:
        check_body(body, candidates, vocab)
    except ReplyError as exc:
        return str(exc)
    return None


class OfflineReflector:
    """Derives the report from the digest by the documented rules (docs/reflection.md).
    Deterministic: the same records give the same report."""

    def __init__(self, vocab: Vocabulary, *, digest_max_chars: int = DEFAULT_DIGEST_CHARS) -> None:
        self.vocab = vocab
        self.digest_max_chars = digest_max_chars

    def reflect(self, generation: int, candidates: Sequence[Candidate]) -> ReflectionReport:
        if not any(c.records for c in candidates):
            return empty_report(generation, candidates)
        full = build_digest(generation, candidates)
        body, dropped = check_body(offline_body(full, candidates), candidates, self.vocab)
        digest = fit_digest(full, self.digest_max_chars)
        return _report(
            "offline_rules",
            body,
            digest,
            candidates,
            dropped=dropped,
            note="derived from the digest by the offline rules",
        )


class ModelReflector:
    """Asks `model` (the meta model) for the report; retries a malformed reply with the
    validation error up to `max_retries` times, then falls back to the offline rules."""

    def __init__(
        self,
        model: ChatModel,
        vocab: Vocabulary,
        *,
        max_retries: int = 2,
        digest_max_chars: int = DEFAULT_DIGEST_CHARS,
    ) -> None:
        self.model = model
        self.vocab = vocab
        self.max_retries = max_retries
        self.digest_max_chars = digest_max_chars

    def reflect(self, generation: int, candidates: Sequence[Candidate]) -> ReflectionReport:
        if not any(c.records for c in candidates):
            return empty_report(generation, candidates)
        full = build_digest(generation, candidates)
        digest = fit_digest(full, self.digest_max_chars)
        answer = ask_structured(
            self.model,
            render_prompt(digest, self.vocab),
            ReflectionBody,
            self.max_retries,
            check=lambda body: _malformed(body, candidates, self.vocab),
            retry_prompt=lambda error: prompt_template("retry.md").substitute(error=error),
        )
        attempts = [
            Attempt(attempt=a.number, ok=a.ok, error=a.error and a.error[:1000])
            for a in answer.attempts
        ]
        if answer.value is None:
            return _fallback_report(self.model.name, full, digest, candidates, self.vocab, attempts)
        body, dropped = check_body(answer.value, candidates, self.vocab)
        return _report(
            "model", body, digest, candidates,
            model=self.model.name, dropped=dropped, attempts=attempts,
        )  # fmt: skip


def _fallback_report(
    model: str,
    full: ExhaustDigest,
    digest: ExhaustDigest,
    candidates: Sequence[Candidate],
    vocab: Vocabulary,
    attempts: list[Attempt],
    **extra: object,
) -> ReflectionReport:
    """The offline rules' report after the meta model gave no usable reply (`digest_fallback`),
    with its attempts (and `extra` fields, such as the agent's tool calls)."""
    body, dropped = check_body(offline_body(full, candidates), candidates, vocab)
    note = (
        f"the meta model's {len(attempts)} replies all failed validation; this report was "
        "built from the digest alone by the offline rules"
    )
    fields: dict[str, object] = {
        "model": model, "dropped": dropped, "attempts": attempts, "note": note, **extra,
    }  # fmt: skip
    return _report("digest_fallback", body, digest, candidates, **fields)
