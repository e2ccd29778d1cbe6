import io

import pytest

from todocli.cli import run
from todocli.store import TodoStore


class Session:
    """A store plus captured output; `call("add x")` runs one command line."""

    def __init__(self) -> None:
        self.store = TodoStore()
        self.out = io.StringIO()
        self.err = io.StringIO()

    def call(self, line: str) -> int:
        self.out.seek(0)
        self.out.truncate()
        self.err.seek(0)
        self.err.truncate()
        return run(line.split(), self.store, self.out, self.err)


@pytest.fixture
def session() -> Session:
    return Session()
