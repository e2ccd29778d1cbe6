import pytest

from fsm import DuplicateTransition, InvalidTransition, StateMachine, Transition


def door() -> StateMachine:
    machine = StateMachine("closed")
    machine.add_transition("open", "closed", "opened")
    machine.add_transition("close", "opened", "closed")
    machine.add_transition("break", "*", "broken")
    return machine


def test_fire_moves_and_records_history():
    machine = door()
    assert machine.fire("open") == "opened"
    assert machine.fire("close") == "closed"
    assert machine.state == "closed"
    assert machine.history == [("open", "closed", "opened"), ("close", "opened", "closed")]


def test_invalid_event_keeps_state():
    machine = door()
    with pytest.raises(InvalidTransition):
        machine.fire("close")
    assert machine.state == "closed"
    assert machine.history == []


def test_wildcard_and_precedence():
    machine = door()
    machine.add_transition("open", "*", "weird")
    assert machine.fire("open") == "opened"  # the exact source wins over the wildcard
    assert machine.fire("break") == "broken"
    assert machine.fire("open") == "weird"


def test_duplicates_and_available_events():
    machine = door()
    with pytest.raises(DuplicateTransition):
        machine.add_transition("open", "closed", "elsewhere")
    assert machine.available_events() == ["break", "open"]


def test_constructor_takes_transitions():
    machine = StateMachine("a", [Transition("go", "a", "b"), Transition("go", "b", "a")])
    assert [machine.fire("go"), machine.fire("go")] == ["b", "a"]
