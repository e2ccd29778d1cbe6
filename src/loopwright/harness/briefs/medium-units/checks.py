"""Hidden checks of medium-units: each imports the produced code and calls it."""


def check_parses_with_and_without_spaces():
    from units import Quantity, parse_quantity

    assert parse_quantity("3.5 km") == Quantity(3.5, "km")
    assert parse_quantity("12kg") == Quantity(12.0, "kg")
    assert parse_quantity("  -2 mm ") == Quantity(-2.0, "mm")


def check_refuses_malformed_and_unknown_units():
    from units import parse_quantity

    for text in ("", "km", "3.5", "3.5 parsecs", "1.2.3 m", "3 m m"):
        try:
            parse_quantity(text)
        except ValueError:
            continue
        raise AssertionError(f"parse_quantity({text!r}) did not raise ValueError")


def check_converts_within_a_dimension():
    from units import Quantity, convert

    assert convert(Quantity(3.5, "km"), "m") == Quantity(3500.0, "m")
    assert abs(convert(Quantity(250.0, "g"), "kg").value - 0.25) < 1e-12
    assert convert(Quantity(90.0, "min"), "h") == Quantity(1.5, "h")


def check_refuses_other_dimensions():
    from units import Quantity, convert

    for unit in ("m", "s", "furlong"):
        try:
            convert(Quantity(1.0, "kg"), unit)
        except ValueError:
            continue
        raise AssertionError(f"convert(1 kg, {unit!r}) did not raise ValueError")


def check_formats_without_trailing_zeros():
    from units import Quantity

    assert str(Quantity(3.5, "km")) == "3.5 km"
    assert str(Quantity(12.0, "kg")) == "12 kg"
    assert str(Quantity(0.001, "m")) == "0.001 m"
    assert str(Quantity(-2.0, "mm")) == "-2 mm"


def check_parse_convert_format_round_trip():
    from units import convert, parse_quantity

    assert str(convert(parse_quantity("1500g"), "kg")) == "1.5 kg"
    assert str(convert(parse_quantity("2 h"), "min")) == "120 min"
