from units import Quantity, parse_quantity


def test_parse_simple_quantity():
    assert parse_quantity("3 m") == Quantity(3.0, "m")
