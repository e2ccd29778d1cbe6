"""Exceptions raised by shopcart."""


class CartError(Exception):
    """Base class for every shopcart error."""


class InvalidDiscountError(CartError):
    """A discount definition that can never be applied (bad code, percent or amount)."""
