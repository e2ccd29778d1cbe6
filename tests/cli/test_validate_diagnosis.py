"""`bench validate` says why a check failed: the failing tests, those that needed a network told
apart from code failures, the output's tail; and one task's failed environment build does not
stop the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.cli import main
from tests.sandbox.envfactory import make_env_task
from tests.taskfactory import make_calc_task

NET_TEST = """
import socket


def test_fetches_the_index():
    socket.getaddrinfo("loopwright-offline-check.invalid", 80)
"""
NET_ID = "tests/test_net_hidden.py::test_fetches_the_index"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    make_calc_task(root, "needs-net", extra_hidden={"test_net_hidden.py": NET_TEST},
                   extra_f2p=[NET_ID])  # fmt: skip
    make_env_task(root, "broken-env", install=("echo the-build-broke >&2; exit 4",))
    make_calc_task(root, "fine")
    return root


def test_json_lists_failing_and_network_tests_and_goes_on_after_a_failed_build(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "bench", "validate", str(bench), "--json",
                       "--env-cache", str(tmp_path / "cache"))  # fmt: skip
    assert code == 1
    checks = {(c["task"], c["variant"]): c for c in json.loads(out)}
    assert all(checks[("fine", v)]["ok"] for v in ("gold", "untouched", "only-mul"))
    broken = checks[("broken-env", "gold")]
    assert not broken["ok"] and "`echo the-build-broke >&2; exit 4` exited 4" in broken["problem"]
    gold = checks[("needs-net", "gold")]
    assert not gold["ok"] and gold["failing_tests"] == [NET_ID]
    assert gold["needs_network"] == [NET_ID]
    assert "test_fetches_the_index" in gold["output_tail"]
    flawed = checks[("needs-net", "only-mul")]
    assert "tests/test_ops_hidden.py::test_div_by_zero" in flawed["failing_tests"]
    assert flawed["needs_network"] == [NET_ID]


def test_the_table_shows_why_a_gold_failed(
    bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "bench", "validate", str(bench),
                       "--env-cache", str(tmp_path / "cache"))  # fmt: skip
    assert code == 1
    assert "needs-net / gold" in out and "need a network" in out and NET_ID in out
    assert "output's tail" in out
    assert "broken-env" in out and "2 of 3 task(s) failed validation" in out


def test_a_listed_test_id_no_test_has_is_named_as_never_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in fail_to_pass: the gold cannot pass it; validate exits 1 and says the id was
    never collected, apart from tests that ran and failed."""
    nosuch = "tests/test_ops_hidden.py::test_nosuch"
    make_calc_task(tmp_path / "bench", "typo", extra_f2p=[nosuch])
    code, out, _ = run(capsys, "bench", "validate", str(tmp_path / "bench"), "--sandbox", "local")
    assert code == 1
    said = " ".join(out.split())  # however the console wrapped it
    assert (
        "never ran (no test of that id was collected: check the id in task.toml's "
        f"fail_to_pass / pass_to_pass): {nosuch}"
    ) in said
    code, out, _ = run(capsys, "bench", "validate", str(tmp_path / "bench"), "--sandbox", "local",
                       "--json")  # fmt: skip
    gold = next(c for c in json.loads(out) if c["variant"] == "gold")
    assert gold["missing_tests"] == [nosuch] and not gold["ok"]
