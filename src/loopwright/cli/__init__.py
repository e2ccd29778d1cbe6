"""The `loopwright` command line: `loopwright <noun> <verb>`.

Each command parses its options and calls one library function. User errors print as
what/got/fix without a traceback and exit 2; a failed check exits 1; Ctrl-C exits 130.
"""

from __future__ import annotations

from loopwright.cli._app import app, main

__all__ = ["app", "main"]
