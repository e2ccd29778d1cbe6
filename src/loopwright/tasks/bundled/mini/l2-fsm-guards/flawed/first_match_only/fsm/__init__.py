"""fsm: a small finite-state machine."""

from fsm.errors import DuplicateTransition, GuardRejected, InvalidTransition, MachineError
from fsm.machine import StateMachine
from fsm.transition import WILDCARD, Guard, Transition

__all__ = [
    "WILDCARD",
    "DuplicateTransition",
    "Guard",
    "GuardRejected",
    "InvalidTransition",
    "MachineError",
    "StateMachine",
    "Transition",
]
