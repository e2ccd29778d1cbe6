"""Exceptions raised by fsm."""


class MachineError(Exception):
    """Base class for every fsm error."""


class InvalidTransition(MachineError):
    """No transition handles the event from the current state."""


class DuplicateTransition(MachineError):
    """A transition for the same event and source state already exists."""
