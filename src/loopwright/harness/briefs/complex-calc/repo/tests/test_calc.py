from calc import evaluate


def test_adds_two_numbers():
    assert evaluate("1 + 2") == 3
