"""Exceptions raised by fsm."""


class MachineError(Exception):
    """Base class for every fsm error."""


class InvalidTransition(MachineError):
    """No transition handles the event from the current state."""


class DuplicateTransition(MachineError):
    """A transition for the same event and source state already exists."""


class GuardRejected(MachineError):
    """Transitions handle the event from the current state, but every guard refused."""

    def __init__(self, event: str, state: str) -> None:
        super().__init__(f"guard rejected {event!r} from {state!r}")
        self.event = event
        self.state = state
