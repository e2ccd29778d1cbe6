"""Subtotal, discount, tax and total of a cart. Every amount is rounded to cents, half up."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from shopcart.models import Cart

DEFAULT_TAX_RATE = Decimal("0.20")
CENT = Decimal("0.01")
ZERO = Decimal("0.00")


def to_cents(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def subtotal(cart: Cart) -> Decimal:
    """The sum of the line totals."""
    return to_cents(sum((item.line_total for item in cart.items), Decimal("0")))


def discount_amount(cart: Cart) -> Decimal:
    """How much the cart's discount takes off the subtotal (0.00 when none applies).

    """
    discount = cart.discount
    if discount is None:
        return ZERO
    if discount.percent is not None:
        return to_cents(subtotal(cart) * discount.percent / 100)
    return to_cents(discount.amount_off)


def discounted_subtotal(cart: Cart) -> Decimal:
    """The subtotal after the discount: what tax is charged on."""
    return subtotal(cart) - discount_amount(cart)


def tax(cart: Cart, rate: Decimal = DEFAULT_TAX_RATE) -> Decimal:
    """Tax on the discounted subtotal at `rate` (0.20 means 20%)."""
    return to_cents(discounted_subtotal(cart) * rate)


def total(cart: Cart, rate: Decimal = DEFAULT_TAX_RATE) -> Decimal:
    """What the customer pays: discounted subtotal plus tax."""
    return discounted_subtotal(cart) + tax(cart, rate)
