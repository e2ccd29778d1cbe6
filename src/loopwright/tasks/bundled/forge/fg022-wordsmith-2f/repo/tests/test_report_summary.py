import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_summary_line_counts_lines():
    assert _module("report").summary_line(["a", "b"]) == "2 checks ran"
