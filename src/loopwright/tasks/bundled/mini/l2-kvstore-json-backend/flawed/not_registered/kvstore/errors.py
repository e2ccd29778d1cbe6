"""Exceptions raised by kvstore."""


class StoreError(Exception):
    """Base class for every kvstore error."""


class UnknownBackendError(StoreError):
    """No backend is registered for a URL's scheme."""


class MissingKeyError(StoreError, KeyError):
    """A key that is not in the store was read or deleted."""


class CorruptStoreError(StoreError):
    """A store's file exists but does not hold what the backend expects."""
