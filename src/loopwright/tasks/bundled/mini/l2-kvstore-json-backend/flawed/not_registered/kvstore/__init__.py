"""kvstore: a key-value store with pluggable backends opened from URLs."""

from kvstore.base import Backend
from kvstore.errors import CorruptStoreError, MissingKeyError, StoreError, UnknownBackendError
from kvstore.jsonfile import JsonFileBackend
from kvstore.memory import MemoryBackend
from kvstore.registry import available_backends, open_store, register_backend

__all__ = [
    "Backend",
    "CorruptStoreError",
    "JsonFileBackend",
    "MemoryBackend",
    "MissingKeyError",
    "StoreError",
    "UnknownBackendError",
    "available_backends",
    "open_store",
    "register_backend",
]
