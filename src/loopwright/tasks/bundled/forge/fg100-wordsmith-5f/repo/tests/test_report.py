import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("wordsmith." + name)


def test_run_checks_output():
    report = _module("report")
    got = report.run_checks()
    assert got == ["collapse_spaces: 'a b c'", "swap_case_words: 'Hello World'", 'count_vowels: 3', "split_pairs: {'a': '1', 'b': '2'}", "center_text: '**ab**'"], (
        "report.run_checks() output changed: check how report.py formats its lines"
    )
