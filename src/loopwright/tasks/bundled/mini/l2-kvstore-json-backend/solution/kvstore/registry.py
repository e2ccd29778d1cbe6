"""Which backend serves which URL scheme, and opening a store from a URL."""

from __future__ import annotations

from collections.abc import Callable

from kvstore.base import Backend
from kvstore.errors import UnknownBackendError
from kvstore.jsonfile import JsonFileBackend
from kvstore.memory import MemoryBackend

# A factory receives the part of the URL after "scheme://" and returns a backend.
BackendFactory = Callable[[str], Backend]

_FACTORIES: dict[str, BackendFactory] = {}


def register_backend(scheme: str, factory: BackendFactory) -> None:
    """Serve URLs `scheme://...` with `factory`; registering a scheme again replaces it."""
    if not scheme.isalnum() or not scheme.islower():
        raise ValueError(f"a scheme is lowercase letters and digits, got {scheme!r}")
    _FACTORIES[scheme] = factory


def available_backends() -> list[str]:
    """The registered schemes, sorted."""
    return sorted(_FACTORIES)


def open_store(url: str) -> Backend:
    """Open the store a URL names, e.g. `memory://` or `json:///var/data/store.json`."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError(f"not a store URL (expected scheme://...): {url!r}")
    try:
        factory = _FACTORIES[scheme]
    except KeyError:
        known = ", ".join(available_backends())
        raise UnknownBackendError(f"no backend for {scheme!r} (known: {known})") from None
    return factory(rest)


def _memory(rest: str) -> Backend:
    if rest:
        raise ValueError(f"memory:// takes no path, got {rest!r}")
    return MemoryBackend()


def _json(rest: str) -> Backend:
    if not rest:
        raise ValueError("json:// needs a file path, e.g. json:///tmp/store.json")
    return JsonFileBackend(rest)


register_backend("memory", _memory)
register_backend("json", _json)
