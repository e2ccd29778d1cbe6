"""One edge of the machine: an event that moves from a source state to a destination."""

from __future__ import annotations

from dataclasses import dataclass

WILDCARD = "*"


@dataclass(frozen=True)
class Transition:
    """`event` moves the machine from `source` (or any state, when WILDCARD) to `dest`."""

    event: str
    source: str
    dest: str

    def __post_init__(self) -> None:
        for field in ("event", "source", "dest"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{field} must be a non-empty string, got {value!r}")
        if self.dest == WILDCARD:
            raise ValueError("a transition cannot lead to the wildcard state")

    def matches(self, state: str, event: str) -> bool:
        """True when this transition handles `event` fired in `state`."""
        return self.event == event and self.source in (WILDCARD, state)
