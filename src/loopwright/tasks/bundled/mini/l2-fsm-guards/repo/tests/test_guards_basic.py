from fsm import StateMachine


def test_guarded_transition_uses_context():
    machine = StateMachine("cart")
    machine.add_transition("pay", "cart", "paid", guard=lambda ctx: ctx.get("amount", 0) > 0)
    assert machine.can_fire("pay", amount=10)
    assert machine.fire("pay", amount=10) == "paid"
