"""One edge of the machine: an event that moves from a source state to a destination."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

WILDCARD = "*"

# A guard receives the context passed to StateMachine.fire and says whether the move may happen.
Guard = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Transition:
    """`event` moves the machine from `source` (or any state, when WILDCARD) to `dest`.

    An optional `guard` can veto the move depending on the context the event is fired with.
    """

    event: str
    source: str
    dest: str
    guard: Guard | None = None

    def __post_init__(self) -> None:
        for field in ("event", "source", "dest"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{field} must be a non-empty string, got {value!r}")
        if self.dest == WILDCARD:
            raise ValueError("a transition cannot lead to the wildcard state")

    def matches(self, state: str, event: str) -> bool:
        """True when this transition handles `event` fired in `state` (guards aside)."""
        return self.event == event and self.source in (WILDCARD, state)

    def allows(self, context: Mapping[str, Any]) -> bool:
        """True when there is no guard or the guard accepts `context`."""
        return self.guard is None or bool(self.guard(context))
