"""Hidden checks of complex-calc: each imports the produced code and calls it."""


def _raises_calc_error(expression, variables=None):
    from calc import CalcError, evaluate

    try:
        evaluate(expression, variables)
    except CalcError:
        return True
    except Exception as exc:
        raise AssertionError(f"{expression!r} raised {type(exc).__name__}, not CalcError") from exc
    raise AssertionError(f"{expression!r} did not raise CalcError")


def check_precedence_and_left_associativity():
    from calc import evaluate

    assert evaluate("2 * 3 + 4") == 10
    assert evaluate("2 + 3 * 4") == 14
    assert evaluate("10 - 4 - 3") == 3
    assert evaluate("48 / 4 / 2") == 6
    assert evaluate("(2 + 3) * 4") == 20


def check_power_is_right_associative_and_binds_tightest():
    from calc import evaluate

    assert evaluate("2 ** 3 ** 2") == 512
    assert evaluate("2 ** 3 ** 0") == 2
    assert evaluate("-2 ** 2") == -4
    assert evaluate("2 ** -1") == 0.5


def check_integer_and_true_division():
    from calc import evaluate

    assert evaluate("7 // 2") == 3 and isinstance(evaluate("7 // 2"), int)
    assert evaluate("7 / 2") == 3.5
    assert evaluate("-7 % 3") == 2
    assert evaluate("2 ** 10") == 1024 and isinstance(evaluate("2 ** 10"), int)


def check_unary_signs_and_decimals():
    from calc import evaluate

    assert evaluate("--3") == 3
    assert evaluate("-+-2.5") == 2.5
    assert evaluate("1.5 * -(2 - 4)") == 3.0


def check_variables():
    from calc import evaluate

    assert evaluate("x * (y + 1)", {"x": 3, "y": 4}) == 15
    assert evaluate("rate_2 ** 2", {"rate_2": 1.5}) == 2.25
    assert _raises_calc_error("x + z", {"x": 1})


def check_syntax_errors_raise_calc_error():
    for expression in ("", "1 +", "(1 + 2", "1 + 2)", "2 3", "* 4", "1 $ 2"):
        assert _raises_calc_error(expression)


def check_division_by_zero_raises_calc_error():
    for expression in ("1 / 0", "5 // (2 - 2)", "3 % 0"):
        assert _raises_calc_error(expression)
