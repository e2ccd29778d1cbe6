# split_row is looked up on the module so that, while it is missing, each test fails on its
# own instead of the whole file failing to import.
from rowkit import format as rowformat


def test_split_row_reads_plain_and_quoted_fields():
    assert rowformat.split_row('a,"b,c",d') == ["a", "b,c", "d"]
