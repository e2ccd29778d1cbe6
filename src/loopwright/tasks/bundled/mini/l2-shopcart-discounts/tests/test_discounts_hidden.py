from decimal import Decimal

import pytest

from shopcart import Cart, CartError, Item, pricing, render_receipt
from shopcart import errors, models

D = Decimal


def cart_of(*lines: tuple[str, str, int]) -> Cart:
    cart = Cart()
    for sku, price, qty in lines:
        cart.add(Item(sku, sku.title(), D(price), quantity=qty))
    return cart


@pytest.mark.parametrize(
    ("lines", "kwargs", "expected"),
    [
        ([("a", "10.00", 2)], {"percent": D("10")}, D("2.00")),
        ([("a", "10.00", 2), ("b", "5.00", 1)], {"amount_off": D("5")}, D("5.00")),
        ([("a", "3.00", 1)], {"amount_off": D("5")}, D("3.00")),
        ([("a", "10.00", 4)], {"percent": D("50"), "min_subtotal": D("50")}, D("0.00")),
        ([("a", "10.00", 5)], {"percent": D("50"), "min_subtotal": D("50")}, D("25.00")),
        ([("a", "3.33", 3)], {"percent": D("15")}, D("1.50")),
    ],
    ids=[
        "two items [10% off]",
        "fixed [5 off]",
        "fixed larger than subtotal [capped]",
        "below minimum [no discount]",
        "at minimum [applies]",
        "rounding [half up]",
    ],
)
def test_discount_amount(lines, kwargs, expected):
    cart = cart_of(*lines)
    cart.apply_discount(models.Discount("CODE", **kwargs))
    assert pricing.discount_amount(cart) == expected


def test_no_discount_means_zero():
    cart = cart_of(("a", "10.00", 1))
    assert cart.discount is None
    assert pricing.discount_amount(cart) == D("0.00")


def test_tax_is_charged_on_discounted_subtotal():
    cart = cart_of(("a", "40.00", 1), ("b", "10.00", 1))
    cart.apply_discount(models.Discount("TENOFF", amount_off=D("10")))
    assert pricing.subtotal(cart) == D("50.00")
    assert pricing.tax(cart) == D("8.00")
    assert pricing.total(cart) == D("48.00")
    assert pricing.total(cart, rate=D("0.10")) == D("44.00")


def test_apply_discount_replaces_previous_and_clear_removes_it():
    cart = cart_of(("a", "20.00", 1))
    cart.apply_discount(models.Discount("FIRST", percent=D("50")))
    second = models.Discount("SECOND", amount_off=D("1"))
    cart.apply_discount(second)
    assert cart.discount == second
    assert pricing.discount_amount(cart) == D("1.00")
    cart.clear_discount()
    assert cart.discount is None
    assert pricing.total(cart) == D("24.00")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"code": "X", "percent": D("10"), "amount_off": D("1")},
        {"code": "X"},
        {"code": "X", "percent": D("100.5")},
        {"code": "X", "percent": D("0")},
        {"code": "X", "amount_off": D("0")},
        {"code": "   ", "percent": D("10")},
    ],
    ids=[
        "both percent and amount [invalid]",
        "neither [invalid]",
        "percent over 100 [invalid]",
        "zero percent [invalid]",
        "zero amount [invalid]",
        "blank code [invalid]",
    ],
)
def test_invalid_discount_rejected(kwargs):
    with pytest.raises(errors.InvalidDiscountError):
        models.Discount(**kwargs)


def test_invalid_discount_error_is_a_cart_error():
    assert issubclass(errors.InvalidDiscountError, CartError)


def test_code_is_stripped_and_upper_cased():
    assert models.Discount(" save10 ", percent=D("10")).code == "SAVE10"
    assert models.Discount("x", percent=D("100")).percent == D("100")


def test_receipt_shows_discount_line():
    cart = cart_of(("widget", "10.00", 2))
    cart.apply_discount(models.Discount("save10", percent=D("10")))
    assert render_receipt(cart) == (
        "2 x Widget: $20.00\n"
        "Subtotal: $20.00\n"
        "Discount (SAVE10): -$2.00\n"
        "Tax: $3.60\n"
        "Total: $21.60\n"
    )


def test_receipt_omits_discount_below_minimum():
    cart = cart_of(("widget", "10.00", 1))
    cart.apply_discount(models.Discount("BIG", amount_off=D("5"), min_subtotal=D("100")))
    assert "Discount" not in render_receipt(cart)
    assert render_receipt(cart).endswith("Total: $12.00\n")
