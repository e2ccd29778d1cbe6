"""Test ids that cannot name a test pytest reports (cut off at a space, or naming no test of its
file) are left out at import and reported per instance, never kept silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.tasks import load_task
from loopwright.tasks.importers import ImportOptions, import_swebench
from tests.tasks.importfixtures import F2P, P2P, Fixture, make_fixture, write_jsonl

CUT = "tests/test_ops.py::test_mul[with-a-space"  # a real row's id, cut at a space
UNKNOWN = "tests/test_extra.py::test_never_written[p1]"


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return make_fixture(tmp_path_factory.mktemp("fixture"))


def test_unresolvable_ids_are_left_out_and_reported(fx: Fixture, tmp_path: Path) -> None:
    row = fx.instance(
        FAIL_TO_PASS=json.dumps([*F2P, CUT]), PASS_TO_PASS=json.dumps([*P2P, UNKNOWN])
    )
    report = import_swebench(
        write_jsonl(tmp_path / "rows.jsonl", [row]), tmp_path / "out", ImportOptions(repos=fx.repos)
    )
    assert not report.skipped, report.skipped
    [done] = report.converted
    task = load_task(tmp_path / "out" / done.task_id)
    assert task.spec.fail_to_pass == F2P and task.spec.pass_to_pass == P2P
    assert any(CUT in n and "never closed" in n for n in done.notes), done.notes
    assert any(UNKNOWN in n and "never names a test test_never_written" in n for n in done.notes)
    written = json.loads((tmp_path / "out" / "import_report.json").read_text())
    assert written["converted"][0]["notes"] == done.notes


def test_an_instance_whose_every_fail_to_pass_id_is_unresolvable_says_so(
    fx: Fixture, tmp_path: Path
) -> None:
    row = fx.instance(FAIL_TO_PASS=json.dumps([CUT]))
    report = import_swebench(
        write_jsonl(tmp_path / "rows.jsonl", [row]), tmp_path / "out", ImportOptions(repos=fx.repos)
    )
    assert "no FAIL_TO_PASS id names a test" in report.skipped[0].reason
