# decode is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from squeeze import rle


def test_decode_expands_counts():
    assert rle.decode("3ab2c") == "aaabcc"
