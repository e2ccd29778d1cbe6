import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_run_checks_output():
    report = _module("report")
    got = report.run_checks()
    assert got == ['round_to_step: 5.0', 'parse_percent: 0.125'], (
        "report.run_checks() output changed: check how report.py formats its lines"
    )
