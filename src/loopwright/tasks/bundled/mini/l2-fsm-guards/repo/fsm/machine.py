"""The state machine: current state, transitions, history."""

from __future__ import annotations

from collections.abc import Iterable

from fsm.errors import DuplicateTransition, InvalidTransition
from fsm.transition import WILDCARD, Transition


class StateMachine:
    """Holds the current state and moves it when events are fired."""

    def __init__(self, initial: str, transitions: Iterable[Transition] = ()) -> None:
        if not initial or initial == WILDCARD:
            raise ValueError(f"bad initial state {initial!r}")
        self._state = initial
        self._transitions: list[Transition] = []
        self.history: list[tuple[str, str, str]] = []  # (event, source, dest) per fired event
        for transition in transitions:
            self._add(transition)

    @property
    def state(self) -> str:
        return self._state

    def add_transition(self, event: str, source: str, dest: str) -> Transition:
        """Add and return a transition; DuplicateTransition if (event, source) is taken."""
        return self._add(Transition(event, source, dest))

    def _add(self, transition: Transition) -> Transition:
        for existing in self._transitions:
            if (existing.event, existing.source) == (transition.event, transition.source):
                raise DuplicateTransition(
                    f"{transition.event!r} from {transition.source!r} is already defined"
                )
        self._transitions.append(transition)
        return transition

    def _candidates(self, event: str) -> list[Transition]:
        """Transitions handling `event` now: those from the current state, then wildcards."""
        matching = [t for t in self._transitions if t.matches(self._state, event)]
        return sorted(matching, key=lambda t: t.source == WILDCARD)

    def fire(self, event: str) -> str:
        """Take the transition for `event` and return the new state."""
        candidates = self._candidates(event)
        if not candidates:
            raise InvalidTransition(f"no transition for {event!r} from {self._state!r}")
        transition = candidates[0]
        self.history.append((event, self._state, transition.dest))
        self._state = transition.dest
        return self._state

    def available_events(self) -> list[str]:
        """The events that can be fired from the current state, sorted."""
        return sorted({t.event for t in self._transitions if t.matches(self._state, t.event)})
