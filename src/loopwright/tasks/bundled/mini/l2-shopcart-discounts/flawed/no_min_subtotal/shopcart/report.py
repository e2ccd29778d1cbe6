"""A plain-text receipt for a cart."""

from __future__ import annotations

from decimal import Decimal

from shopcart import pricing
from shopcart.models import Cart


def money(amount: Decimal) -> str:
    """`Decimal("3.5")` -> `"$3.50"`; negative amounts as `"-$3.50"`."""
    cents = pricing.to_cents(amount)
    sign = "-" if cents < 0 else ""
    return f"{sign}${abs(cents):.2f}"


def render_receipt(cart: Cart, rate: Decimal = pricing.DEFAULT_TAX_RATE) -> str:
    """One line per item, then Subtotal, Discount (when one applies), Tax and Total lines."""
    if cart.is_empty():
        return "(empty cart)\n"
    lines = [f"{item.quantity} x {item.name}: {money(item.line_total)}" for item in cart.items]
    lines.append(f"Subtotal: {money(pricing.subtotal(cart))}")
    off = pricing.discount_amount(cart)
    if off > 0:
        lines.append(f"Discount ({cart.discount.code}): {money(-off)}")
    lines.append(f"Tax: {money(pricing.tax(cart, rate))}")
    lines.append(f"Total: {money(pricing.total(cart, rate))}")
    return "\n".join(lines) + "\n"
