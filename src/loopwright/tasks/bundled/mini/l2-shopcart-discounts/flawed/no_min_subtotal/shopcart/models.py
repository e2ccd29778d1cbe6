"""Line items, discounts and the cart that holds them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from shopcart.errors import CartError, InvalidDiscountError


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


@dataclass(frozen=True)
class Discount:
    """A discount code: either a percentage of the subtotal or a fixed amount off.

    It only applies when the cart's subtotal is at least `min_subtotal`.
    """

    code: str
    percent: Decimal | None = None
    amount_off: Decimal | None = None
    min_subtotal: Decimal = Decimal("0")

    def __post_init__(self) -> None:
        code = self.code.strip().upper()
        if not code:
            raise InvalidDiscountError("a discount needs a code")
        object.__setattr__(self, "code", code)
        if (self.percent is None) == (self.amount_off is None):
            raise InvalidDiscountError(f"{code}: give exactly one of percent or amount_off")
        if self.percent is not None and not Decimal("0") < self.percent <= Decimal("100"):
            raise InvalidDiscountError(f"{code}: percent must be in (0, 100], got {self.percent}")
        if self.amount_off is not None and self.amount_off <= 0:
            raise InvalidDiscountError(f"{code}: amount_off must be positive, got {self.amount_off}")
        if self.min_subtotal < 0:
            raise InvalidDiscountError(f"{code}: min_subtotal must not be negative")


class Cart:
    """An ordered collection of items, at most one line per SKU, and at most one discount."""

    def __init__(self) -> None:
        self._items: dict[str, Item] = {}
        self._discount: Discount | None = None

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

    @property
    def discount(self) -> Discount | None:
        """The discount applied to this cart, if any."""
        return self._discount

    def apply_discount(self, discount: Discount) -> None:
        """Apply `discount`, replacing any discount applied before."""
        self._discount = discount

    def clear_discount(self) -> None:
        """Remove the discount, if any."""
        self._discount = None

    def is_empty(self) -> bool:
        return not self._items

    def __len__(self) -> int:
        return len(self._items)
