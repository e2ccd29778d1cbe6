"""`ScriptedModel`: a test double that answers from a script (a list, a mapping or a callable).

A script step ("reply") may be written as:
- a `str`: a text-only reply;
- a `ToolCall`, or a tuple of them: a reply made of those tool calls; the tuple may also hold
  one `str`, the reply's text (`("reading the task", ToolCall.make(...))`);
- a `ModelResponse`: returned exactly as given (its usage, latency and model name included).

Usage of a reply that is not a ModelResponse is counted as len(chars) // 4 of every message's
content (input) and of the reply's text and tool-call arguments (output); latency is 0.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from loopwright.models._errors import ScriptExhaustedError
from loopwright.models._types import Message, ModelResponse, ToolCall, ToolSpec
from loopwright.models._usage import response_usage

__all__ = ["Reply", "ScriptFn", "ScriptedModel"]

Reply = str | ToolCall | tuple[str | ToolCall, ...] | ModelResponse
ScriptFn = Callable[[Sequence[Message], Sequence[ToolSpec]], Reply | None]

_EXCERPT = 200


class ScriptedModel:
    """A ChatModel answering from a script; raises ScriptExhaustedError on an uncovered call.

    The script is one of:
    - a sequence of replies, used in order, one per call;
    - a mapping from a substring of the last message's content to a reply: the first key (in
      the mapping's order) contained in the last message answers; keys may answer many times;
    - a callable `(messages, tools) -> reply | None`; None means "not covered".

    `simulated` is True: its outputs are not a real model's. Deterministic. Safe to share
    between threads (calls are numbered under a lock), but a list script is consumed by
    whoever calls first, so give each run its own instance.
    """

    simulated: bool = True

    def __init__(
        self,
        script: Sequence[Reply] | Mapping[str, Reply] | ScriptFn,
        *,
        name: str = "scripted",
        source: str | None = None,
    ) -> None:
        if isinstance(script, str | ToolCall | ModelResponse):
            raise TypeError(
                "ScriptedModel takes a list, mapping or callable of replies, not one reply; "
                "wrap it in a list: ScriptedModel([reply])"
            )
        self.name = name
        self.source = source  # where the script came from (a file path), for error messages
        self._script = script
        self._calls = 0
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load a script from a YAML or JSON file (format: `loopwright.models._script_file`).

        Raises ConfigError naming the file and the problem when it is missing or malformed."""
        from loopwright.models._script_file import load_script_file

        return load_script_file(Path(path)).model()

    @property
    def calls(self) -> int:
        """How many calls this model has answered so far."""
        return self._calls

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        """The scripted reply to this call. Raises ScriptExhaustedError when the script does not
        cover it (the message says which call, the last message, and what the script covers)."""
        with self._lock:
            self._calls += 1
            number = self._calls
        reply = self._lookup(number, messages, tools)
        if reply is None:
            raise ScriptExhaustedError(self._uncovered(number, messages))
        return self._respond(reply, messages)

    def _lookup(
        self, number: int, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> Reply | None:
        script = self._script
        if isinstance(script, Mapping):
            last = messages[-1].content if messages else ""
            return next((reply for key, reply in script.items() if key in last), None)
        if callable(script):
            return script(messages, tools)
        return script[number - 1] if number <= len(script) else None

    def _respond(self, reply: Reply, messages: Sequence[Message]) -> ModelResponse:
        if isinstance(reply, ModelResponse):
            return reply
        text, calls = _split(reply)
        return ModelResponse(
            text=text,
            tool_calls=calls,
            usage=response_usage(messages, text, calls),
            latency_s=0.0,
            model=self.name,
            simulated=self.simulated,
        )

    def _uncovered(self, number: int, messages: Sequence[Message]) -> str:
        if messages:
            last = messages[-1]
            excerpt = last.content[:_EXCERPT] + ("..." if len(last.content) > _EXCERPT else "")
            said = f"the last message ({last.role}) was: {excerpt!r}"
        else:
            said = "no messages were sent"
        origin = f" from {self.source}" if self.source else ""
        return f"call {number} to scripted model {self.name!r}{origin} is not covered: {said}; the script covers {self._covers()}"

    def _covers(self) -> str:
        script = self._script
        if isinstance(script, Mapping):
            keys = ", ".join(repr(k) for k in script) or "nothing"
            return f"last messages containing one of: {keys}"
        if callable(script):
            name = getattr(script, "__name__", type(script).__name__)
            return f"what the callable {name} answers (it returned None)"
        return f"{len(script)} call(s), in order, and all were used"


def _split(reply: str | ToolCall | tuple[str | ToolCall, ...]) -> tuple[str, tuple[ToolCall, ...]]:
    if isinstance(reply, str):
        return reply, ()
    if isinstance(reply, ToolCall):
        return "", (reply,)
    text = "".join(part for part in reply if isinstance(part, str))
    return text, tuple(part for part in reply if isinstance(part, ToolCall))
