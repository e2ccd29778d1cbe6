import pytest

from rowkit.format import join_row


def test_join_row_quotes_only_when_needed():
    assert join_row(["a", "b c", "d"]) == "a,b c,d"
    assert join_row(["a,b", 'say "hi"', " pad"]) == '"a,b","say ""hi"""," pad"'
    assert join_row(["x", "y"], delimiter=";", quote="'") == "x;y"


def test_join_row_writes_a_lone_empty_field_as_two_quotes():
    assert join_row([""]) == '""'
    assert join_row([]) == ""
    assert join_row(["", ""]) == ","


def test_join_row_rejects_an_invalid_dialect():
    with pytest.raises(ValueError):
        join_row(["a"], delimiter="||")
    with pytest.raises(ValueError):
        join_row(["a"], delimiter='"')
