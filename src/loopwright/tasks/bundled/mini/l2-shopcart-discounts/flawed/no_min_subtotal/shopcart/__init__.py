"""shopcart: line items, a cart, pricing and a plain-text receipt."""

from shopcart.errors import CartError, InvalidDiscountError
from shopcart.models import Cart, Discount, Item
from shopcart.pricing import DEFAULT_TAX_RATE, discount_amount, subtotal, tax, total
from shopcart.report import money, render_receipt

__all__ = [
    "DEFAULT_TAX_RATE",
    "Cart",
    "CartError",
    "Discount",
    "InvalidDiscountError",
    "Item",
    "discount_amount",
    "money",
    "render_receipt",
    "subtotal",
    "tax",
    "total",
]
