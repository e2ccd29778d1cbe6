import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_run_checks_output():
    report = _module("report")
    got = report.run_checks()
    assert got == ['chunked: [[1, 2], [3, 4]]', 'count_by: {1: 2, 2: 2}', 'moving_average: [1.5, 2.5, 3.5]', 'get_path: 1'], (
        "report.run_checks() output changed: check how report.py formats its lines"
    )
