"""Run one command line against a store."""

from __future__ import annotations

from typing import TextIO

from todocli.commands import COMMANDS
from todocli.errors import TodoError, UsageError
from todocli.store import TodoStore


def run(argv: list[str], store: TodoStore, out: TextIO, err: TextIO) -> int:
    """Dispatch `argv` (command name, then its arguments); return the exit code.

    Errors are printed to `err` as `error: <message>` and turned into their exit code.
    """
    try:
        if not argv:
            raise UsageError("usage: <command> [args...]; commands: " + ", ".join(sorted(COMMANDS)))
        name, args = argv[0], argv[1:]
        if name not in COMMANDS:
            raise UsageError(f"unknown command {name!r}; commands: " + ", ".join(sorted(COMMANDS)))
        COMMANDS[name](store, args, out)
    except TodoError as exc:
        print(f"error: {exc}", file=err)
        return exc.exit_code
    return 0
