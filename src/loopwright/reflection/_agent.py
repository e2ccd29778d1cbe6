"""The reflector agent (`--reflector agent`): the meta model reads the exhaust with tools before
it proposes, instead of answering one prompt holding the capped digest.

`AgentReflector` gives the meta model the generation's candidates and an index of their
training runs (`prompts/agent.md`) and the tools of `ExhaustTools` (list and filter runs, read a
record, a node's transcript, a diff, a test log, grep). It may call tools for at most
`max_turns` turns; a reply without a tool call is its answer, read and validated as the digest
reflector's is (`ReflectionBody`, `check_body`), and in addition every run it cites as evidence
must be one it read. A malformed answer is sent back with the error up to `max_retries` times;
when the turns run out it is told to answer now, with no tool offered. When no usable answer
comes (or a call fails), the report is built by the offline rules from the digest and recorded
as `digest_fallback`. Every call is one `model.chat` call, so the gateway's ledger meters each
one under the caller's label (`meta:reflector`). Deterministic when the model is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean

from loopwright.models import (
    ChatModel,
    Message,
    ModelError,
    ReplyError,
    ToolCall,
    parse_structured,
)
from loopwright.reflection._cap import fit_digest
from loopwright.reflection._digest import Candidate, build_digest
from loopwright.reflection._exhaust import EXHAUST_TOOLS, ExhaustTools
from loopwright.reflection._features import structure_line
from loopwright.reflection._reflector import (
    DEFAULT_DIGEST_CHARS,
    _fallback_report,
    _report,
    empty_report,
    prompt_template,
)
from loopwright.reflection._report import (
    Attempt,
    Evidence,
    ReflectionBody,
    ReflectionReport,
    ToolUse,
)
from loopwright.reflection._validate import Vocabulary, check_body

__all__ = ["DEFAULT_AGENT_TURNS", "AgentReflector"]

DEFAULT_AGENT_TURNS = 12


@dataclass
class _Session:
    """One reflection's conversation, tool calls and answer attempts."""

    messages: list[Message]
    tools: ExhaustTools
    uses: list[ToolUse] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    tool_turns: int = 0


