import pytest

# split_row is looked up on the module so that, while it is missing, each test fails on its
# own instead of the whole file failing to import.
from rowkit import format as rowformat


def test_plain_fields():
    assert rowformat.split_row("a,b,c") == ["a", "b", "c"]
    assert rowformat.split_row("single") == ["single"]


def test_empty_fields_and_trailing_delimiter():
    assert rowformat.split_row("a,,b") == ["a", "", "b"]
    assert rowformat.split_row("a,b,") == ["a", "b", ""]
    assert rowformat.split_row(",") == ["", ""]


def test_empty_line_has_no_fields():
    assert rowformat.split_row("") == []


def test_whitespace_is_preserved():
    assert rowformat.split_row(" a , b ") == [" a ", " b "]


def test_quoted_fields_keep_delimiters_and_line_breaks():
    assert rowformat.split_row('"a,b",c') == ["a,b", "c"]
    assert rowformat.split_row('x,"line 1\nline 2"') == ["x", "line 1\nline 2"]


def test_doubled_quotes_inside_a_quoted_field():
    assert rowformat.split_row('"say ""hi""",x') == ['say "hi"', "x"]
    assert rowformat.split_row('""""') == ['"']


def test_quoted_empty_fields():
    assert rowformat.split_row('""') == [""]
    assert rowformat.split_row('"",""') == ["", ""]
    assert rowformat.split_row('a,""') == ["a", ""]


def test_quote_inside_an_unquoted_field_is_literal():
    assert rowformat.split_row('5" pipe,x') == ['5" pipe', "x"]


def test_custom_delimiter_and_quote():
    assert rowformat.split_row("a;'b;c';d", delimiter=";", quote="'") == ["a", "b;c", "d"]
    assert rowformat.split_row('a;"b"', delimiter=";") == ["a", "b"]


def test_round_trip_with_join_row():
    rows = [
        [],
        [""],
        ["", ""],
        ["plain", "two words"],
        ['a"b', "c,d", " pad ", "x\ny", ""],
        ['"', ",", '""'],
    ]
    for fields in rows:
        assert rowformat.split_row(rowformat.join_row(fields)) == fields


@pytest.mark.parametrize(
    "line",
    ['"abc', 'a,"b', '"a""'],
    ids=["never-closed", "second-field-never-closed", "doubled-quote-then-end"],
)
def test_unterminated_quote_raises(line):
    with pytest.raises(ValueError):
        rowformat.split_row(line)


@pytest.mark.parametrize(
    "line", ['"a"b,c', '"a" ,b'], ids=["letter-after-quote", "space-after-quote"]
)
def test_text_after_a_closing_quote_raises(line):
    with pytest.raises(ValueError):
        rowformat.split_row(line)


def test_invalid_dialect_raises():
    bad_dialects = [
        {"delimiter": ""},
        {"delimiter": ";;"},
        {"quote": ","},
        {"delimiter": "'", "quote": "'"},
    ]
    for kwargs in bad_dialects:
        with pytest.raises(ValueError):
            rowformat.split_row("a,b", **kwargs)
