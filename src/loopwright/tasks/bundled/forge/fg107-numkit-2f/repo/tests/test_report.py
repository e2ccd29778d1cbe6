import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("numkit." + name)


def test_run_checks_output():
    report = _module("report")
    got = report.run_checks()
    assert got == ['overlap: 5', "to_base: 'ff'"], (
        "report.run_checks() output changed: check how report.py formats its lines"
    )
