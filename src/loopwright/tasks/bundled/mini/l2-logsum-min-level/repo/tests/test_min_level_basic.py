from logsum import Config, summarize_text

LOG = """\
2024-05-01T10:00:00 INFO web: started
2024-05-01T10:00:02 WARNING db: slow query
2024-05-01T10:00:03 ERROR db: connection lost
"""


def test_min_level_filters_the_summary():
    config = Config.from_dict({"min_level": "warning"})
    assert config.min_level == "WARNING"
    assert summarize_text(LOG, config) == (
        "Log summary\n"
        "===========\n"
        "min level: WARNING\n"
        "levels: WARNING=1, ERROR=1\n"
        "top sources:\n"
        "  db: 2\n"
    )
