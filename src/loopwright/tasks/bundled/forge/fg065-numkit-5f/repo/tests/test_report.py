import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_run_checks_output():
    report = _module("report")
    got = report.run_checks()
    assert got == ['median: 2.0', 'round_half_up: 3.0', 'overlap: 5', 'parse_percent: 0.125', "format_cents: '$1,234.56'"], (
        "report.run_checks() output changed: check how report.py formats its lines"
    )
