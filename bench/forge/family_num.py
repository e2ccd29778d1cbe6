"""The `numkit` family: small numeric helpers."""

from __future__ import annotations

from ops import Family, Op

OPS = (
    Op(
        name="mean_or_none",
        module="stats",
        sig="def mean_or_none(values: list[float]) -> float | None:",
        does="returns the arithmetic mean of `values`",
        edges="An empty list gives `None`; `None` items are ignored (a list of only `None` gives `None`).",
        hint="Missing values can occur in the input.",
        gold='''
def mean_or_none(values: list[float]) -> float | None:
    """The mean of the non-None values, or None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
''',
        edge_flaw='''
def mean_or_none(values: list[float]) -> float | None:
    """The mean of the non-None values, or None when there are none."""
    return sum(values) / len(values) if values else None
''',
        logic_flaw='''
def mean_or_none(values: list[float]) -> float | None:
    """The mean of the non-None values, or None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / (len(present) + 1) if present else None
''',
        main=(("[1, 2, 3, 4]", "2.5"), ("[10]", "10.0")),
        edge=(("[]", "None"), ("[2, None, 4]", "3.0"), ("[None]", "None")),
    ),
    Op(
        name="median",
        module="stats",
        sig="def median(values: list[float]) -> float:",
        does="returns the median of `values` (the input is not sorted and must not be modified)",
        edges="With an even count it is the mean of the two middle values; an empty list raises `ValueError`.",
        hint="Even-sized and empty inputs need a defined answer.",
        gold='''
def median(values: list[float]) -> float:
    """The median; the mean of the middle two for an even count; ValueError when empty."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2
''',
        edge_flaw='''
def median(values: list[float]) -> float:
    """The median; the mean of the middle two for an even count; ValueError when empty."""
    ordered = sorted(values)
    return float(ordered[len(ordered) // 2])
''',
        logic_flaw='''
def median(values: list[float]) -> float:
    """The median; the mean of the middle two for an even count; ValueError when empty."""
    if not values:
        raise ValueError("median of an empty list")
    mid = len(values) // 2
    if len(values) % 2:
        return float(values[mid])
    return (values[mid - 1] + values[mid]) / 2
''',
        main=(("[3, 1, 2]", "2.0"), ("[9, 1, 5, 7, 3]", "5.0")),
        edge=(("[4, 1, 3, 2]", "2.5"), ("[]", "raises:ValueError"), ("[7]", "7.0")),
    ),
    Op(
        name="round_half_up",
        module="rounding",
        sig="def round_half_up(value: float, digits: int = 0) -> float:",
        does="rounds `value` to `digits` decimals, halves away from zero (not Python's banker's rounding: `round_half_up(2.5)` is `3.0`)",
        edges="Negative halves round away from zero too (`-2.5` -> `-3.0`); `digits` may be negative (`round_half_up(1250, -2)` is `1300.0`). Work in `decimal` so that `1.005` to 2 digits gives `1.01`.",
        hint="Negative numbers and binary floating point both bite here.",
        gold='''
def round_half_up(value: float, digits: int = 0) -> float:
    """`value` rounded to `digits` decimals, halves away from zero."""
    quantum = Decimal(1).scaleb(-digits)
    return float(Decimal(str(value)).quantize(quantum, rounding=ROUND_HALF_UP))
''',
        edge_flaw='''
def round_half_up(value: float, digits: int = 0) -> float:
    """`value` rounded to `digits` decimals, halves away from zero."""
    factor = 10**digits
    return math.floor(value * factor + 0.5) / factor
''',
        logic_flaw='''
def round_half_up(value: float, digits: int = 0) -> float:
    """`value` rounded to `digits` decimals, halves away from zero."""
    return float(round(value, digits))
''',
        imports=("import math", "from decimal import ROUND_HALF_UP, Decimal"),
        main=(("2.5", "3.0"), ("0.125, 2", "0.13"), ("7.24, digits=1", "7.2")),
        edge=(("-2.5", "-3.0"), ("1.005, 2", "1.01"), ("1250, -2", "1300.0")),
        kwarg="digits",
        kwarg_alt="places",
    ),
    Op(
        name="round_to_step",
        module="rounding",
        sig="def round_to_step(value: float, step: float) -> float:",
        does="rounds `value` to the nearest multiple of `step` (`round_to_step(7, 5)` is `5.0`, `round_to_step(8, 5)` is `10.0`)",
        edges="A value exactly half-way goes up (`round_to_step(7.5, 5)` is `10.0`); `step` must be positive (`ValueError` otherwise).",
        hint="Half-way values and a non-positive step need care.",
        gold='''
def round_to_step(value: float, step: float) -> float:
    """`value` rounded to the nearest multiple of `step`; halves up."""
    if step <= 0:
        raise ValueError("step must be positive")
    return float(math.floor(value / step + 0.5) * step)
''',
        edge_flaw='''
def round_to_step(value: float, step: float) -> float:
    """`value` rounded to the nearest multiple of `step`; halves up."""
    return float(round(value / step) * step)
''',
        logic_flaw='''
def round_to_step(value: float, step: float) -> float:
    """`value` rounded to the nearest multiple of `step`; halves up."""
    if step <= 0:
        raise ValueError("step must be positive")
    return float(math.floor(value / step) * step)
''',
        imports=("import math",),
        main=(("7, 5", "5.0"), ("8, 5", "10.0"), ("0.26, 0.25", "0.25")),
        edge=(
            ("7.5, 5", "10.0"),
            ("12.5, 5", "15.0"),
            ("3, 0", "raises:ValueError"),
            ("3, -1", "raises:ValueError"),
        ),
    ),
    Op(
        name="clamp",
        module="ranges",
        sig="def clamp(value: float, low: float, high: float) -> float:",
        does="limits `value` to the closed range `[low, high]`",
        edges="The bounds themselves are inside the range; `low > high` raises `ValueError`.",
        hint="Inverted bounds are a caller error.",
        gold='''
def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to [low, high]; ValueError when low > high."""
    if low > high:
        raise ValueError(f"low {low} is above high {high}")
    return max(low, min(value, high))
''',
        edge_flaw='''
def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to [low, high]; ValueError when low > high."""
    return max(low, min(value, high))
''',
        logic_flaw='''
def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to [low, high]; ValueError when low > high."""
    if low > high:
        raise ValueError(f"low {low} is above high {high}")
    return min(low, max(value, high))
''',
        main=(("5, 0, 10", "5"), ("-3, 0, 10", "0"), ("42, 0, 10", "10")),
        edge=(("10, 0, 10", "10"), ("1, 5, 2", "raises:ValueError")),
    ),
    Op(
        name="overlap",
        module="ranges",
        sig="def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:",
        does="returns how many integers the half-open ranges `a = (start, stop)` and `b` have in common (`overlap((0, 10), (5, 20))` is 5)",
        edges="Ranges that only touch (`(0, 5)` and `(5, 9)`) share nothing (0); disjoint ranges give 0, never a negative number; an empty range (`start >= stop`) shares nothing.",
        hint="Ranges that do not meet must not give a negative answer.",
        gold='''
def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """How many integers the half-open ranges a and b share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))
''',
        edge_flaw='''
def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """How many integers the half-open ranges a and b share."""
    return min(a[1], b[1]) - max(a[0], b[0])
''',
        logic_flaw='''
def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """How many integers the half-open ranges a and b share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]) + 1)
''',
        main=(("(0, 10), (5, 20)", "5"), ("(3, 8), (0, 100)", "5")),
        edge=(("(0, 5), (5, 9)", "0"), ("(0, 2), (7, 9)", "0"), ("(5, 5), (0, 10)", "0")),
    ),
    Op(
        name="parse_percent",
        module="convert",
        sig="def parse_percent(text: str) -> float:",
        does="parses a percentage like `'12.5%'` into a fraction (`0.125`)",
        edges="Surrounding spaces are allowed, and so is a space before `%`; the `%` sign is required and a text that is not a number raises `ValueError`.",
        hint="Be lenient with spacing and strict with everything else.",
        gold='''
def parse_percent(text: str) -> float:
    """'12.5%' -> 0.125; ValueError unless it is a number followed by %."""
    stripped = text.strip()
    if not stripped.endswith("%"):
        raise ValueError(f"not a percentage: {text!r}")
    return float(stripped[:-1].strip()) / 100
''',
        edge_flaw='''
def parse_percent(text: str) -> float:
    """'12.5%' -> 0.125; ValueError unless it is a number followed by %."""
    return float(text.replace("%", "")) / 100
''',
        logic_flaw='''
def parse_percent(text: str) -> float:
    """'12.5%' -> 0.125; ValueError unless it is a number followed by %."""
    stripped = text.strip()
    if not stripped.endswith("%"):
        raise ValueError(f"not a percentage: {text!r}")
    return float(stripped[:-1].strip())
''',
        main=(("'12.5%'", "0.125"), ("'100%'", "1.0")),
        edge=(("' 40 % '", "0.4"), ("'40'", "raises:ValueError"), ("'abc%'", "raises:ValueError")),
    ),
    Op(
        name="to_base",
        module="convert",
        sig="def to_base(number: int, base: int = 2) -> str:",
        does="writes the integer `number` in `base` (2 to 36) with digits 0-9 then lower-case a-z (`to_base(255, 16)` is `'ff'`)",
        edges="`0` is `'0'`; a negative number gets a leading `-`; a base outside 2..36 raises `ValueError`.",
        hint="Zero, negative numbers and silly bases all need an answer.",
        gold='''
def to_base(number: int, base: int = 2) -> str:
    """`number` written in `base` (2..36), lower-case digits."""
    if not 2 <= base <= 36:
        raise ValueError(f"base must be 2..36, got {base}")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    sign, number = ("-", -number) if number < 0 else ("", number)
    out = []
    while number:
        number, rest = divmod(number, base)
        out.append(digits[rest])
    return sign + "".join(reversed(out))
''',
        edge_flaw='''
def to_base(number: int, base: int = 2) -> str:
    """`number` written in `base` (2..36), lower-case digits."""
    if not 2 <= base <= 36:
        raise ValueError(f"base must be 2..36, got {base}")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    while number > 0:
        number, rest = divmod(number, base)
        out.append(digits[rest])
    return "".join(reversed(out))
''',
        logic_flaw='''
def to_base(number: int, base: int = 2) -> str:
    """`number` written in `base` (2..36), lower-case digits."""
    if not 2 <= base <= 36:
        raise ValueError(f"base must be 2..36, got {base}")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    sign, number = ("-", -number) if number < 0 else ("", number)
    out = []
    while number:
        number, rest = divmod(number, base)
        out.append(digits[rest])
    return sign + "".join(out)
''',
        main=(("255, 16", "'ff'"), ("6", "'110'"), ("35, base=36", "'z'")),
        edge=(("0, 7", "'0'"), ("-10, 2", "'-1010'"), ("5, 1", "raises:ValueError")),
        kwarg="base",
        kwarg_alt="radix",
    ),
    Op(
        name="split_amount",
        module="money",
        sig="def split_amount(cents: int, parts: int) -> list[int]:",
        does="splits an amount of `cents` into `parts` integer shares that add up to exactly `cents` (`split_amount(100, 3)` is `[34, 33, 33]`)",
        edges="The leftover cents go one each to the first shares; `parts` must be at least 1 (`ValueError`); a zero amount gives a list of zeros.",
        hint="The shares must always add back up to the amount.",
        gold='''
def split_amount(cents: int, parts: int) -> list[int]:
    """`cents` split into `parts` shares summing to it; extra cents first."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    share, rest = divmod(cents, parts)
    return [share + 1 if i < rest else share for i in range(parts)]
''',
        edge_flaw='''
def split_amount(cents: int, parts: int) -> list[int]:
    """`cents` split into `parts` shares summing to it; extra cents first."""
    share, rest = divmod(cents, parts)
    return [share + rest] + [share] * (parts - 1)
''',
        logic_flaw='''
def split_amount(cents: int, parts: int) -> list[int]:
    """`cents` split into `parts` shares summing to it; extra cents first."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    return [cents // parts] * parts
''',
        main=(("100, 3", "[34, 33, 33]"), ("90, 3", "[30, 30, 30]")),
        edge=(
            ("101, 4", "[26, 25, 25, 25]"),
            ("102, 4", "[26, 26, 25, 25]"),
            ("5, 0", "raises:ValueError"),
        ),
    ),
    Op(
        name="format_cents",
        module="money",
        sig='def format_cents(cents: int, symbol: str = "$") -> str:',
        does="formats an integer amount of cents as money with thousands separators (`format_cents(123456)` is `'$1,234.56'`)",
        edges="Negative amounts put the minus before the symbol (`'-$5.00'`); amounts under a dollar keep a leading zero (`'$0.05'`).",
        hint="Small and negative amounts are the usual slip.",
        gold='''
def format_cents(cents: int, symbol: str = "$") -> str:
    """123456 -> '$1,234.56'; '-$5.00' for negatives."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}{symbol}{dollars:,}.{rest:02d}"
''',
        edge_flaw='''
def format_cents(cents: int, symbol: str = "$") -> str:
    """123456 -> '$1,234.56'; '-$5.00' for negatives."""
    dollars, rest = divmod(cents, 100)
    return f"{symbol}{dollars:,}.{rest:02d}"
''',
        logic_flaw='''
def format_cents(cents: int, symbol: str = "$") -> str:
    """123456 -> '$1,234.56'; '-$5.00' for negatives."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}{symbol}{dollars}.{rest:02d}"
''',
        main=(("123456", "'$1,234.56'"), ("250, symbol='€'", "'€2.50'")),
        edge=(("-500", "'-$5.00'"), ("5", "'$0.05'"), ("-1", "'-$0.01'")),
        kwarg="symbol",
        kwarg_alt="currency",
    ),
)

FAMILY = Family(
    package="numkit",
    about="small numeric helpers: statistics, rounding, ranges, conversions and money",
    modules=(
        ("stats", "Summary statistics over lists of numbers."),
        ("rounding", "Rounding rules."),
        ("ranges", "Numeric ranges and bounds."),
        ("convert", "Converting numbers to and from text."),
        ("money", "Amounts of money held as integer cents."),
    ),
    ops=OPS,
)
