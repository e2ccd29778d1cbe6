import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_mean_or_none_main():
    assert _module("stats").mean_or_none([1, 2, 3, 4]) == 2.5
    assert _module("stats").mean_or_none([10]) == 10.0


def test_mean_or_none_edge_1():
    assert _module("stats").mean_or_none([]) == None


def test_mean_or_none_edge_2():
    assert _module("stats").mean_or_none([2, None, 4]) == 3.0


def test_mean_or_none_edge_3():
    assert _module("stats").mean_or_none([None]) == None


def test_round_half_up_main():
    assert _module("rounding").round_half_up(2.5) == 3.0
    assert _module("rounding").round_half_up(0.125, 2) == 0.13
    assert _module("rounding").round_half_up(7.24, digits=1) == 7.2


def test_round_half_up_edge_1():
    assert _module("rounding").round_half_up(-2.5) == -3.0


def test_round_half_up_edge_2():
    assert _module("rounding").round_half_up(1.005, 2) == 1.01


def test_round_half_up_edge_3():
    assert _module("rounding").round_half_up(1250, -2) == 1300.0


def test_to_base_main():
    assert _module("convert").to_base(255, 16) == 'ff'
    assert _module("convert").to_base(6) == '110'
    assert _module("convert").to_base(35, base=36) == 'z'


def test_to_base_edge_1():
    assert _module("convert").to_base(0, 7) == '0'


def test_to_base_edge_2():
    assert _module("convert").to_base(-10, 2) == '-1010'


def test_to_base_edge_3():
    with pytest.raises(ValueError):
        _module("convert").to_base(5, 1)


def test_format_cents_main():
    assert _module("money").format_cents(123456) == '$1,234.56'
    assert _module("money").format_cents(250, symbol='€') == '€2.50'


def test_format_cents_edge_1():
    assert _module("money").format_cents(-500) == '-$5.00'


def test_format_cents_edge_2():
    assert _module("money").format_cents(5) == '$0.05'


def test_format_cents_edge_3():
    assert _module("money").format_cents(-1) == '-$0.01'


def test_median_unchanged():
    assert _module("stats").median([3, 1, 2]) == 2.0
    assert _module("stats").median([9, 1, 5, 7, 3]) == 5.0


def test_round_to_step_unchanged():
    assert _module("rounding").round_to_step(7, 5) == 5.0
    assert _module("rounding").round_to_step(8, 5) == 10.0
    assert _module("rounding").round_to_step(0.26, 0.25) == 0.25


def test_parse_percent_unchanged():
    assert _module("convert").parse_percent('12.5%') == 0.125
    assert _module("convert").parse_percent('100%') == 1.0


def test_split_amount_unchanged():
    assert _module("money").split_amount(100, 3) == [34, 33, 33]
    assert _module("money").split_amount(90, 3) == [30, 30, 30]
