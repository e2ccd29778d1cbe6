"""logsum: summarise application logs by level and source."""

from logsum.config import Config
from logsum.errors import ConfigError, LogsumError, ParseError
from logsum.formatter import summarize, summarize_text
from logsum.parser import LEVELS, Record, level_rank, normalize_level, parse_line, parse_lines

__all__ = [
    "LEVELS",
    "Config",
    "ConfigError",
    "LogsumError",
    "ParseError",
    "Record",
    "level_rank",
    "normalize_level",
    "parse_line",
    "parse_lines",
    "summarize",
    "summarize_text",
]
