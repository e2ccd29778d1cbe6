"""kvstore: a key-value store with pluggable backends opened from URLs."""

from kvstore.base import Backend
from kvstore.errors import MissingKeyError, StoreError, UnknownBackendError
from kvstore.memory import MemoryBackend
from kvstore.registry import available_backends, open_store, register_backend

__all__ = [
    "Backend",
    "MemoryBackend",
    "MissingKeyError",
    "StoreError",
    "UnknownBackendError",
    "available_backends",
    "open_store",
    "register_backend",
]
