import importlib

import pytest


def _module(name):
    # looked up per test, so that one module failing to import fails only its own tests
    return importlib.import_module("seqkit." + name)


def test_run_checks_output():
    report = _module("report")
    got = report.run_checks()
    assert got == ['pad_to_multiple: [1, 2, 3, None]', 'duplicates: [1, 2]', 'count_by: {1: 2, 2: 2}', 'pairwise_diffs: [3, 5]'], (
        "report.run_checks() output changed: check how report.py formats its lines"
    )
