"""Subtotal, tax and total of a cart. Every amount is rounded to cents, half up."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from shopcart.models import Cart

DEFAULT_TAX_RATE = Decimal("0.20")
CENT = Decimal("0.01")


def to_cents(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def subtotal(cart: Cart) -> Decimal:
    """The sum of the line totals."""
    return to_cents(sum((item.line_total for item in cart.items), Decimal("0")))


def tax(cart: Cart, rate: Decimal = DEFAULT_TAX_RATE) -> Decimal:
    """Tax on the subtotal at `rate` (0.20 means 20%)."""
    return to_cents(subtotal(cart) * rate)


def total(cart: Cart, rate: Decimal = DEFAULT_TAX_RATE) -> Decimal:
    """What the customer pays: subtotal plus tax."""
    return subtotal(cart) + tax(cart, rate)
