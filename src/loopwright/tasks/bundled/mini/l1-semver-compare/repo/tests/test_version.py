import pytest

from semverlite.version import Version, parse


def test_parse_splits_every_part():
    assert parse("1.4.0-rc.1+build.7") == Version(1, 4, 0, ("rc", "1"), ("build", "7"))
    assert parse("0.0.1") == Version(0, 0, 1)


def test_parse_rejects_malformed_versions():
    for text in ("1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+"):
        with pytest.raises(ValueError):
            parse(text)


def test_str_round_trips():
    for text in ("1.0.0", "2.3.4-alpha.1", "0.1.0+sha.5114f85", "1.0.0-x-y.7+b"):
        assert str(parse(text)) == text
