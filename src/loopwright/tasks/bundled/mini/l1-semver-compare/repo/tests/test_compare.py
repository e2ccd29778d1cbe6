# compare is looked up on the module so that, while it is missing, each test fails on its own
# instead of the whole file failing to import.
from semverlite import version


def test_compare_orders_by_core_numbers():
    assert version.compare("1.2.3", "1.10.0") == -1
    assert version.compare("2.0.0", "1.99.99") == 1
    assert version.compare("1.2.3", "1.2.3") == 0
