"""Quantities: parse, convert, format."""

import re
from dataclasses import dataclass

from units.table import UNITS

_QUANTITY = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*")


@dataclass(frozen=True)
class Quantity:
    """An amount of some unit from units.table.UNITS."""

    value: float
    unit: str

    def __str__(self) -> str:
        text = f"{self.value:.6f}".rstrip("0").rstrip(".")
        if text in ("-0", ""):
            text = "0"
        return f"{text} {self.unit}"


def parse_quantity(text: str) -> Quantity:
    """Read a quantity such as '3.5 km'."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    value, unit = match.groups()
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}")
    return Quantity(float(value), unit)


def convert(quantity: Quantity, unit: str) -> Quantity:
    """The same amount expressed in another unit of the same dimension."""
    if unit not in UNITS or quantity.unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}")
    _, source_size = UNITS[quantity.unit]
    _, target_size = UNITS[unit]
    return Quantity(quantity.value * source_size / target_size, unit)
