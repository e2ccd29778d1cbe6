"""Physical quantities with units."""

from units.quantities import Quantity, convert, parse_quantity

__all__ = ["Quantity", "convert", "parse_quantity"]
