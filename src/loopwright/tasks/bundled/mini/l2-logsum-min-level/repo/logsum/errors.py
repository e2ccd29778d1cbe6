"""Exceptions raised by logsum."""


class LogsumError(Exception):
    """Base class for every logsum error."""


class ConfigError(LogsumError):
    """An option is unknown or has a bad value."""


class ParseError(LogsumError):
    """A log line does not have the expected shape."""
