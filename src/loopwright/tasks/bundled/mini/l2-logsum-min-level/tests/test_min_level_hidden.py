import pytest

from logsum import Config, ConfigError, ParseError, parse_lines, summarize, summarize_text
from logsum import parser

LOG = """\
2024-05-01T10:00:00 DEBUG db: pool size 4
2024-05-01T10:00:01 INFO web: started
2024-05-01T10:00:02 INFO web: GET /
2024-05-01T10:00:03 WARNING db: slow query
2024-05-01T10:00:04 ERROR cache: miss storm
2024-05-01T10:00:05 ERROR db: connection lost
"""


class TestConfig:
    def test_default_min_level_is_debug(self):
        assert Config().min_level == "DEBUG"
        assert Config.from_dict({}).min_level == "DEBUG"
        assert Config.from_dict({"top": 2}) == Config(top=2, min_level="DEBUG")

    @pytest.mark.parametrize(
        ("given", "expected"),
        [("warning", "WARNING"), ("ERROR", "ERROR"), (" Info ", "INFO"), ("warn", "WARNING"), ("Debug", "DEBUG")],
        ids=["lower case", "upper case", "padded", "warn alias", "capitalised"],
    )
    def test_min_level_is_normalised(self, given, expected):
        assert Config.from_dict({"min_level": given}).min_level == expected

    @pytest.mark.parametrize(
        "bad", ["verbose", "", "TRACE", 3, None], ids=["verbose", "empty", "trace", "int", "none"]
    )
    def test_bad_min_level_is_a_config_error(self, bad):
        with pytest.raises(ConfigError, match="DEBUG, INFO, WARNING, ERROR"):
            Config.from_dict({"min_level": bad})


def test_normalize_level_and_rank():
    assert parser.normalize_level(" warn ") == "WARNING"
    assert [parser.level_rank(level) for level in ("debug", "INFO", "Warning", "error")] == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        parser.normalize_level("loud")


def test_parse_lines_keeps_records_at_or_above_min_level():
    records = parse_lines(LOG.splitlines(), min_level="WARNING")
    assert [(r.level, r.source) for r in records] == [("WARNING", "db"), ("ERROR", "cache"), ("ERROR", "db")]
    assert len(parse_lines(LOG.splitlines(), "info")) == 5
    assert len(parse_lines(LOG.splitlines())) == 6


def test_parse_lines_rejects_unknown_min_level():
    with pytest.raises(ValueError):
        parse_lines(LOG.splitlines(), min_level="LOUD")


def test_malformed_lines_raise_whatever_the_min_level():
    lines = ["2024-05-01T10:00:00 ERROR db: ok", "garbage", "2024-05-01T10:00:00 DEBUG db: x"]
    with pytest.raises(ParseError, match="line 2"):
        parse_lines(lines, min_level="ERROR")


def test_summary_counts_only_records_at_min_level_and_above():
    records = parse_lines(LOG.splitlines())
    assert summarize(records, Config.from_dict({"min_level": "error", "top": 5})) == (
        "Log summary\n"
        "===========\n"
        "min level: ERROR\n"
        "levels: ERROR=2\n"
        "top sources:\n"
        "  cache: 1\n"
        "  db: 1\n"
    )


def test_summary_when_nothing_reaches_min_level():
    text = "2024-05-01T10:00:00 INFO web: started\n"
    assert summarize_text(text, Config(min_level="ERROR")) == (
        "Log summary\n===========\nmin level: ERROR\nlevels: none\n"
    )


def test_explicit_debug_min_level_keeps_the_original_summary():
    config = Config.from_dict({"title": "All", "top": 1, "min_level": "debug"})
    assert summarize_text(LOG, config) == (
        "All\n"
        "===\n"
        "levels: DEBUG=1, INFO=2, WARNING=1, ERROR=2\n"
        "top sources:\n"
        "  db: 3\n"
    )
