"""shopcart: line items, a cart, pricing and a plain-text receipt."""

from shopcart.errors import CartError
from shopcart.models import Cart, Item
from shopcart.pricing import DEFAULT_TAX_RATE, subtotal, tax, total
from shopcart.report import money, render_receipt

__all__ = [
    "DEFAULT_TAX_RATE",
    "Cart",
    "CartError",
    "Item",
    "money",
    "render_receipt",
    "subtotal",
    "tax",
    "total",
]
