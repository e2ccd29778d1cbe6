"""Quantities: parse, convert, format."""

from dataclasses import dataclass

from units.table import UNITS  # noqa: F401  (used by the finished module)


@dataclass(frozen=True)
class Quantity:
    """An amount of some unit from units.table.UNITS."""

    value: float
    unit: str

    def __str__(self) -> str:
        raise NotImplementedError


def parse_quantity(text: str) -> Quantity:
    """Read a quantity such as '3.5 km'."""
    raise NotImplementedError


def convert(quantity: Quantity, unit: str) -> Quantity:
    """The same amount expressed in another unit of the same dimension."""
    raise NotImplementedError