class AgentReflector:
    """Reflects by letting `model` read the exhaust with tools (see the module docstring).
    `max_turns` bounds the turns with tool calls, `max_retries` the malformed answers sent
    back; `tool_chars` cuts each tool's answer. Never raises for what the model does."""

    def __init__(
        self,
        model: ChatModel,
        vocab: Vocabulary,
        *,
        max_turns: int = DEFAULT_AGENT_TURNS,
        max_retries: int = 2,
        tool_chars: int = 6_000,
        digest_max_chars: int = DEFAULT_DIGEST_CHARS,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be 1 or more, got {max_turns}")
        self.model = model
        self.vocab = vocab
        self.max_turns = max_turns
        self.max_retries = max_retries
        self.tool_chars = tool_chars
        self.digest_max_chars = digest_max_chars

    def reflect(self, generation: int, candidates: Sequence[Candidate]) -> ReflectionReport:
        if not any(c.records for c in candidates):
            return empty_report(generation, candidates)
        tools = ExhaustTools(candidates, max_chars=self.tool_chars)
        prompt = self._prompt(generation, candidates, tools)
        session = _Session([Message(role="user", content=prompt)], tools)
        body = self._converse(session, candidates)
        full = build_digest(generation, candidates)
        digest = fit_digest(full, self.digest_max_chars)
        if body is None:
            return _fallback_report(
                self.model.name, full, digest, candidates, self.vocab, session.attempts,
                tool_calls=session.uses,
                note=f"the reflector agent gave no usable answer ({len(session.attempts)} "
                f"answers, {len(session.uses)} tool calls); this report was built from the "
                "digest alone by the offline rules",
            )  # fmt: skip
        body, dropped = check_body(body, candidates, self.vocab)
        return _report(
            "agent", body, digest, candidates, model=self.model.name, dropped=dropped,
            attempts=session.attempts, tool_calls=session.uses,
            note=f"the reflector agent read {len(tools.read)} of {len(tools.runs)} runs with "
            f"{len(session.uses)} tool calls",
        )  # fmt: skip

    def _prompt(self, generation: int, candidates: Sequence[Candidate], tools: ExhaustTools) -> str:
        lines = []
        for c in candidates:
            scores = [r.score_end for r in c.records]
            mean = f"{fmean(scores):.2f} over {len(scores)} runs" if scores else "not evaluated"
            made = c.operator + (f" of {', '.join(c.parents)}" if c.parents else "")
            lines.append(f"- {c.id} ({made}; mean score {mean}): {structure_line(c.workflow)}")
        return prompt_template("agent.md").substitute(
            generation=generation,
            candidates="\n".join(lines),
            runs=tools.index(),
            max_turns=self.max_turns,
            operators=", ".join(self.vocab.operators),
            roles=", ".join(self.vocab.roles),
        )

    def _converse(
        self, session: _Session, candidates: Sequence[Candidate]
    ) -> ReflectionBody | None:
        """Turns until a valid answer (returned) or the budget is spent (None)."""
        while len(session.attempts) <= self.max_retries:
            offered = EXHAUST_TOOLS if session.tool_turns < self.max_turns else ()
            try:
                response = self.model.chat(session.messages, offered)
            except ModelError as exc:
                session.attempts.append(_attempt(session, f"the call failed: {exc}"))
                return None
            session.messages.append(
                Message(role="assistant", content=response.text, tool_calls=response.tool_calls)
            )
            if response.tool_calls and offered:
                self._run_tools(session, response.tool_calls)
                continue
            problem, body = self._read(response.text, session, candidates)
            session.attempts.append(_attempt(session, problem))
            if body is not None:
                return body
            session.messages.append(Message(role="user", content=self._retry(problem, session)))
        return None

    def _run_tools(self, session: _Session, calls: Sequence[ToolCall]) -> None:
        session.tool_turns += 1
        for call in calls:
            ok, answer = session.tools.call(call)
            session.uses.append(
                ToolUse(
                    turn=session.tool_turns, tool=call.name[:60],
                    arguments=call.arguments_json[:300], ok=ok, chars=len(answer),
                )
            )  # fmt: skip
            session.messages.append(
                Message(role="tool", content=answer, tool_call_id=call.id, name=call.name)
            )
        if session.tool_turns >= self.max_turns:
            text = prompt_template("agent_final.md").substitute(max_turns=self.max_turns)
            session.messages.append(Message(role="user", content=text))

    def _read(
        self, text: str, session: _Session, candidates: Sequence[Candidate]
    ) -> tuple[str | None, ReflectionBody | None]:
        """(problem, None) for an unusable answer, (None, body) for a valid one."""
        try:
            body = parse_structured(text, ReflectionBody)
            check_body(body, candidates, self.vocab)
        except ReplyError as exc:
            return str(exc), None
        unread = sorted(_cited_runs(body) - session.tools.read)
        if unread:
            known = set(session.tools.runs)
            bad = [r for r in unread if r not in known]
            why = (
                f"evidence cites runs that do not exist: {', '.join(bad[:5])}"
                if bad
                else f"evidence cites runs you did not read: {', '.join(unread[:5])}; read "
                "them with a tool first, or cite only runs you read"
            )
            return why, None
        return None, body

    def _retry(self, problem: str | None, session: _Session) -> str:
        text = prompt_template("retry.md").substitute(error=problem or "")
        if session.tool_turns < self.max_turns:
            text += "\nYou may still call tools to read the runs you need."
        return text


def _attempt(session: _Session, problem: str | None) -> Attempt:
    error = problem[:1000] if problem else None
    return Attempt(attempt=len(session.attempts) + 1, ok=problem is None, error=error)


def _cited_runs(body: ReflectionBody) -> set[str]:
    evidence: list[Evidence] = [
        item.evidence
        for items in (
            body.failure_patterns,
            body.success_patterns,
            body.mutation_suggestions,
            body.prompt_improvements,
            body.structural_recommendations,
        )
        for item in items
    ]
    return {run for e in evidence for run in e.runs}
