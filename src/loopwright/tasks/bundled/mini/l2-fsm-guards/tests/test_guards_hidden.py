import pytest

from fsm import DuplicateTransition, InvalidTransition, MachineError, StateMachine, Transition
from fsm import errors


def checkout() -> StateMachine:
    machine = StateMachine("cart")
    machine.add_transition("pay", "cart", "paid", guard=lambda ctx: ctx.get("amount", 0) > 0)
    machine.add_transition("ship", "paid", "shipped", guard=lambda ctx: ctx.get("address"))
    machine.add_transition("cancel", "*", "cancelled")
    return machine


def test_transition_allows():
    guarded = Transition("pay", "cart", "paid", guard=lambda ctx: ctx["ok"])
    assert guarded.allows({"ok": True}) is True
    assert guarded.allows({"ok": 0}) is False
    assert Transition("pay", "cart", "paid").allows({}) is True
    assert Transition("pay", "cart", "paid").guard is None


def test_guard_receives_the_context_mapping():
    seen = []
    machine = StateMachine("a")
    machine.add_transition("go", "a", "b", guard=lambda ctx: seen.append(dict(ctx)) or True)
    machine.fire("go", user="ada", n=2)
    assert seen == [{"user": "ada", "n": 2}]


def test_rejection_raises_guard_rejected_and_keeps_state():
    machine = checkout()
    with pytest.raises(errors.GuardRejected) as caught:
        machine.fire("pay", amount=0)
    assert (caught.value.event, caught.value.state) == ("pay", "cart")
    assert str(caught.value) == "guard rejected 'pay' from 'cart'"
    assert machine.state == "cart"
    assert machine.history == []


def test_guard_rejected_is_a_machine_error_but_not_invalid_transition():
    assert issubclass(errors.GuardRejected, MachineError)
    assert not issubclass(errors.GuardRejected, InvalidTransition)


def test_unknown_event_is_still_invalid_transition():
    machine = checkout()
    with pytest.raises(InvalidTransition):
        machine.fire("ship", address="x")
    assert machine.fire("pay", amount=5) == "paid"
    assert machine.fire("ship", address="1 Main St") == "shipped"
    assert machine.history[-1] == ("ship", "paid", "shipped")


def reviewer() -> StateMachine:
    machine = StateMachine("review")
    machine.add_transition("decide", "review", "approved", guard=lambda ctx: ctx["score"] >= 80)
    machine.add_transition("decide", "review", "revise", guard=lambda ctx: ctx["score"] >= 50)
    machine.add_transition("decide", "review", "rejected")
    return machine


def test_first_allowed_transition_wins():
    assert reviewer().can_fire("decide", score=10)
    results = [reviewer().fire("decide", score=score) for score in (90, 60, 10)]
    assert results == ["approved", "revise", "rejected"]


def test_rejected_exact_source_falls_back_to_wildcard():
    machine = StateMachine("draft")
    machine.add_transition("submit", "draft", "queued", guard=lambda ctx: ctx.get("complete"))
    machine.add_transition("submit", "*", "needs_work")
    assert machine.fire("submit", complete=False) == "needs_work"


@pytest.mark.parametrize(
    ("event", "context", "expected"),
    [
        ("pay", {"amount": 3}, True),
        ("pay", {"amount": 0}, False),
        ("pay", {}, False),
        ("cancel", {}, True),
        ("ship", {"address": "x"}, False),
        ("teleport", {}, False),
    ],
    ids=["pay", "pay-zero", "pay-no-amount", "cancel-wildcard", "ship-wrong-state", "unknown-event"],
)
def test_can_fire(event, context, expected):
    machine = checkout()
    assert machine.can_fire(event, **context) is expected
    assert machine.state == "cart"


def test_available_events_respects_guards():
    machine = checkout()
    assert machine.available_events() == ["cancel"]
    assert machine.available_events(amount=1) == ["cancel", "pay"]


def test_duplicates_only_after_an_unguarded_transition():
    machine = StateMachine("a")
    machine.add_transition("go", "a", "b", guard=lambda ctx: ctx.get("fast"))
    machine.add_transition("go", "a", "c", guard=lambda ctx: ctx.get("slow"))
    machine.add_transition("go", "a", "d")
    with pytest.raises(DuplicateTransition):
        machine.add_transition("go", "a", "e", guard=lambda ctx: True)
    with pytest.raises(DuplicateTransition):
        machine.add_transition("go", "a", "e")


def test_guard_exception_propagates_and_changes_nothing():
    def broken(ctx):
        raise RuntimeError("guard blew up")

    machine = StateMachine("a", [Transition("go", "a", "b", guard=broken)])
    with pytest.raises(RuntimeError, match="guard blew up"):
        machine.fire("go")
    assert machine.state == "a"
    assert machine.history == []
