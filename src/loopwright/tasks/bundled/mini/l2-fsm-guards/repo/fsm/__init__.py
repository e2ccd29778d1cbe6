"""fsm: a small finite-state machine."""

from fsm.errors import DuplicateTransition, InvalidTransition, MachineError
from fsm.machine import StateMachine
from fsm.transition import WILDCARD, Transition

__all__ = [
    "WILDCARD",
    "DuplicateTransition",
    "InvalidTransition",
    "MachineError",
    "StateMachine",
    "Transition",
]
