from rowkit.types import coerce


def test_coerce_recognises_scalars():
    assert [coerce(v) for v in ("", "TRUE", "false", "42", "-2.5", "1e3", "abc")] == [
        None, True, False, 42, -2.5, 1000.0, "abc",
    ]
