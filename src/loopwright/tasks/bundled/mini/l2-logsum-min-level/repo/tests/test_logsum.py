import pytest

from logsum import Config, ConfigError, ParseError, parse_line, parse_lines, summarize_text

LOG = """\
# nightly run
2024-05-01T10:00:00 INFO web: started
2024-05-01T10:00:01 DEBUG db: pool size 4
2024-05-01T10:00:02 WARNING db: slow query
2024-05-01T10:00:03 ERROR db: connection lost

2024-05-01T10:00:04 INFO web: GET /
2024-05-01T10:00:05 ERROR cache: miss storm
"""


def test_parse_line():
    record = parse_line("2024-05-01T10:00:00 ERROR db: connection lost")
    assert (record.level, record.source, record.message) == ("ERROR", "db", "connection lost")
    assert parse_line("   ") is None
    assert parse_line("# comment") is None


def test_parse_errors_name_the_line():
    with pytest.raises(ParseError, match="line 2"):
        parse_lines(["2024-05-01T10:00:00 INFO web: ok", "not a log line"])
    with pytest.raises(ParseError):
        parse_line("2024-05-01T10:00:00 TRACE web: unknown level")


def test_config_validation():
    assert Config.from_dict({}) == Config()
    assert Config.from_dict({"title": " Nightly ", "top": 2}) == Config("Nightly", 2)
    for bad in ({"colour": True}, {"top": 0}, {"top": True}, {"title": ""}):
        with pytest.raises(ConfigError):
            Config.from_dict(bad)


def test_summary():
    assert summarize_text(LOG, Config.from_dict({"title": "Nightly", "top": 2})) == (
        "Nightly\n"
        "=======\n"
        "levels: DEBUG=1, INFO=2, WARNING=1, ERROR=2\n"
        "top sources:\n"
        "  db: 3\n"
        "  web: 2\n"
    )


def test_summary_of_nothing():
    assert summarize_text("# empty\n", Config()) == "Log summary\n===========\nlevels: none\n"
