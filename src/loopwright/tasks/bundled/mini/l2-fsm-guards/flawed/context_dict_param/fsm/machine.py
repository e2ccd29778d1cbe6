"""The state machine: current state, transitions, history."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fsm.errors import DuplicateTransition, GuardRejected, InvalidTransition
from fsm.transition import WILDCARD, Guard, Transition


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

    def add_transition(
        self, event: str, source: str, dest: str, *, guard: Guard | None = None
    ) -> Transition:
        """Add and return a transition.

        DuplicateTransition if an unguarded transition for (event, source) already exists: it
        would always win, so the new one could never be taken.
        """
        return self._add(Transition(event, source, dest, guard))

    def _add(self, transition: Transition) -> Transition:
        for existing in self._transitions:
            same = (existing.event, existing.source) == (transition.event, transition.source)
            if same and existing.guard is None:
                raise DuplicateTransition(
                    f"{transition.event!r} from {transition.source!r} is already defined"
                )
        self._transitions.append(transition)
        return transition

    def _candidates(self, event: str) -> list[Transition]:
        """Transitions handling `event` now: those from the current state, then wildcards."""
        matching = [t for t in self._transitions if t.matches(self._state, event)]
        return sorted(matching, key=lambda t: t.source == WILDCARD)

    def _select(self, event: str, context: Mapping[str, Any]) -> Transition:
        """The first candidate whose guard allows `context`; the error `fire` would raise."""
        candidates = self._candidates(event)
        if not candidates:
            raise InvalidTransition(f"no transition for {event!r} from {self._state!r}")
        for transition in candidates:
            if transition.allows(context):
                return transition
        raise GuardRejected(event, self._state)

    def fire(self, event: str, context: Mapping[str, Any] | None = None) -> str:
        """Take the first allowed transition for `event` and return the new state.

        `context` is the mapping handed to guards. InvalidTransition when no
        transition handles the event here; GuardRejected when some do but every guard refuses.
        """
        transition = self._select(event, context or {})
        self.history.append((event, self._state, transition.dest))
        self._state = transition.dest
        return self._state

    def can_fire(self, event: str, context: Mapping[str, Any] | None = None) -> bool:
        """Whether `fire(event, context)` would succeed now (it changes nothing)."""
        try:
            self._select(event, context or {})
        except (InvalidTransition, GuardRejected):
            return False
        return True

    def available_events(self, context: Mapping[str, Any] | None = None) -> list[str]:
        """The events that can be fired from the current state with `context`, sorted."""
        events = {t.event for t in self._transitions if t.matches(self._state, t.event)}
        return sorted(e for e in events if self.can_fire(e, context))
