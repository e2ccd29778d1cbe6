"""Errors, each carrying the exit code the CLI returns for it."""


class TodoError(Exception):
    """Base class for every todocli error."""

    exit_code = 1


class UsageError(TodoError):
    """The command line is wrong: unknown command, missing or malformed arguments."""

    exit_code = 2


class NotFoundError(TodoError):
    """No todo has the given id."""

    exit_code = 1


class AlreadyDoneError(TodoError):
    """The todo was already completed."""

    exit_code = 3
