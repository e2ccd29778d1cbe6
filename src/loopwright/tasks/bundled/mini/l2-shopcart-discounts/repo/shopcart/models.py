"""Line items and the cart that holds them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from shopcart.errors import CartError


@dataclass(frozen=True)
class Item:
    """One line of a cart: a product (by SKU) and how many of it."""

    sku: str
    name: str
    unit_price: Decimal
    quantity: int = 1

    def __post_init__(self) -> None:
        if not self.sku:
            raise CartError("an item needs a SKU")
        if self.unit_price < 0:
            raise CartError(f"negative price for {self.sku}: {self.unit_price}")
        if self.quantity < 1:
            raise CartError(f"quantity must be at least 1 for {self.sku}, got {self.quantity}")

    @property
    def line_total(self) -> Decimal:
        return self.unit_price * self.quantity


class Cart:
    """An ordered collection of items, at most one line per SKU."""

    def __init__(self) -> None:
        self._items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        """Add an item; adding a SKU already in the cart increases its quantity."""
        existing = self._items.get(item.sku)
        if existing is not None:
            item = replace(existing, quantity=existing.quantity + item.quantity)
        self._items[item.sku] = item

    def remove(self, sku: str) -> None:
        """Remove the line for `sku`; CartError if it is not in the cart."""
        try:
            del self._items[sku]
        except KeyError:
            raise CartError(f"no item with SKU {sku!r} in the cart") from None

    @property
    def items(self) -> list[Item]:
        """The lines, in the order their SKUs were first added."""
        return list(self._items.values())

    def is_empty(self) -> bool:
        return not self._items

    def __len__(self) -> int:
        return len(self._items)
