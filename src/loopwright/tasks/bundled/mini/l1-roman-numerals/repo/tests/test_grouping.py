from numfmt.grouping import ordinal, thousands


def test_thousands_groups_digits():
    assert thousands(1234567) == "1,234,567"
    assert thousands(-1000, sep=" ") == "-1 000"
    assert thousands(999) == "999"


def test_ordinal_suffixes():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 112)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "112th",
    ]
