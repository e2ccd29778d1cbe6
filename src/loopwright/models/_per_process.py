"""What must never cross a fork: HTTP clients with their pools of keep-alive connections, and
locks. The local executor forks a worker per job from the process that also calls the meta
model (reflection, mutation, crossover); a forked worker that reused an inherited connection
would write its requests onto the parent's socket, interleaved with the parent's and its
siblings' (bodies the server cannot parse, replies read by the wrong process), and a lock
another thread held at the fork stays held in the child for good.

So each process makes its own: `PerProcess` holds a value made on first use in each process
(keyed by pid), and `fresh_litellm_clients` drops LiteLLM's client cache in a process other
than the one that filled it, before that process makes its first call.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["PerProcess", "fresh_litellm_clients", "no_litellm_logging_thread"]

T = TypeVar("T")

_GUARD = threading.Lock()


def _reset_guard() -> None:
    global _GUARD
    _GUARD = threading.Lock()  # another thread may have held it at the fork


os.register_at_fork(after_in_child=_reset_guard)


class PerProcess(Generic[T]):
    """A value made by `make` once in each process that asks for it: a forked child never
    gets its parent's (it makes its own on first `get`). Thread-safe."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._pid = -1
        self._value: T | None = None

    def get(self) -> T:
        pid = os.getpid()
        if self._pid != pid or self._value is None:
            with _GUARD:
                if self._pid != pid or self._value is None:
                    self._value = self._make()
                    self._pid = pid
        return self._value


# LiteLLM's cache of SDK/httpx clients (keyed by provider, base URL and key), and its two
# module-level HTTP handlers: every connection pool it holds.
_LITELLM_CLIENTS = ("in_memory_llm_clients_cache", "module_level_client", "module_level_aclient")
_litellm_pid = os.getpid()


def fresh_litellm_clients(litellm: Any) -> bool:
    """In a process other than the one whose calls filled LiteLLM's client caches (a forked
    worker), forget the inherited clients so this process opens its own connections. The
    inherited objects are dropped, never closed: closing would act on sockets the parent
    still uses. Returns True when something was dropped. Cheap when nothing has to be done."""
    global _litellm_pid
    pid = os.getpid()
    if pid == _litellm_pid:
        return False
    with _GUARD:
        if pid == _litellm_pid:
            return False
        namespace = vars(litellm)
        dropped = False
        for name in _LITELLM_CLIENTS:
            inherited = namespace.get(name)
            if inherited is None:
                continue
            if name == "in_memory_llm_clients_cache":
                setattr(litellm, name, type(inherited)())  # an empty cache of the same kind
            else:
                delattr(litellm, name)  # made again on first use, in this process
            dropped = True
        _litellm_pid = pid
        return dropped


def no_litellm_logging_thread() -> contextlib.AbstractContextManager[Any]:
    """A scope in which LiteLLM does not hand the reply to its logging thread pool (its
    callbacks and spend tracking; loopwright uses neither: its ledger meters every call).
    A logging thread busy in a parent at the moment a worker is forked (importing a module on
    the first reply) leaves that module's import lock held in the child for good, so the
    child hangs when it imports the module or joins the thread at exit. Uses LiteLLM's own
    `internal_sub_call` scope (how it marks calls it must not log); a LiteLLM without it gets
    no scope (and the worker's exit does not wait on threads, see the local executor)."""
    try:
        module = importlib.import_module("litellm._internal_context")
    except ImportError:
        return contextlib.nullcontext()
    scope = getattr(module, "internal_sub_call", None)
    return scope() if callable(scope) else contextlib.nullcontext()
