from ringq.stats import moving_average, rolling_max


def test_moving_average_and_rolling_max():
    assert moving_average([1, 2, 3, 4, 5], 2) == [1.5, 2.5, 3.5, 4.5]
    assert moving_average([1, 2], 3) == []
    assert rolling_max([3, 1, 4, 1, 5, 9, 2], 3) == [3, 3, 4, 4, 5, 9, 9]
