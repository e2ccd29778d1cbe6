"""Who is calling loopwright: a Python program (the default) or a person at the command line.

The CLI's `main` says so for the length of one command (`called_from_cli`). Messages that
name a setting or say how to go on use the caller's words (`spoken`): the parameter
(`run_dir`, `loopwright.resume(...)`) to a Python caller, the flag (`--run-dir`,
`loopwright evolve --resume ...`) at the command line. A run's header (`store.RunMeta.caller`)
records which one started it, so its report names settings the same way. A context variable,
not a global: a library call made while no command runs is always a Python caller's. A thread
does not inherit it (a new thread starts in an empty context): work handed to another thread
(a pool, a wave, a grader's deadline thread) goes through `carried`, so it speaks the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal, ParamSpec, TypeVar

__all__ = ["Caller", "called_from_cli", "caller", "carried", "speaking_as", "spoken"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

Caller = Literal["python", "cli"]
_CALLER: ContextVar[Caller] = ContextVar("loopwright_caller", default="python")


def caller() -> Caller:
    """`cli` while a CLI command runs (in its thread and the processes it forks), else
    `python`."""
    return _CALLER.get()


@contextmanager
def called_from_cli() -> Iterator[None]:
    """What runs in the block was asked for at the command line (the CLI's `main`)."""
    with speaking_as("cli"):
        yield


@contextmanager
def speaking_as(who: Caller) -> Iterator[None]:
    """What runs in the block speaks to `who`: in a process that was not forked from the
    caller's (a Ray worker), with the caller shipped along with the job."""
    token = _CALLER.set(who)
    try:
        yield
    finally:
        _CALLER.reset(token)


def spoken(python: str, cli: str, who: Caller | None = None) -> str:
    """`python` (a parameter, a call) for a Python caller, `cli` (a flag, a command) at the
    command line; `who` defaults to the current caller."""
    return cli if (who or caller()) == "cli" else python


def carried(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """`fn`, which runs as the current caller in whatever thread calls it: wrap work handed to
    another thread with it (`pool.map(carried(f), ...)`, `Thread(target=carried(f))`). Only
    the caller is carried (not the whole context), so one wrapper may run in many threads at
    once."""
    who = caller()

    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        token = _CALLER.set(who)
        try:
            return fn(*args, **kwargs)
        finally:
            _CALLER.reset(token)

    return run
