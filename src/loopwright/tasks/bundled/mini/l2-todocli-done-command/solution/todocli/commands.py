"""The command registry and the commands themselves.

A command is a function `(store, args, out) -> None` registered under a name with
`@command(name)`; `args` are the command-line words after the command name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from todocli.errors import UsageError
from todocli.store import TodoStore

Command = Callable[[TodoStore, list[str], TextIO], None]

COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    """Register the decorated function as the command `name`."""

    def register(func: Command) -> Command:
        if name in COMMANDS:
            raise ValueError(f"command {name!r} is already registered")
        COMMANDS[name] = func
        return func

    return register


def parse_id(args: list[str], usage: str) -> int:
    """The single integer id argument of a command, else UsageError showing `usage`."""
    if len(args) != 1 or not args[0].isdigit():
        raise UsageError(f"usage: {usage}")
    return int(args[0])


@command("add")
def add(store: TodoStore, args: list[str], out: TextIO) -> None:
    title = " ".join(args)
    if not title.strip():
        raise UsageError("usage: add <title>")
    todo = store.add(title)
    print(f"added {todo.id}: {todo.title}", file=out)


@command("list")
def list_(store: TodoStore, args: list[str], out: TextIO) -> None:
    if args not in ([], ["--pending"]):
        raise UsageError("usage: list [--pending]")
    todos = store.pending() if args else store.all()
    if not todos:
        print("nothing to do", file=out)
    for todo in todos:
        suffix = " (done)" if todo.done else ""
        print(f"{todo.id}: {todo.title}{suffix}", file=out)


@command("remove")
def remove(store: TodoStore, args: list[str], out: TextIO) -> None:
    todo = store.remove(parse_id(args, "remove <id>"))
    print(f"removed {todo.id}: {todo.title}", file=out)


@command("done")
def done(store: TodoStore, args: list[str], out: TextIO) -> None:
    todo = store.complete(parse_id(args, "done <id>"))
    print(f"completed {todo.id}: {todo.title}", file=out)
