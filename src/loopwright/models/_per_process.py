"""What must never cross a fork: HTTP clients with their pools of keep-alive connections, and
locks. The local executor forks a worker per job from the process that also calls the meta
model (reflection, mutation, crossover); a forked worker that reused an inherited connection
would write its requests onto the parent's socket, interleaved with the parent's and its
siblings' (bodies the server cannot parse, replies read by the wrong process), and a lock
another thread held at the fork stays held in the child for good.

So each process makes its own: `PerProcess` holds a value made on first use in each process
(keyed by pid), and LiteLLM's cached clients are left behind at every fork: in the child, just
after the fork, their sockets are closed (the child's copies of the descriptors only: nothing
is sent on them, and the parent's connections stay open) and the caches emptied, so the child
opens its own connections (`close_inherited_litellm_clients`). `fresh_litellm_clients` does the
emptying again, lazily, in any process other than the one that filled the caches.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import socket
import sys
import threading
import types
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = [
    "PerProcess",
    "close_inherited_litellm_clients",
    "fresh_litellm_clients",
    "no_litellm_logging_thread",
]

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
    """In a process other than the one whose calls filled LiteLLM's client caches, forget the
    inherited clients so this process opens its own connections (a forked child has done so
    at the fork already: `close_inherited_litellm_clients`). Returns True when something was
    dropped. Cheap when nothing has to be done."""
    global _litellm_pid
    pid = os.getpid()
    if pid == _litellm_pid:
        return False
    with _GUARD:
        if pid == _litellm_pid:
            return False
        dropped = bool(_drop_clients(litellm))
        _litellm_pid = pid
        return dropped


def close_inherited_litellm_clients() -> int:
    """In a child just forked (registered to run after every `os.fork`): close this process's
    copy of every socket LiteLLM's cached clients hold, then forget those clients. Closing a
    descriptor another process also holds sends nothing (no FIN, no TLS close_notify: only the
    last holder's close ends a connection), so the parent's connections are untouched; the
    child no longer holds them (before, a forked worker kept its parent's idle keep-alive
    sockets open for its whole life). Returns how many sockets were closed."""
    global _litellm_pid
    litellm = sys.modules.get("litellm")
    if litellm is None or os.getpid() == _litellm_pid:
        return 0
    closed = 0
    for client in _drop_clients(litellm):
        for sock in _sockets_of(client):
            fd = sock.detach()  # the object can never be used again (nor close a reused fd)
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
                    closed += 1
    _litellm_pid = os.getpid()
    return closed


def _drop_clients(litellm: Any) -> list[Any]:
    """Forget LiteLLM's cached clients (made again on first use); return what was dropped."""
    namespace = vars(litellm)
    dropped = []
    for name in _LITELLM_CLIENTS:
        inherited = namespace.get(name)
        if inherited is None:
            continue
        dropped.append(inherited)
        if name == "in_memory_llm_clients_cache":
            setattr(litellm, name, type(inherited)())  # an empty cache of the same kind
        else:
            delattr(litellm, name)  # made again on first use, in this process
    return dropped


_WALK_DEPTH = 12  # a cache holds an SDK client, its httpx client, transport, pool, connection,
_WALK_MAX = 20_000  # the connection's stream, and the stream its socket: a few levels each


def _sockets_of(root: object) -> list[socket.socket]:
    """The sockets reachable from `root` through instance attributes and containers (what an
    SDK client, its httpx client and httpcore pool hold), a bounded walk: no module, class or
    function is entered."""
    found: list[socket.socket] = []
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(root, 0)]
    while stack and len(seen) < _WALK_MAX:
        obj, depth = stack.pop()
        if id(obj) in seen or depth > _WALK_DEPTH or _opaque(obj):
            continue
        seen.add(id(obj))
        if isinstance(obj, socket.socket):
            found.append(obj)
            continue
        stack.extend((child, depth + 1) for child in _children(obj))
    return found


def _opaque(obj: object) -> bool:
    return obj is None or isinstance(
        obj, (str, bytes, bytearray, int, float, type, type(sys), type(_opaque))
    )


def _children(obj: object) -> list[object]:
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return list(obj)
    # Read without attribute hooks: no `__getattr__` (a lazy import) or property runs here.
    try:
        namespace = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        namespace = {}
    children = list(namespace.values()) if isinstance(namespace, dict) else []
    for cls in type(obj).__mro__:
        slots = vars(cls).get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            member = vars(cls).get(slot)
            if isinstance(member, types.MemberDescriptorType):
                with contextlib.suppress(AttributeError):
                    children.append(member.__get__(obj, type(obj)))
    return children


os.register_at_fork(after_in_child=close_inherited_litellm_clients)


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
