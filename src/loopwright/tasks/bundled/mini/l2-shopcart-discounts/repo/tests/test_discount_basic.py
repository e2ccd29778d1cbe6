from decimal import Decimal

from shopcart import Cart, Item, pricing


def test_percent_discount_lowers_total():
    from shopcart.models import Discount

    cart = Cart()
    cart.add(Item("W-1", "Widget", Decimal("10.00"), quantity=2))
    cart.apply_discount(Discount("SAVE10", percent=Decimal("10")))
    assert pricing.discount_amount(cart) == Decimal("2.00")
    assert pricing.total(cart) == Decimal("21.60")
