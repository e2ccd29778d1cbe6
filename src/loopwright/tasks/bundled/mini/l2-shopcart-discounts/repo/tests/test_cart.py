from decimal import Decimal

import pytest

from shopcart import Cart, CartError, Item, render_receipt, subtotal, tax, total


def make_cart() -> Cart:
    cart = Cart()
    cart.add(Item("W-1", "Widget", Decimal("4.50"), quantity=2))
    cart.add(Item("G-7", "Gadget", Decimal("12.25")))
    return cart


def test_add_merges_same_sku():
    cart = make_cart()
    cart.add(Item("W-1", "Widget", Decimal("4.50")))
    assert len(cart) == 2
    assert cart.items[0].quantity == 3


def test_remove_unknown_sku_raises():
    with pytest.raises(CartError):
        make_cart().remove("nope")


def test_pricing_without_discount():
    cart = make_cart()
    assert subtotal(cart) == Decimal("21.25")
    assert tax(cart) == Decimal("4.25")
    assert total(cart) == Decimal("25.50")
    assert total(cart, rate=Decimal("0")) == Decimal("21.25")


def test_receipt_without_discount():
    assert render_receipt(make_cart()) == (
        "2 x Widget: $9.00\n"
        "1 x Gadget: $12.25\n"
        "Subtotal: $21.25\n"
        "Tax: $4.25\n"
        "Total: $25.50\n"
    )


def test_empty_cart_receipt():
    assert render_receipt(Cart()) == "(empty cart)\n"
