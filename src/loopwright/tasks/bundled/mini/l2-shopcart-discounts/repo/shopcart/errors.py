"""Exceptions raised by shopcart."""


class CartError(Exception):
    """Base class for every shopcart error."""
